/**
 * What every owner HTTP handler shares: its input, its dependencies, its
 * answer, and the gate that runs before any of them (06 §1).
 *
 * Handlers are `(input, env, deps) => Promise<OwnerAnswer>`. `input` is the
 * part of the pipeline's `DoorRequest` they read (the request and its already
 * buffered POST body), so a route table can pass its `DoorRequest` as is. The
 * answer carries the telemetry facts as values (`outcome`, `step`); handlers
 * never log.
 */
import type { Outcome } from "../contracts/events";
import { readBodyWithinLimit } from "../edge/body-limit";
import { jsonResponse, notFound, serviceUnavailable } from "../edge/responses";
import { addressedBy, resolveOwner, type OwnerConfig, type OwnerEnv, type OwnerRole } from "./config";
import { deriveOwnerKeys, type OwnerKeys } from "./oauth/keys";

/** The request as the pipeline hands it over: guards passed, POST body buffered (≤ 24 KiB). */
export interface OwnerInput {
  readonly request: Request;
  /** The buffered POST body; null for other methods. */
  readonly body: Uint8Array | null;
}

/** Single-use ledger kept by core (06 §5: `spendOnce`, `isSpent`; 09 `owner_oauth_spent`). */
export type SpentKind = "code" | "refresh" | "family";

export interface SpentLedger {
  /** True only for the first caller with `id`; `expiresAt` is an ISO timestamp. May throw when core is unreachable. */
  spendOnce(id: string, kind: SpentKind, expiresAt: string): Promise<boolean>;
  isSpent(id: string): Promise<boolean>;
}

export interface OwnerDeps {
  /** Milliseconds since the epoch; injectable so expiry is testable without waiting. */
  readonly now: () => number;
  readonly spent: SpentLedger;
}

/** `owner_step` of the owner gateway's `http` event (06 §9). */
export type OwnerStep =
  | "metadata"
  | "register"
  | "authorize"
  | "consent"
  | "github_callback"
  | "token_code"
  | "token_refresh"
  | "mcp"
  | "other";

export interface OwnerAnswer {
  readonly response: Response;
  /** Null: the pipeline's status default (`http_success` / `http_error`) applies. */
  readonly outcome: Outcome | null;
  readonly step: OwnerStep;
  /** Set on owner `/mcp` once the request was admitted and handed to core (`forwarded_to_core`, 06 §9). */
  readonly forwardedToCore?: true;
}

export type OwnerHandler = (input: OwnerInput, env: OwnerEnv, deps: OwnerDeps) => Promise<OwnerAnswer>;

/** What a handler body receives once the gate let it through. */
export interface OwnerContext {
  readonly config: OwnerConfig;
  readonly keys: OwnerKeys;
  readonly deps: OwnerDeps;
}

export type OwnerGate =
  | { readonly open: true; readonly config: OwnerConfig; readonly keys: OwnerKeys }
  | { readonly open: false; readonly answer: OwnerAnswer };

/**
 * The gate before every owner handler: off → 404 `Not found`
 * (`owner_disabled`), misconfigured → 503 (`owner_misconfigured`), exactly as
 * for a path that does not exist or a Worker that is down, so an unconfigured
 * gateway reveals nothing and never issues or accepts a token. Open, the
 * configuration is the one `requestUrl` addressed (`addressedBy`: another
 * loopback name of a loopback `OWNER_ORIGIN`, else `OWNER_ORIGIN` itself).
 */
export async function openGate(env: OwnerEnv, role: OwnerRole, step: OwnerStep, requestUrl: string): Promise<OwnerGate> {
  const state = resolveOwner(env, role);
  if (state.kind !== "ready") return { open: false, answer: closedAnswer(state.kind, step) };
  return { open: true, config: addressedBy(state.config, requestUrl), keys: await deriveOwnerKeys(state.config.signingKey) };
}

/**
 * The gate's answer without opening it: the 404 / 503 when the owner MCP is
 * off or misconfigured for `role`, null when it is ready. Synchronous (no
 * keys are derived), for the answers that need no configuration: 405, the
 * preflight and paths that do not exist.
 */
export function closedGate(env: OwnerEnv, role: OwnerRole, step: OwnerStep): OwnerAnswer | null {
  const state = resolveOwner(env, role);
  return state.kind === "ready" ? null : closedAnswer(state.kind, step);
}

function closedAnswer(kind: "disabled" | "misconfigured", step: OwnerStep): OwnerAnswer {
  return kind === "disabled"
    ? { response: notFound(), outcome: "owner_disabled", step }
    : { response: serviceUnavailable(), outcome: "owner_misconfigured", step };
}

/** Runs `body` behind the gate, with the configuration `input`'s request addressed. */
export async function gated(
  input: OwnerInput,
  env: OwnerEnv,
  role: OwnerRole,
  step: OwnerStep,
  deps: OwnerDeps,
  body: (context: OwnerContext) => Promise<OwnerAnswer>,
): Promise<OwnerAnswer> {
  const gate = await openGate(env, role, step, input.request.url);
  return gate.open ? body({ config: gate.config, keys: gate.keys, deps }) : gate.answer;
}

/** CORS for the credential-free OAuth endpoints (06 §2). */
export const ANY_ORIGIN = { "Access-Control-Allow-Origin": "*" } as const;

/** An OAuth JSON error (RFC 6749 §5.2, RFC 7591 §3.2.2). */
export function oauthJsonError(status: number, error: string, description: string, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, { error, error_description: description }, Object.assign({}, ANY_ORIGIN, headers));
}

/**
 * Builds the input of a handler from a plain `Request` (tests, or a caller
 * outside the pipeline): reads a POST body within the 24 KiB limit; null when
 * it is larger.
 */
export async function ownerInput(request: Request): Promise<OwnerInput | null> {
  if (request.method !== "POST") return { request, body: null };
  const read = await readBodyWithinLimit(request);
  return read.ok ? { request, body: read.bytes } : null;
}

/** The body as UTF-8 text ("" when there is none). */
export function bodyText(input: OwnerInput): string {
  return input.body === null ? "" : new TextDecoder().decode(input.body);
}

/**
 * Parses form-encoded parameters; null when a parameter appears twice (RFC
 * 6749 §3.1: parameters must not be repeated, and an ambiguous request is
 * never guessed at).
 */
export function singleParams(params: URLSearchParams): Map<string, string> | null {
  const map = new Map<string, string>();
  for (const [name, value] of params) {
    if (map.has(name)) return null;
    map.set(name, value);
  }
  return map;
}
