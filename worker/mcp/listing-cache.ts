/**
 * The public server's answers that depend on the serving alone, kept per
 * isolate (issue 21, 02 §3): `tools/list`, and a call of a tool the serving
 * names in `McpServing.keptCalls` (`about_magnt`: the profile).
 *
 * Why: such an answer is the same every time for the same request, yet
 * answering it builds a server, registers every tool, lists (or runs) and
 * validates, serialises about 5 KB, then the door reads that answer back —
 * most of what these requests cost, and `tools/list` is the most frequent
 * request there is.
 *
 * What an answer depends on, and so what the key holds: the serving (the tool
 * set, the origin, whether storage is bound: `McpServing.answerKey`), the parsed body with its `id`
 * reduced to its kind (the SDK is handed the parsed body, never the bytes),
 * the request method and the request headers the SDK reads (`VARY_HEADERS`;
 * `test/node/listing-cache-headers.test.ts` fails when the SDK reads one more). The
 * `id` itself only appears at the end of the answer, where JSON.stringify puts
 * the `id` member the SDK writes last: an answer is kept only when it ends in
 * exactly that member, and a later request's answer is the kept bytes with its
 * own id in that place.
 *
 * Only a successful answer (HTTP 200, a JSON-RPC result) is kept: every check
 * the SDK makes is made again for a request it has not answered under that
 * key, and a rejected request is never answered from here. Not for a server
 * served with an identity (the owner's): it has no `answerKey`.
 *
 * Bounds: at most `MAX_ENTRIES` answers, the oldest dropped first; a key longer
 * than `MAX_KEY_LENGTH` is never kept (a listing request is a few hundred bytes).
 * A visitor who sends many distinct listings only makes others miss, which is
 * the uncached path, never a different answer.
 */
import { isRecord } from "../contracts/guards";
import type { EventAnnotations } from "../contracts/events";

/** Request headers the SDK reads before it answers a `tools/list` (either lane). */
export const VARY_HEADERS = ["content-type", "accept", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "last-event-id"] as const;

const MAX_ENTRIES = 32;
const MAX_KEY_LENGTH = 4096;

/** A kept answer: always the SDK's HTTP 200 with a JSON-RPC result. */
interface Kept {
  /** The SDK's own headers (the door's are added per request: they depend on its origin). */
  readonly headers: readonly (readonly [string, string])[];
  /** The answer before and after its id. */
  readonly before: string;
  readonly after: string;
  /** A kept tool call's own telemetry fields (the outcome its tool reported), recorded again on every answer. */
  readonly telemetry: EventAnnotations | null;
}

/** A listing request this cache may answer: its key and its id. */
export interface ListingRequest {
  readonly key: string;
  readonly id: string | number;
}

const kept = new Map<string, Kept>();

/**
 * The key of a `tools/list` request or of a call of one of `keptCalls`, or
 * null when it is not one this cache handles (another method or tool, a batch,
 * an id the SDK would refuse, a long body).
 */
export function listingRequest(answerKey: string, keptCalls: readonly string[], request: Request, body: unknown): ListingRequest | null {
  if (!isRecord(body)) return null;
  const keptKind = body.method === "tools/list" || (body.method === "tools/call" && isRecord(body.params) && typeof body.params.name === "string" && keptCalls.includes(body.params.name));
  if (!keptKind) return null;
  const id = body.id;
  if (typeof id !== "string" && !(typeof id === "number" && Number.isSafeInteger(id))) return null;
  const idKind = typeof id === "string" ? "string" : "number";
  let key = `${answerKey}\n${request.method}`;
  for (const name of VARY_HEADERS) key += `\n${request.headers.get(name) ?? ""}`;
  key += `\n${JSON.stringify(body, function (this: unknown, member, value: unknown) {
    return this === body && member === "id" ? idKind : value;
  })}`;
  return key.length <= MAX_KEY_LENGTH ? { key, id } : null;
}

/** The kept answer for `listing`, as the SDK would have sent it for its id, with `addHeaders`; or null. */
export function recallListing(listing: ListingRequest, addHeaders: Record<string, string>): { response: Response; telemetry: EventAnnotations | null } | null {
  const entry = kept.get(listing.key);
  if (entry === undefined) return null;
  const headers = new Headers(entry.headers as [string, string][]);
  for (const [name, value] of Object.entries(addHeaders)) headers.set(name, value);
  return { response: new Response(entry.before + JSON.stringify(listing.id) + entry.after, { status: 200, headers }), telemetry: entry.telemetry };
}

/** Keeps the SDK's successful answer to `listing` when its id is where the splice expects it. */
export function keepListing(listing: ListingRequest, status: number, headers: Headers, text: string, telemetry: EventAnnotations | null): void {
  // A replacement character would mean bytes that did not decode as sent; such an answer is never re-encoded.
  if (status !== 200 || text.includes("\uFFFD")) return;
  const id = JSON.stringify(listing.id);
  // The JSON body ends with the id member; an SSE event adds its blank line.
  const after = text.endsWith(`"id":${id}}`) ? "}" : text.endsWith(`"id":${id}}\n\n`) ? "}\n\n" : null;
  if (after === null) return;
  if (kept.size >= MAX_ENTRIES) kept.delete(kept.keys().next().value as string);
  kept.set(listing.key, { headers: [...headers], before: text.slice(0, text.length - after.length - id.length), after, telemetry });
}
