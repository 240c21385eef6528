/**
 * The one constant-time comparison in worker/, for every check of a
 * secret-derived value: PKCE verifiers, the consent CSRF nonce, the GitHub
 * `state`, dialogue tokens.
 *
 * Threat model: an early exit on the first differing byte tells a caller who
 * can time the answer how much of a guess was right. Both functions compare
 * with workerd's `crypto.subtle.timingSafeEqual`, whose time depends only on
 * the length; the string form hashes both sides first, so it always compares
 * 32 bytes and the inputs' lengths leak nothing either.
 */
import { sha256 } from "./hash";

/** Whether `a` and `b` hold the same bytes; false at once for different lengths (callers compare fixed-length digests). */
export function constantTimeEqualBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}

/** Whether two strings are equal, compared as their SHA-256 digests. */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [left, right] = await Promise.all([sha256(a), sha256(b)]);
  return constantTimeEqualBytes(left, right);
}
