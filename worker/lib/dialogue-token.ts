/**
 * Dialogue tokens (07 §2): derivation, the stored hash and the comparison.
 * Pure crypto, shared by `contacts` (issue on case A, verify on case B) and
 * `dialogue` (verify on fetch), so it lives below both.
 *
 * Threat model:
 * - Guessing or forging: a token is `dt_` + base64url(HMAC-SHA256(key, dialogue_id))
 *   with a random `dialogue_id` that is never shown; without `DIALOGUE_TOKEN_KEY`
 *   it can be neither guessed nor forged. Deriving it (instead of storing a random
 *   one) lets an identical retry of the creating submission return it again
 *   (within the re-issue window of 07 §3 step 4).
 * - A database leak: only SHA-256 of the whole token string is stored, so rows
 *   cannot be turned back into working tokens.
 * - Timing: the presented token's digest is compared in constant time
 *   (lib/constant-time.ts) with the stored 32-byte digest; when no dialogue exists it is compared with a fixed dummy
 *   digest, so "no such dialogue" and "wrong token" do the same work.
 * - A bad key: anything but base64url of at least 32 bytes is refused (null), and
 *   the callers then fail closed — no token is derived or verified.
 * Nothing here logs, and no value computed here ever reaches telemetry.
 */
import type { ContactId } from "../contracts/id-types";
import { DIALOGUE_TOKEN_PREFIX } from "../contracts/tools";
import { decodeBase64urlKey, encodeBase64url } from "./base64url";
import { constantTimeEqualBytes } from "./constant-time";
import { sha256, sha256Hex } from "./hash";

/** Minimum decoded length of `DIALOGUE_TOKEN_KEY` (07 §2, 00 §7). */
export const MIN_DIALOGUE_KEY_BYTES = 32;

const encoder = new TextEncoder();

/** An HMAC key ready to derive tokens; obtained only through `importDialogueKey`. */
export interface DialogueKey {
  readonly hmac: CryptoKey;
}

/** The configured key, or null when it is missing or malformed (the caller fails closed). */
export async function importDialogueKey(secret: string | undefined): Promise<DialogueKey | null> {
  const bytes = decodeBase64urlKey(secret, MIN_DIALOGUE_KEY_BYTES);
  if (bytes === null) return null;
  const hmac = await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return { hmac };
}

/** `dt_` + base64url_nopad(HMAC-SHA256(key, UTF-8 dialogue_id)): 46 characters (07 §2). */
export async function deriveDialogueToken(key: DialogueKey, dialogueId: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", key.hmac, encoder.encode(dialogueId));
  return DIALOGUE_TOKEN_PREFIX + encodeBase64url(new Uint8Array(mac));
}

/** The stored form: lower-case hex SHA-256 of the whole token string. */
export function dialogueTokenHash(token: string): Promise<string> {
  return sha256Hex(token);
}

/** A fixed digest compared against when no dialogue exists, so both paths do the same work. */
const DUMMY_DIGEST = new Uint8Array(32).fill(0xa5);

function hexToBytes(hex: string): Uint8Array | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Whether `presented` is the token whose hash is `storedHash`. With no stored
 * hash (no dialogue) the digest is compared with the dummy and the answer is
 * false; a revoked dialogue is refused by the caller after this comparison.
 */
export async function tokenMatchesHash(presented: string, storedHash: string | null): Promise<boolean> {
  const digest = await sha256(presented);
  const stored = storedHash === null ? null : hexToBytes(storedHash);
  const equal = constantTimeEqualBytes(digest, stored ?? DUMMY_DIGEST);
  return stored !== null && equal;
}

/**
 * The wrong-attempt counter key of a presented contact id (07 §5.3): hex SHA-256
 * of `"dialogue:" + lower-cased id` (the input schema lower-cased it, hence the
 * type), whether or not the contact exists.
 */
export function attemptKeyHash(presentedContactId: ContactId): Promise<string> {
  return sha256Hex(`dialogue:${presentedContactId}`);
}

/** The start of the UTC hour containing `nowMs` (ISO), and the seconds until it ends (≥ 1). */
export function attemptWindow(nowMs: number): { readonly start: string; readonly retryAfterS: number } {
  const hourMs = 3_600_000;
  const startMs = Math.floor(nowMs / hourMs) * hourMs;
  return { start: new Date(startMs).toISOString(), retryAfterS: Math.max(1, Math.ceil((startMs + hourMs - nowMs) / 1000)) };
}
