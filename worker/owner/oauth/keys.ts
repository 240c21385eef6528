/**
 * Key separation (06 §3.2): `OWNER_TOKEN_SIGNING_KEY` is never used directly.
 * HKDF-SHA256 with an empty salt expands it into three independent 32-byte
 * HMAC-SHA256 keys, one per purpose, so an object signed for one purpose (a
 * client id, say, which anyone can obtain by registering) can never verify as
 * another (a token), even before the `typ` check.
 */

/** Length of every derived HMAC key, in bytes (pinned in 06 §3.2). */
export const DERIVED_KEY_BYTES = 32;

export const KEY_INFO = {
  token: "magnt-owner/token/v1",
  client: "magnt-owner/client/v1",
  state: "magnt-owner/state/v1",
} as const;

export type KeyPurpose = keyof typeof KEY_INFO;

export type OwnerKeys = Readonly<Record<KeyPurpose, Uint8Array>>;

/** Derives the three purpose keys from the signing secret. */
export async function deriveOwnerKeys(secret: Uint8Array): Promise<OwnerKeys> {
  const material = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveBits"]);
  const [token, client, state] = await Promise.all(
    (["token", "client", "state"] as const).map((purpose) => derive(material, KEY_INFO[purpose])),
  );
  return { token: token!, client: client!, state: state! };
}

async function derive(material: CryptoKey, info: string): Promise<Uint8Array> {
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
    material,
    DERIVED_KEY_BYTES * 8,
  );
  return new Uint8Array(bits);
}
