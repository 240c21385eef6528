/**
 * Gateway → core forwarding of `POST /mcp` (01 §2.3).
 *
 * Threat model: the gateway faces the internet and core trusts the few
 * `x-magnt-*` headers it honours in the core role (edge facts, the rate-limit
 * key). So the request crosses only through the one scrub of
 * contracts/forwarding.ts (every incoming `x-magnt-*` and `cf-*` header
 * dropped, whatever its value; this edge's facts set), and then gets the
 * marker and the salted client key; the client address itself never leaves
 * the gateway, and no header ever carries identity. Core's answer is returned
 * unchanged, its body unread.
 */
import { FORWARDING_HEADERS, scrubbedHeaders } from "../contracts/forwarding";
import type { DoorRequest } from "./pipeline";
import { rateLimitKeyFor } from "./rate-limit";

/** The request core receives: same URL, method and body bytes; cleaned and annotated headers. */
export async function forwardedRequest(req: DoorRequest): Promise<Request> {
  const headers = scrubbedHeaders(req.request);
  headers.set(FORWARDING_HEADERS.forwarded, "1");
  headers.set(FORWARDING_HEADERS.clientKey, await rateLimitKeyFor(req.request, req.role));
  return new Request(req.request.url, {
    method: req.request.method,
    headers,
    ...(req.body !== null ? { body: req.body } : {}),
  });
}
