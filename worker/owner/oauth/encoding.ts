/**
 * The OAuth server's derived values: base64url SHA-256 digests (PKCE, nonce
 * hashes, `cid`) and random nonces, built on the one base64url of
 * lib/base64url.ts. Secret-derived values are compared with
 * lib/constant-time.ts.
 */
import { encodeBase64url } from "../../lib/base64url";
import { sha256 } from "../../lib/hash";

/** Base64url (no padding) of the SHA-256 of the UTF-8 bytes of `text`: 43 characters. */
export async function sha256Base64url(text: string): Promise<string> {
  return encodeBase64url(await sha256(text));
}

/** `cid` (06 §3.2): the first 22 base64url characters of the SHA-256 of the client id. */
export async function clientIdHash(clientId: string): Promise<string> {
  return (await sha256Base64url(clientId)).slice(0, 22);
}

/** `bytes` random bytes as base64url: nonces, `jti` and family ids. */
export function randomToken(bytes = 32): string {
  return encodeBase64url(crypto.getRandomValues(new Uint8Array(bytes)));
}
