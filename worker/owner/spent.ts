/**
 * Core's single-use ledger on D1 (06 §5 `spendOnce`/`isSpent`), on the
 * `oauth` storage group. The database decides "first caller wins", so two
 * racing redemptions of one code can never both succeed.
 *
 * A storage failure throws (`StorageError`): the token endpoint then answers
 * 503 and issues nothing, instead of guessing that a code is unspent. Expired
 * rows are deleted by core's hourly cleanup (`notify/cleanup.ts`, 05 §5.1).
 */
import { isSpent, spendOnce } from "../storage/oauth/store";
import type { SpentKind, SpentLedger } from "./http";

export function d1SpentLedger(db: D1Database): SpentLedger {
  return {
    spendOnce: (id: string, kind: SpentKind, expiresAt: string) => spendOnce(db, id, kind, expiresAt),
    isSpent: (id: string) => isSpent(db, id),
  };
}
