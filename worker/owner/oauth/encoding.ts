/**
 * Byte helpers of the OAuth server: base64url, SHA-256 digests, random nonces
 * and a constant-time comparison. One place, so every check that compares a
 * secret-derived value (PKCE, CSRF nonce, GitHub `state`) uses the same one.
 */

const encoder = new TextEncoder();

/** Base64url without padding (RFC 4648 §5), as PKCE and JWS use it. */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Base64url (no padding) of the SHA-256 of the UTF-8 bytes of `text`: 43 characters. */
export async function sha256Base64url(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return base64url(new Uint8Array(digest));
}

/** `cid` (06 §3.2): the first 22 base64url characters of the SHA-256 of the client id. */
export async function clientIdHash(clientId: string): Promise<string> {
  return (await sha256Base64url(clientId)).slice(0, 22);
}

/** `bytes` random bytes as base64url: nonces, `jti` and family ids. */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/**
 * Compares two strings without an early exit on the first differing byte.
 * Both sides are hashed first, so the loop always runs over 32 bytes and the
 * lengths of the inputs leak nothing either.
 */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [left, right] = await Promise.all([digest(a), digest(b)]);
  let difference = 0;
  for (let i = 0; i < left.length; i += 1) difference |= left[i]! ^ right[i]!;
  return difference === 0;
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}
