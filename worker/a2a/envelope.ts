/**
 * Steps 2–6 of the POST processing order (04 §3): media type, JSON parse,
 * batch, envelope, notification. Each check is a small total function that
 * returns a discriminated union, so the order lives in one place (bridge.ts)
 * and every branch is visible to the type checker.
 */
import { isRecord } from "../contracts/guards";
import { a2aMethodLabel } from "./labels";
import type { A2aMethodLabel } from "../contracts/events";

export type JsonRpcId = string | number | null;
export type JsonObject = Readonly<Record<string, unknown>>;

/** `application/<subtype>+json` with an RFC 6838 restricted-name subtype. */
const STRUCTURED_JSON_MEDIA_TYPE = /^application\/[a-z0-9!#$&^_.+-]+\+json$/;

/**
 * Step 2. Absent, `application/json` or any `application/<x>+json`, with
 * parameters and in any case. An empty header carries no media type at all,
 * so it counts as absent rather than as a wrong type.
 */
export function isAcceptedContentType(header: string | null): boolean {
  if (header === null || header.trim() === "") return true;
  const mediaType = (header.split(";", 1)[0] ?? "").trim().toLowerCase();
  return mediaType === "application/json" || STRUCTURED_JSON_MEDIA_TYPE.test(mediaType);
}

type ParsedBody = { ok: true; value: unknown } | { ok: false };

/**
 * Step 3. The bytes must be valid UTF-8 holding one JSON text. Invalid UTF-8
 * is a parse error too (rather than silently becoming U+FFFD), so what the
 * bridge reads is exactly what the client sent.
 */
export function parseJsonBody(bytes: Uint8Array | null): ParsedBody {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes ?? new Uint8Array(0));
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    // The parser's message quotes the body; it is dropped, never logged or returned.
    return { ok: false };
  }
}

/** A valid single request (step 5 passed). */
export interface RpcRequest {
  readonly method: string;
  readonly params: JsonObject;
}

type EnvelopeCheck =
  | { readonly kind: "invalid"; readonly id: JsonRpcId; readonly methodLabel: A2aMethodLabel | null }
  | { readonly kind: "notification"; readonly methodLabel: A2aMethodLabel }
  | { readonly kind: "call"; readonly id: JsonRpcId; readonly request: RpcRequest; readonly methodLabel: A2aMethodLabel };

/**
 * Steps 5 and 6 for a parsed, non-array value. The method label follows the
 * MCP rule (01 §9.2): a string `method` on a single object is labelled even
 * when the envelope is otherwise invalid; anything else is null (unparsed).
 */
export function checkEnvelope(value: unknown): EnvelopeCheck {
  if (!isJsonObject(value)) return { kind: "invalid", id: null, methodLabel: null };
  const hasId = Object.hasOwn(value, "id");
  const idOk = !hasId || isValidId(value.id);
  const id = hasId && isValidId(value.id) ? value.id : null;
  const paramsOk = !Object.hasOwn(value, "params") || isJsonObject(value.params);
  if (typeof value.method !== "string") return { kind: "invalid", id, methodLabel: null };

  const request: RpcRequest = { method: value.method, params: isJsonObject(value.params) ? value.params : {} };
  const methodLabel = a2aMethodLabel(value.method);
  if (value.jsonrpc !== "2.0" || !idOk || !paramsOk) return { kind: "invalid", id, methodLabel };
  return hasId ? { kind: "call", id, request, methodLabel } : { kind: "notification", methodLabel };
}

/** A JSON-RPC id the bridge echoes: a string, an integer or null (04 §3 step 5). */
function isValidId(id: unknown): id is JsonRpcId {
  return id === null || typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
}

/** The contracts' `isRecord`, under the bridge's name for a JSON object. */
export const isJsonObject: (value: unknown) => value is JsonObject = isRecord;
