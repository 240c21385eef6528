/**
 * Core's single-use ledger on D1 (06 §5 `spendOnce`/`isSpent`, 09
 * `owner_oauth_spent`): authorization codes, refresh tokens and revoked
 * refresh families. `INSERT … ON CONFLICT DO NOTHING` makes "first caller
 * wins" atomic in the database, so two racing redemptions of one code can
 * never both succeed.
 *
 * A storage failure throws (`StorageError`): the token endpoint then answers
 * 503 and issues nothing, instead of guessing that a code is unspent. Expired
 * rows are deleted by core's hourly cleanup (`notify/cleanup.ts`, 05 §5.1).
 */
import { first, notRetried, run, statement } from "../storage/d1";
import type { SpentKind, SpentLedger } from "./http";

export function d1SpentLedger(db: D1Database): SpentLedger {
  return {
    async spendOnce(id: string, kind: SpentKind, expiresAt: string): Promise<boolean> {
      // Never retried (decision 128): after a committed first attempt the retry reports 0 changes — a replay.
      const result = await run(
        db,
        notRetried(statement("INSERT INTO owner_oauth_spent (id, kind, expires_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING", id, kind, expiresAt)),
      );
      return result.meta.changes === 1;
    },
    async isSpent(id: string): Promise<boolean> {
      return (await first(db, statement("SELECT 1 AS spent FROM owner_oauth_spent WHERE id = ?", id))) !== null;
    },
  };
}
