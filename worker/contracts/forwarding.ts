/**
 * What a public Worker tells core when it hands a request over (01 §2.3,
 * 06 §5): the header names, written out in full so a search for any of them
 * lands here, and the one scrub every hand-over runs first.
 *
 * Threat model: core has no route of its own and honours these names in the
 * `core` role only (the edge facts for its event, the salted client key for
 * the rate limit). An internet client can send any of them, so every inbound
 * header whose name starts with `x-magnt-` or `cf-` is dropped, whatever its
 * value, before the gateway sets its own. The client address is a `cf-`
 * header and never crosses; only the gateway's salted daily key of it does.
 * Nothing here carries identity: the owner's token travels in the RPC's
 * `auth` argument only (owner-wire.ts).
 */

/** Every header name a gateway sets for core; core reads exactly these. */
export const FORWARDING_HEADERS = {
  /** `1` on a public `/mcp` request the gateway forwarded. */
  forwarded: "x-magnt-forwarded",
  /** The rate-limit key of the client address (01 §14); the address itself never leaves the gateway. */
  clientKey: "x-magnt-client-key",
  /** The edge facts of `request.cf`, `""` when absent: core has no `cf` of its own. */
  edge: {
    country: "x-magnt-edge-country",
    city: "x-magnt-edge-city",
    colo: "x-magnt-edge-colo",
    asn: "x-magnt-edge-asn",
  },
} as const;

/** The `request.cf` fields forwarded as edge facts. */
export type EdgeFact = keyof typeof FORWARDING_HEADERS.edge;

/** Inbound header names starting with one of these never reach core. */
export const SCRUBBED_HEADER_PREFIXES: readonly string[] = ["x-magnt-", "cf-"];

/** An edge fact as a header value: strings and numbers as text, anything else `""`. */
function factValue(value: unknown): string {
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}

/**
 * The headers of `request` as core may see them: every `x-magnt-*` and `cf-*`
 * header dropped, and every name in `alsoDrop` (lower case; the owner gateway
 * drops the credentials), then this edge's facts set from `request.cf`. The
 * caller adds what only it knows (the public gateway: the marker and the
 * client key).
 */
export function scrubbedHeaders(request: Request, alsoDrop: readonly string[] = []): Headers {
  const headers = new Headers();
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (SCRUBBED_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix)) || alsoDrop.includes(lower)) continue;
    headers.append(name, value);
  }
  const cf = (request as { cf?: Record<string, unknown> }).cf ?? {};
  for (const fact of Object.keys(FORWARDING_HEADERS.edge) as EdgeFact[]) headers.set(FORWARDING_HEADERS.edge[fact], factValue(cf[fact]));
  return headers;
}
