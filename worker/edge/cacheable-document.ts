/**
 * Public discovery documents (Server Card, AI catalog, Agent Card): JSON built
 * from `PUBLIC_ORIGIN`, serialised once per isolate, served with a strong ETag,
 * 304 on a matching `If-None-Match`, HEAD and a CORS preflight (02 §6, 04 §1).
 */
import type { DoorRequest } from "./pipeline";
import { sha256Hex } from "../lib/hash";

interface CacheableDocument {
  readonly body: string;
  /** `"<first 32 hex chars of SHA-256 of the body>"`, quotes included. */
  readonly etag: string;
}

/**
 * Memoises a document per origin. The cache holds immutable derived values
 * only (one entry per configured origin), so sharing it between requests
 * cannot leak anything from one request into another.
 */
export function memoizeDocument(build: (origin: string) => unknown): (origin: string) => Promise<CacheableDocument> {
  const cache = new Map<string, Promise<CacheableDocument>>();
  return (origin) => {
    let document = cache.get(origin);
    if (!document) {
      const body = JSON.stringify(build(origin), null, 2);
      document = sha256Hex(body).then((hash) => ({ body, etag: `"${hash.slice(0, 32)}"` }));
      cache.set(origin, document);
    }
    return document;
  };
}

export interface DocumentHeaders {
  contentType: string;
  cacheControl: string;
  /** `Access-Control-Allow-Headers` of the preflight answer. */
  preflightAllowHeaders: string;
}

/** GET, HEAD and OPTIONS of a discovery document. */
export function serveDocument(req: DoorRequest, document: CacheableDocument, options: DocumentHeaders): Response {
  if (req.request.method === "OPTIONS") {
    return new Response(null, {
      status: 204,
      headers: {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
        "Access-Control-Allow-Headers": options.preflightAllowHeaders,
        "Access-Control-Max-Age": "86400",
      },
    });
  }
  const headers = {
    "Content-Type": options.contentType,
    "Cache-Control": options.cacheControl,
    ETag: document.etag,
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "ETag",
  };
  if (etagMatches(req.request.headers.get("if-none-match"), document.etag)) {
    req.telemetry.annotate({ outcome: "not_modified" });
    return new Response(null, { status: 304, headers });
  }
  return new Response(req.request.method === "HEAD" ? null : document.body, { status: 200, headers });
}

/** `If-None-Match` comparison: a list of tags, `W/` prefixes ignored, `*` matches anything. */
function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(",").some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}
