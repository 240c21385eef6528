/**
 * Browser Origin validation for the MCP endpoints (01 §4).
 *
 * Threat model: a web page in the visitor's browser posting to /mcp (or to the
 * owner OAuth consent) on the visitor's behalf. Non-browser clients send no
 * Origin and are allowed; a browser always sends one, so a present Origin must
 * be one of ours (https) or a loopback origin (http, for local development).
 * `null` (sandboxed frames, file: pages) and anything that is not a bare
 * `scheme://host[:port]` are refused.
 */
import { allowedHosts, isLoopbackHost } from "../config/hosts";
import type { Env } from "../config/env";

type OriginCheck =
  | { ok: true; origin: string | null }
  | { ok: false; reason: "null_origin" | "malformed_origin" | "origin_not_allowed" };

export function validateOrigin(request: Request, env: Env): OriginCheck {
  const origin = request.headers.get("origin");
  if (origin === null) return { ok: true, origin: null };
  if (origin === "null") return { ok: false, reason: "null_origin" };
  const parsed = parseBareOrigin(origin);
  if (!parsed) return { ok: false, reason: "malformed_origin" };
  if (parsed.protocol === "https:" && allowedHosts(env).has(parsed.hostname)) return { ok: true, origin };
  if (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname)) return { ok: true, origin };
  return { ok: false, reason: "origin_not_allowed" };
}

/** `scheme://host[:port]`: no path (not even "/"), query, fragment or user info. */
const BARE_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(\[[0-9a-f:.]+\]|[^/?#@\[\]:\s]+)(:\d{1,5})?$/i;

/** Parses a bare origin, or returns null for anything else. */
function parseBareOrigin(value: string): URL | null {
  if (!BARE_ORIGIN.test(value)) return null;
  try {
    return new URL(value);
  } catch {
    return null;
  }
}
