/**
 * Base64url (RFC 4648 §5), the one copy in worker/: the encoder every token,
 * nonce, digest and cursor uses (no padding, as PKCE and JWS write it), the
 * strict decoder, and the one rule for key secrets ("base64url of at least N
 * bytes", 00 §7), so every secret of that form is parsed alike.
 *
 * Ours rather than `jose`'s `base64url`: the public monolith encodes dialogue
 * tokens and carries no jose, and jose's decoder (built on
 * `Uint8Array.fromBase64` where the runtime has it) accepts whitespace and
 * throws where callers here want a value (docs/decisions.md).
 */

const BASE64URL_PATTERN = /^[A-Za-z0-9_-]*={0,2}$/;

/** Base64url without padding. */
export function encodeBase64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The bytes of `value`: URL-safe alphabet only, padding optional but then complete; null for anything else. */
export function decodeBase64url(value: string): Uint8Array | null {
  if (!BASE64URL_PATTERN.test(value)) return null;
  const unpadded = value.replace(/=+$/, "");
  if (unpadded.length % 4 === 1 || (unpadded !== value && value.length % 4 !== 0)) return null;
  const base64 = unpadded.replaceAll("-", "+").replaceAll("_", "/");
  let binary: string;
  try {
    binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  } catch {
    return null;
  }
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** A key secret: base64url (as `decodeBase64url` reads it) of at least `minBytes` bytes, else null. */
export function decodeBase64urlKey(value: string | undefined, minBytes: number): Uint8Array | null {
  if (value === undefined) return null;
  const bytes = decodeBase64url(value);
  return bytes !== null && bytes.byteLength >= minBytes ? bytes : null;
}
