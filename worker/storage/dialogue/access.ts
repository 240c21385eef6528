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
 * - Growing storage from a tool that reads: every wrong attempt writes a
 *   counter row, and random well-formed ids make a new row each. So a wrong
 *   attempt first takes the caller's public-write budget (01 §14) and, when it
 *   is spent, writes nothing (`rate_limited`, `limit: "public_writes"`). The
 *   budget is taken only on the wrong path, after the comparison.
 * - Guessing tokens online: at most 10 wrong attempts per presented contact id
 *   per UTC hour (`rate_limited` after that). The right token is never counted,
 *   never charged and never refused, so nobody can lock the holder out by
 *   guessing or by spending an address's budget. (Neither limit can slow a
 *   guesser who ignores the answers — the 256-bit token does that; the limits
 *   bound storage and tell clients to stop.)
 * - Leaks: the token, its hash, the counter key and the dialogue id never leave
 *   this module except the dialogue id to its caller; nothing here logs.
 */
import type { ContactId } from "../../contracts/id-types";
import { RATE_LIMIT_RETRY_AFTER_S } from "../../contracts/limits";
import { DIALOGUE_WRONG_ATTEMPTS_PER_HOUR } from "../../contracts/tools";
import { attemptKeyHash, attemptWindow, tokenMatchesHash } from "../../lib/dialogue-token";
import type { PublicWriteLimiter } from "../../lib/tool-definition";
import { onStorageError } from "../failure";
import { countWrongAttempt, membershipOf, type DialogueMembership } from "./store";

export type DialogueAccess =
  | { readonly kind: "granted"; readonly membership: DialogueMembership }
  | { readonly kind: "refused" }
  /** `attempts`: the wrong-attempt limit of 07 §5.3; `public_writes`: the budget of 01 §14 was spent, nothing was counted. */
  | { readonly kind: "rate_limited"; readonly retryAfterS: number; readonly limit: "attempts" | "public_writes" }
  | { readonly kind: "storage_error" };

/**
 * For a caller that already took the public-write budget for this very call
 * before verifying (`propose_contact` takes it before anything, 07 §3): the
 * wrong attempt is not charged a second time.
 */
export const budgetAlreadyTaken: PublicWriteLimiter = async () => ({ limited: false });

/**
 * Verifies the pair; on a wrong attempt takes one unit of `takeWriteBudget`
 * before the counter upsert, and writes nothing when it is refused.
 */
export async function verifyDialogueAccess(
  db: D1Database,
  presentedContactId: ContactId,
  presentedToken: string,
  nowMs: number,
  takeWriteBudget: PublicWriteLimiter,
): Promise<DialogueAccess> {
  return onStorageError(async (): Promise<DialogueAccess> => {
    const membership = await membershipOf(db, presentedContactId);
    const matches = await tokenMatchesHash(presentedToken, membership?.token_hash ?? null);
    if (membership !== null && matches && membership.revoked_at === null) return { kind: "granted", membership };
    if ((await takeWriteBudget()).limited) return { kind: "rate_limited", retryAfterS: RATE_LIMIT_RETRY_AFTER_S, limit: "public_writes" };
    const window = attemptWindow(nowMs);
    const failures = await countWrongAttempt(db, await attemptKeyHash(presentedContactId), window.start);
    return failures > DIALOGUE_WRONG_ATTEMPTS_PER_HOUR
      ? { kind: "rate_limited", retryAfterS: window.retryAfterS, limit: "attempts" }
      : { kind: "refused" };
  }, () => ({ kind: "storage_error" }));
}
