/** Hashing helpers shared by the stores, the rate limiter, the discovery documents and the token code. */

const encoder = new TextEncoder();

/** SHA-256 of the UTF-8 bytes of `text`. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Lower-case hex SHA-256 of the UTF-8 bytes of `text`. */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(await sha256(text));
}

function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** `bytes` random bytes as lower-case hex (ids such as `sr_…` and `ob_…`). */
export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}
