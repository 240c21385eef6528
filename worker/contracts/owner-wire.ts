/**
 * The owner's Service Binding contract (06 §5), both ends in one module: the
 * owner gateway encodes the `/mcp` request and decodes core's answer; core
 * decodes the request and encodes its answer. Only structured-clone values
 * cross — no `Request`, no `Response` — so the shapes below are the wire.
 *
 * Threat model: each end decodes what it receives as untrusted input.
 * - The gateway encodes only a scrubbed request (forwarding.ts: no `x-magnt-*`,
 *   no `cf-*`, its own edge facts) without `Authorization` or `Cookie`: the
 *   token travels in `auth` alone, and core verifies it again.
 * - Core decodes anything but the exact request shape to null (its 400).
 * - The gateway decodes a status outside 200–599, or an answer of another
 *   shape, as unusable (its 503 `core_unavailable`); a null-body status never
 *   carries a body, whatever core sent.
 * Nothing here reads a body, logs, or carries a reason.
 */
import type { Outcome } from "./events";
import { scrubbedHeaders } from "./forwarding";

/** `handleOwnerMcp`'s request (06 §5): structured-clone values only, no `Request` object. */
export interface OwnerMcpRpcRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: [string, string][];
  /** At most 24 576 bytes; null when there is none. */
  readonly body: ArrayBuffer | null;
}

/** The token the owner gateway verified and the claims it read from it; core verifies both again (06 §5). */
export interface OwnerMcpRpcAuth {
  readonly token: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** `handleOwnerMcp`'s answer: a buffered body for an answer that ends, the unread stream otherwise (06 §5). */
export interface OwnerMcpRpcResponse {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: ArrayBuffer | ReadableStream<Uint8Array> | null;
}

/** Core's named entrypoint `OwnerEntrypoint` as the owner gateway's `OWNER_CORE` binding sees it (06 §5). */
export interface OwnerCoreBinding {
  handleOwnerMcp(req: OwnerMcpRpcRequest, auth: OwnerMcpRpcAuth): Promise<OwnerMcpRpcResponse>;
  /** True only for the first caller with `id`; throws when core refuses (owner off or misconfigured) or cannot store. */
  spendOnce(id: string, kind: "code" | "refresh" | "family", expiresAt: string): Promise<boolean>;
  isSpent(id: string): Promise<boolean>;
}

/** Request headers that never cross besides the scrubbed ones: identity travels only in `auth`. */
export const OWNER_WIRE_DROPPED_HEADERS: readonly string[] = ["authorization", "cookie"];

/** Fetch's null-body statuses: a `Response` with one of them cannot carry a body. */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/** Headers as the wire carries them, `[name, value][]`; null for anything else. */
function stringPairs(value: unknown): [string, string][] | null {
  if (!Array.isArray(value)) return null;
  const pairs: [string, string][] = [];
  for (const pair of value) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string") return null;
    pairs.push([pair[0], pair[1]]);
  }
  return pairs;
}

// ---------------------------------------------------------------- the owner gateway's end

/** The request of 06 §5 for `request`, whose buffered POST body is `body`. */
export function encodeOwnerMcpRequest(request: Request, body: Uint8Array | null): OwnerMcpRpcRequest {
  const headers = [...scrubbedHeaders(request, OWNER_WIRE_DROPPED_HEADERS)] as [string, string][];
  const copy = body === null ? null : (body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer);
  return { method: "POST", url: request.url, headers, body: copy };
}

/** Core's answer as the gateway uses it, or `ok: false` when it is unusable (06 §5: 503 `core_unavailable`). */
export type OwnerCoreAnswer =
  | {
      readonly ok: true;
      readonly response: Response;
      /** The gateway event's outcome for core's refusals; null: the status default applies. */
      readonly outcome: Outcome | null;
    }
  | { readonly ok: false };

/** What core's refusals mean in the gateway's event (06 §5, §9). */
const CORE_STATUS_OUTCOMES: ReadonlyMap<number, Outcome> = new Map([
  [401, "token_rejected"],
  [403, "scope_rejected"],
  [404, "owner_disabled"],
]);

/** Decodes `handleOwnerMcp`'s answer; total: anything but the contract's shape is `ok: false`. */
export function decodeOwnerMcpResponse(value: unknown): OwnerCoreAnswer {
  if (typeof value !== "object" || value === null) return { ok: false };
  const { status, headers, body } = value as Record<string, unknown>;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 200 || status > 599) return { ok: false };
  if (!(body === null || body instanceof ArrayBuffer || body instanceof ReadableStream)) return { ok: false };
  const pairs = stringPairs(headers);
  if (pairs === null) return { ok: false };
  let response: Response;
  try {
    response = new Response(NULL_BODY_STATUSES.has(status) ? null : body, { status, headers: pairs });
  } catch {
    return { ok: false };
  }
  return { ok: true, response, outcome: CORE_STATUS_OUTCOMES.get(status) ?? null };
}

// ---------------------------------------------------------------- core's end

/** The forwarded request as core serves it: a body-less `Request` and the buffered body. */
export interface DecodedOwnerMcpRequest {
  readonly request: Request;
  readonly body: Uint8Array | null;
}

/** Decodes the request of 06 §5; null when it is not that shape (method POST, an http(s) URL, string pairs, an `ArrayBuffer` or null). */
export function decodeOwnerMcpRequest(value: unknown): DecodedOwnerMcpRequest | null {
  if (typeof value !== "object" || value === null) return null;
  const { method, url, headers, body } = value as Record<string, unknown>;
  if (method !== "POST" || typeof url !== "string") return null;
  if (!(body === null || body instanceof ArrayBuffer)) return null;
  const pairs = stringPairs(headers);
  if (pairs === null) return null;
  let request: Request;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
    request = new Request(parsed.href, { method: "POST", headers: pairs });
  } catch {
    return null;
  }
  return { request, body: body === null ? null : new Uint8Array(body) };
}

/** Core's answer for the wire: the body buffered for an answer that ends, passed through unread when `stream`. */
export async function encodeOwnerMcpResponse(response: Response, stream: boolean): Promise<OwnerMcpRpcResponse> {
  const headers = [...response.headers] as [string, string][];
  if (response.body === null) return { status: response.status, headers, body: null };
  if (stream) return { status: response.status, headers, body: response.body };
  return { status: response.status, headers, body: await response.arrayBuffer() };
}
