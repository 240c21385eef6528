/**
 * Gateway → core forwarding of `POST /mcp` (01 §2.3).
 *
 * Threat model: the gateway faces the internet and core trusts the few
 * `x-magnt-*` headers it honours in the core role (edge facts, the rate-limit
 * key). So every incoming `x-magnt-*` and `cf-*` header is dropped, whatever
 * its value, before the gateway adds its own; the client address itself never
 * leaves the gateway (only its salted daily key does), and no header ever
 * carries identity. Core's answer is returned unchanged, its body unread.
 */
import type { DoorRequest } from "./pipeline";
import { rateLimitKeyFor } from "./rate-limit";

/** The request core receives: same URL, method and body bytes; cleaned and annotated headers. */
export async function forwardedRequest(req: DoorRequest): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of req.request.headers) {
    const lower = name.toLowerCase();
    if (lower.startsWith("x-magnt-") || lower.startsWith("cf-")) continue;
    headers.append(name, value);
  }
  const cf = (req.request as { cf?: Record<string, unknown> }).cf ?? {};
  const fact = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");
  headers.set("x-magnt-forwarded", "1");
  headers.set("x-magnt-edge-country", fact(cf.country));
  headers.set("x-magnt-edge-city", fact(cf.city));
  headers.set("x-magnt-edge-colo", fact(cf.colo));
  headers.set("x-magnt-edge-asn", fact(cf.asn));
  headers.set("x-magnt-client-key", await rateLimitKeyFor(req.request, req.role));
  return new Request(req.request.url, {
    method: req.request.method,
    headers,
    ...(req.body !== null ? { body: req.body } : {}),
  });
}
