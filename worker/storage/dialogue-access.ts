/**
 * The one check of a presented `(contact_id, dialogue_token)` pair (07 §2,
 * §5.2–§5.3), shared by a `propose_contact` follow-up (case B) and
 * `fetch_contact_reply`, which may not import each other.
 *
 * Threat model:
 * - Probing which contacts exist or have dialogues: an unknown contact, a
 *   contact without a dialogue, a revoked dialogue and a wrong token are one
 *   verdict (`refused`), reached after the same digest comparison, and all are
 *   counted by the same limiter keyed by the id *as presented* — so neither the
 *   answer nor the limiter reveals anything.
 * - Guessing tokens online: at most 10 wrong attempts per presented contact id
 *   per UTC hour (`rate_limited` after that). The right token is never counted
 *   and never refused, so nobody can lock the holder out by guessing.
 * - Leaks: the token, its hash, the counter key and the dialogue id never leave
 *   this module except the dialogue id to its caller; nothing here logs.
 */
import { DIALOGUE_WRONG_ATTEMPTS_PER_HOUR } from "../contracts/tools";
import { attemptKeyHash, attemptWindow, tokenMatchesHash } from "../lib/dialogue-token";
import { StorageError } from "./d1";
import { countWrongAttempt, membershipOf, type DialogueMembership } from "./dialogue-sql";

export type DialogueAccess =
  | { readonly kind: "granted"; readonly membership: DialogueMembership }
  | { readonly kind: "refused" }
  | { readonly kind: "rate_limited"; readonly retryAfterS: number }
  | { readonly kind: "storage_error" };

export async function verifyDialogueAccess(
  db: D1Database,
  presentedContactId: string,
  presentedToken: string,
  nowMs: number,
): Promise<DialogueAccess> {
  try {
    const membership = await membershipOf(db, presentedContactId);
    const matches = await tokenMatchesHash(presentedToken, membership?.token_hash ?? null);
    if (membership !== null && matches && membership.revoked_at === null) return { kind: "granted", membership };
    const window = attemptWindow(nowMs);
    const failures = await countWrongAttempt(db, await attemptKeyHash(presentedContactId), window.start);
    return failures > DIALOGUE_WRONG_ATTEMPTS_PER_HOUR ? { kind: "rate_limited", retryAfterS: window.retryAfterS } : { kind: "refused" };
  } catch (error) {
    if (error instanceof StorageError) return { kind: "storage_error" };
    throw error;
  }
}
