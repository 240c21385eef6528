/**
 * Rate limiting of public writes (01 §14).
 *
 * Threat model: one client flooding the private inbox, the shared corpus or the
 * observed-demand table. The key is a salted SHA-256 of the client address that
 * changes every UTC day, so it cannot link a visitor across days; the address
 * and the key are never logged, stored or returned — the counter lives only in
 * the platform's limiter. This is abuse control, not identity inference.
 */
import type { Role } from "../contracts/events";
import { FORWARDING_HEADERS } from "../contracts/forwarding";
import type { Env } from "../config/env";
import { sha256Hex } from "../lib/hash";
import type { PublicWriteLimiter } from "../lib/tool-definition";

const KEY_LABEL = "magnt/public-writes/v1";

/**
 * The limiter for one request. Without a `PUBLIC_WRITES` binding nothing is
 * limited (local door, tests); an error thrown by the binding counts as "not
 * limited", because the limiter protects the door and must never break it.
 */
export function publicWriteLimiter(request: Request, env: Env, role: Role): PublicWriteLimiter {
  return async () => {
    const binding = env.PUBLIC_WRITES;
    if (!binding) return { limited: false };
    try {
      const key = await rateLimitKeyFor(request, role);
      const { success } = await binding.limit({ key });
      return { limited: !success };
    } catch {
      return { limited: false };
    }
  };
}

/**
 * The key of a request: computed from `cf-connecting-ip` by the Worker that
 * faces the visitor, or, in the core role only, taken from the gateway's
 * `x-magnt-client-key` header (the address itself is never forwarded).
 */
export async function rateLimitKeyFor(request: Request, role: Role, now: Date = new Date()): Promise<string> {
  if (role === "core") {
    const forwarded = request.headers.get(FORWARDING_HEADERS.clientKey);
    if (forwarded !== null && /^[0-9a-f]{64}$/.test(forwarded)) return forwarded;
  }
  return rateLimitKey(request.headers.get("cf-connecting-ip") ?? "unknown", now);
}

/** `sha256("magnt/public-writes/v1\n" + YYYY-MM-DD + "\n" + address)` as lower-case hex. */
function rateLimitKey(address: string, now: Date): Promise<string> {
  const day = now.toISOString().slice(0, 10);
  return sha256Hex(`${KEY_LABEL}\n${day}\n${address}`);
}
