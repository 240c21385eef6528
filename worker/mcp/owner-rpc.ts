/**
 * Core's side of the owner Service Binding contract (06 §5), called by the
 * thin `OwnerEntrypoint` of worker/entries/core.ts: `handleOwnerMcp`,
 * `spendOnce`, `isSpent`. The wire itself (shapes, decoding the request,
 * encoding the answer) is contracts/owner-wire.ts, shared with the gateway.
 *
 * Threat model: core never trusts the caller. RPC methods are not reachable
 * over HTTP, but core still treats every argument as untrusted input:
 * - with its own `OWNER_MCP_ENABLED` off every call is refused (404 / thrown),
 *   misconfigured secrets refuse with 503 — core's flags win over the
 *   gateway's;
 * - the token is verified again with core's own secrets and the same code as
 *   the gateway (MAC, `typ`, `alg`, issuer, audience, pinned GitHub id,
 *   epoch, expiry), and the claims the gateway sent must deep-equal what core
 *   verified, so a gateway bug or a forged claims object grants nothing;
 *   identity never comes from a header;
 * - the telemetry event (`owner_mcp_request`, role `core`) carries closed
 *   labels and counts only: no token, claim, id or text.
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import { MAX_POST_BODY_BYTES } from "../contracts/limits";
import type { Env } from "../config/env";
import { decodeOwnerMcpRequest, encodeOwnerMcpResponse, type OwnerMcpRpcAuth, type OwnerMcpRpcResponse } from "../contracts/owner-wire";
import type { DoorRequest } from "../edge/pipeline";
import { jsonRpcErrorResponse, textResponse, withHeaders } from "../edge/responses";
import { emitRequestEvent, startRequestTelemetry, type RequestTelemetry } from "../edge/telemetry";
import {
  d1SpentLedger,
  insufficientScopeResponse,
  openGate,
  renderBearerRejection,
  resolveOwner,
  resourceMetadataUrl,
  scopesOf,
  verifyAccessToken,
  type AccessClaims,
  type OwnerConfig,
  type OwnerKeys,
  type SpentKind,
} from "../owner/index";
import { MCP_HEADERS } from "./http";
import { serveOwnerMcp } from "./owner-server";

/** Where core's event says the request went when the forwarded URL is unusable. */
const FALLBACK_URL = "https://owner.invalid/mcp";

// ---------------------------------------------------------------- handleOwnerMcp

/** `handleOwnerMcp(req, auth)` (06 §5): exactly one `owner_mcp_request` event, whatever happens. */
export async function handleOwnerMcp(env: Env, ctx: ExecutionContext, req: unknown, auth: unknown): Promise<OwnerMcpRpcResponse> {
  const forwarded = decodeOwnerMcpRequest(req);
  const request = forwarded?.request ?? new Request(FALLBACK_URL, { method: "POST" });
  const url = new URL(request.url);
  const telemetry = startRequestTelemetry(request, url, "core", "owner_mcp_request");
  let response: Response | undefined;
  try {
    response =
      forwarded === null
        ? rejectMalformed(telemetry)
        : await serveVerified({ request, url, env, ctx, role: "core", telemetry, body: forwarded.body, allowedOrigin: null }, auth);
  } catch {
    // Never logged: an exception's message or stack can quote the owner's data or a token, and logs must stay content-free (01 §1).
    telemetry.annotate({ outcome: "internal_error" });
    response = withHeaders(textResponse(503, "Service temporarily unavailable"), MCP_HEADERS);
  }
  try {
    return await encodeOwnerMcpResponse(response, telemetry.outcome() === "stream_opened");
  } finally {
    emitRequestEvent(telemetry.finish(response.status), env);
  }
}

function rejectMalformed(telemetry: RequestTelemetry): Response {
  telemetry.annotate({ outcome: "bad_request" });
  return withHeaders(jsonRpcErrorResponse(400, -32600, "Invalid request"), MCP_HEADERS);
}

/** Gate, re-verification, then the owner server. */
async function serveVerified(req: DoorRequest, auth: unknown): Promise<Response> {
  // Addressed by the URL the client used (forwarded as is): the challenges below name that server (06 §3.6).
  const gate = await openGate(req.env, "core", "mcp", req.request.url);
  if (!gate.open) {
    req.telemetry.annotate({ outcome: gate.answer.outcome ?? "http_error" });
    return withHeaders(gate.answer.response, MCP_HEADERS);
  }
  if (req.body !== null && req.body.byteLength > MAX_POST_BODY_BYTES) {
    req.telemetry.annotate({ outcome: "body_too_large" });
    return withHeaders(textResponse(413, "Request body exceeds 24 KiB"), MCP_HEADERS);
  }
  const claims = await reverify(gate.config, gate.keys, auth);
  if (claims === null) {
    const rejection = renderBearerRejection({ kind: "invalid" }, gate.config)!;
    req.telemetry.annotate({ outcome: rejection.outcome });
    return withHeaders(rejection.response, MCP_HEADERS);
  }

  const authInfo: AuthInfo = {
    token: (auth as OwnerMcpRpcAuth).token,
    clientId: claims.cid,
    scopes: [...scopesOf(claims.scope)],
    expiresAt: claims.exp,
    resource: new URL(gate.config.audience),
    resourceMetadataUrl: resourceMetadataUrl(gate.config),
  };
  const response = await serveOwnerMcp(req, { authInfo, writeEnabled: gate.config.writeEnabled, ownerOrigin: gate.config.ownerOrigin });
  return response.status === 403 ? scopeChallenge(req, response, gate.config) : response;
}

/**
 * The verified claims of `auth.token` when they deep-equal `auth.claims` and
 * grant `owner.read`; null otherwise (06 §5: 401).
 */
async function reverify(config: OwnerConfig, keys: OwnerKeys, auth: unknown): Promise<AccessClaims | null> {
  if (typeof auth !== "object" || auth === null) return null;
  const { token, claims: sent } = auth as Record<string, unknown>;
  if (typeof token !== "string") return null;
  const claims = await verifyAccessToken(config, keys, token, Date.now());
  if (claims === null || !sameJson(claims, sent)) return null;
  return scopesOf(claims.scope).includes("owner.read") ? claims : null;
}

/** Structural equality of JSON values (key order ignored); anything else is unequal. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  }
  if (Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  const recordA = a as Record<string, unknown>;
  const recordB = b as Record<string, unknown>;
  return keysA.every((key) => Object.hasOwn(recordB, key) && sameJson(recordA[key], recordB[key]));
}

/**
 * The SDK's per-tool scope challenge (06 §6) reworded as the pinned 403 of
 * 06 §4 / §3.6 (`error`, then `scope`, then `resource_metadata`; body
 * `{"error":"insufficient_scope"}`), naming the scopes the SDK asked for.
 * Nothing ran: the SDK answers before the tool is called.
 */
function scopeChallenge(req: DoorRequest, response: Response, config: OwnerConfig): Response {
  const header = response.headers.get("www-authenticate") ?? "";
  if (!/error="insufficient_scope"/.test(header)) return response;
  const scope = /scope="([^"]*)"/.exec(header)?.[1] ?? "";
  const needed = scopesOf(scope);
  const rejection = insufficientScopeResponse(config, needed.length > 0 ? needed : ["owner.read", "owner.write"]);
  req.telemetry.annotate({ outcome: rejection.outcome, tool_result: "insufficient_scope" });
  return withHeaders(rejection.response, MCP_HEADERS);
}

// ---------------------------------------------------------------- spendOnce / isSpent

const SPENT_KINDS: readonly SpentKind[] = ["code", "refresh", "family"];
/** Ledger ids are our own random jti values or `family:<fam>`; anything longer or stranger is refused. */
const SPENT_ID = /^(?:family:)?[A-Za-z0-9_-]{16,128}$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;

/** Why core refused a ledger call; a fixed message, never an argument (the caller never logs it either). */
export class OwnerLedgerRefused extends Error {
  constructor() {
    super("owner ledger refused");
    this.name = "OwnerLedgerRefused";
  }
}

/** Core's ledger, only while the owner MCP is on and configured here (06 §1, §5). */
function ledger(env: Env) {
  if (resolveOwner(env, "core").kind !== "ready" || env.CONTACTS === undefined) throw new OwnerLedgerRefused();
  return d1SpentLedger(env.CONTACTS);
}

/** `spendOnce(id, kind, expiresAt)` (06 §5): true only for the first caller. */
export async function ownerSpendOnce(env: Env, id: unknown, kind: unknown, expiresAt: unknown): Promise<boolean> {
  const spent = ledger(env);
  if (typeof id !== "string" || !SPENT_ID.test(id)) throw new OwnerLedgerRefused();
  if (typeof kind !== "string" || !(SPENT_KINDS as readonly string[]).includes(kind)) throw new OwnerLedgerRefused();
  if (typeof expiresAt !== "string" || !ISO_INSTANT.test(expiresAt) || Number.isNaN(Date.parse(expiresAt))) throw new OwnerLedgerRefused();
  return spent.spendOnce(id, kind as SpentKind, expiresAt);
}

/** `isSpent(id)` (06 §5). */
export async function ownerIsSpent(env: Env, id: unknown): Promise<boolean> {
  const spent = ledger(env);
  if (typeof id !== "string" || !SPENT_ID.test(id)) throw new OwnerLedgerRefused();
  return spent.isSpent(id);
}
