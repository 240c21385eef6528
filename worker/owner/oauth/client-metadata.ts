/**
 * Client ID Metadata Documents (06 §3.7; draft-ietf-oauth-client-id-metadata-document,
 * the MCP authorization spec's preferred registration): a client whose
 * `client_id` is an `https` URL on an origin the owner listed in
 * `OWNER_CLIENT_METADATA_ORIGINS` is described by the JSON document at that
 * URL instead of by a registration.
 *
 * Threat model:
 * - a fetch a stranger chooses (SSRF, a slow or endless answer): only a URL on
 *   a listed origin, written exactly as the URL parser serialises it (so no
 *   dot segment, fragment, user info, upper-case host or default port slips
 *   through), is fetched, and only through edge/outbound.ts — no redirect,
 *   5 KiB, 3 s. With the setting empty nothing is ever fetched and an `https`
 *   `client_id` is refused as before;
 * - a document claiming to be another client: its `client_id` must equal the
 *   URL character for character; it may describe only a public client
 *   (`token_endpoint_auth_method` `none`, no secret) using the grant and
 *   response types this server supports;
 * - codes for a stranger: the `redirect_uri` must be listed in the document
 *   and pass the registration rule (redirect-uris.ts) at every authorization;
 * - a page that lies: what the consent page calls verified is the document's
 *   host — the document was served by that host over https —, while the
 *   `client_name` inside is still the client's own choice, cleaned like a
 *   registered name (client-name.ts) and shown as one;
 * - a stale or flooded cache: per isolate, at most 32 documents for at most
 *   10 minutes (a shorter `max-age` wins; `no-store`, `no-cache` or no
 *   `max-age` → not kept); a failure is never cached.
 *
 * `parseClientDocument` decides; `loadClientDocument` fetches and caches.
 */
import { getClientMetadataCapped } from "../../edge/outbound";
import type { ClientMetadataConfig } from "../config";
import { CLIENT_NAME_MAX, clientDisplayName } from "./client-name";
import { CLIENT_ID_MAX } from "./objects";
import { isSubsetOf, SUPPORTED_GRANT_TYPES, SUPPORTED_RESPONSE_TYPES } from "./register";

/** Documents kept per isolate, and the longest any is kept (06 §3.7). */
export const DOCUMENT_CACHE_ENTRIES = 32;
export const DOCUMENT_CACHE_MAX_SECONDS = 600;

/** What a valid document says about its client. */
export interface ClientDocument {
  readonly redirectUris: readonly string[];
  /** Cleaned of display controls (`clientDisplayName`); `MCP client` when the document names none. */
  readonly clientName: string;
}

/** Why a document could not be used; each is named on the error page. */
export type DocumentProblem =
  | "unreachable"
  | "redirected"
  | "too_large"
  | "not_ok"
  | "not_json"
  | "client_id_mismatch"
  | "invalid_redirect_uris"
  | "not_public"
  | "unsupported_types"
  | "invalid_client_name";

export const DOCUMENT_PROBLEM_TEXT: Readonly<Record<DocumentProblem, string>> = {
  unreachable: "It could not be fetched within 3 seconds.",
  redirected: "Its URL answered with a redirect; redirects are not followed.",
  too_large: "It is larger than 5 KiB.",
  not_ok: "Its URL did not answer 200 OK.",
  not_json: "It is not a JSON object.",
  client_id_mismatch: "Its client_id is not exactly the URL it was fetched from.",
  invalid_redirect_uris: "Its redirect_uris are missing or not a list of strings.",
  not_public: "It must describe a public client: token_endpoint_auth_method none and no client secret.",
  unsupported_types: "Its grant_types or response_types name something this server does not support.",
  invalid_client_name: `Its client_name is not a string of at most ${CLIENT_NAME_MAX} characters.`,
};

export type DocumentResult = { readonly ok: true; readonly document: ClientDocument } | { readonly ok: false; readonly problem: DocumentProblem };

/**
 * The document URL a `client_id` names when it may be one here: `https`, a
 * path other than `/`, no fragment or user info, at most 2048 characters,
 * exactly as the URL parser serialises it, on a listed origin. Null otherwise
 * (the caller refuses it as an unknown client).
 */
export function metadataDocumentUrl(clientId: string, config: ClientMetadataConfig): URL | null {
  if (config.origins.size === 0 || clientId.length > CLIENT_ID_MAX || !clientId.startsWith("https://")) return null;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return null;
  }
  if (url.href !== clientId || url.pathname === "/" || url.hash !== "" || url.username !== "" || url.password !== "") return null;
  return config.origins.has(url.origin) ? url : null;
}

/** Decides whether `text` is a usable document for `clientId` (the draft's §4 rules, 06 §3.7). */
export function parseClientDocument(text: string, clientId: string): DocumentResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not_json" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, problem: "not_json" };
  const fields = value as Record<string, unknown>;
  if (fields.client_id !== clientId) return { ok: false, problem: "client_id_mismatch" };

  const uris = fields.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((uri) => typeof uri === "string")) {
    return { ok: false, problem: "invalid_redirect_uris" };
  }
  // RFC 7591's default method is client_secret_basic, which a document cannot use (it has no shared secret): "none" must be said.
  if (fields.token_endpoint_auth_method !== "none" || "client_secret" in fields || "client_secret_expires_at" in fields) {
    return { ok: false, problem: "not_public" };
  }
  if (!isSubsetOf(fields.grant_types, SUPPORTED_GRANT_TYPES) || !isSubsetOf(fields.response_types, SUPPORTED_RESPONSE_TYPES)) {
    return { ok: false, problem: "unsupported_types" };
  }
  const name = fields.client_name;
  if (name !== undefined && typeof name !== "string") return { ok: false, problem: "invalid_client_name" };
  const clientName = clientDisplayName(name ?? "");
  if ([...clientName].length > CLIENT_NAME_MAX) return { ok: false, problem: "invalid_client_name" };
  return { ok: true, document: { redirectUris: uris as string[], clientName } };
}

interface CachedDocument {
  readonly document: ClientDocument;
  readonly expiresAtMs: number;
}

/** Per isolate: a Worker isolate serves many requests, and one authorization reads the document more than once (page, reload). */
const cache = new Map<string, CachedDocument>();

/**
 * How long an answer may be kept, in seconds: its `max-age`, at most
 * `DOCUMENT_CACHE_MAX_SECONDS`; 0 (not kept) with `no-store`, `no-cache` or no
 * `max-age`.
 */
export function cacheSeconds(cacheControl: string | null): number {
  if (cacheControl === null || /(?:^|,)\s*(?:no-store|no-cache)\b/i.test(cacheControl)) return 0;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d+)/i.exec(cacheControl);
  return maxAge === null ? 0 : Math.min(Number(maxAge[1]), DOCUMENT_CACHE_MAX_SECONDS);
}

/** The document at `url` (already allowed by `metadataDocumentUrl`), from the cache or fetched through edge/outbound.ts. */
export async function loadClientDocument(url: URL, config: ClientMetadataConfig, nowMs: number): Promise<DocumentResult> {
  const clientId = url.href;
  const cached = cache.get(clientId);
  if (cached !== undefined && cached.expiresAtMs > nowMs) return { ok: true, document: cached.document };
  cache.delete(clientId);

  const answer = await getClientMetadataCapped(clientId, config.fetchOrigin);
  if (!answer.ok) return { ok: false, problem: answer.kind === "redirect" ? "redirected" : "unreachable" };
  if (answer.status !== 200) return { ok: false, problem: "not_ok" };
  // Over the cap, or a body that could not be read within the time limit's stream.
  if (answer.body === null) return { ok: false, problem: "too_large" };
  const result = parseClientDocument(answer.body, clientId);
  if (!result.ok) return result;

  const seconds = cacheSeconds(answer.headers.get("cache-control"));
  if (seconds > 0) {
    if (cache.size >= DOCUMENT_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(clientId, { document: result.document, expiresAtMs: nowMs + seconds * 1000 });
  }
  return result;
}
