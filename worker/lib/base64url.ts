/**
 * Base64url (RFC 4648 §5) for secrets and tokens: encoding without padding,
 * and the one decoder of key secrets ("base64url of at least N bytes", 00 §7),
 * so every secret of that form is parsed by the same rule.
 */

const BASE64URL_PATTERN = /^[A-Za-z0-9_-]+={0,2}$/;

/** Base64url without padding. */
export function base64urlNoPad(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Base64url (URL-safe alphabet only, padding optional but then complete) of at least `minBytes` bytes, else null. */
export function decodeBase64urlKey(value: string | undefined, minBytes: number): Uint8Array | null {
  if (value === undefined || !BASE64URL_PATTERN.test(value)) return null;
  const unpadded = value.replace(/=+$/, "");
  if (unpadded.length % 4 === 1 || (unpadded !== value && value.length % 4 !== 0)) return null;
  const base64 = unpadded.replaceAll("-", "+").replaceAll("_", "/");
  let binary: string;
  try {
    binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  } catch {
    return null;
  }
  if (binary.length < minBytes) return null;
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}
