/**
 * Group `oauth` — the one owner of `owner_oauth_spent`, core's single-use
 * ledger (06 §5, migration 0006): authorization codes, refresh tokens and
 * revoked refresh families. Dependency-free.
 *
 * Reads: (only its own table)
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

/** `ON CONFLICT DO NOTHING` makes "first caller wins" atomic in the database: two racing redemptions never both succeed. */
export function spendStatement(id: string, kind: string, expiresAt: string): Statement {
  return {
    sql: "INSERT INTO owner_oauth_spent (id, kind, expires_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING",
    params: [id, kind, expiresAt],
    // Never retried (09 §5.1, decision 178): after a committed first attempt the retry reports 0 changes,
    // which reads as a replay and would revoke the token family.
    idempotent: false,
  };
}

export function isSpentStatement(id: string): Statement {
  return { sql: "SELECT 1 AS spent FROM owner_oauth_spent WHERE id = ?", params: [id] };
}

/**
 * One bounded batch of the hourly cleanup (05 §5.1): at most `limit` expired
 * rows per statement, so a backlog never holds D1's single writer for long.
 */
export function deleteExpiredSpentStatement(now: string, limit: number): Statement {
  return {
    sql: "DELETE FROM owner_oauth_spent WHERE rowid IN (SELECT rowid FROM owner_oauth_spent WHERE expires_at < ? LIMIT ?)",
    params: [now, limit],
  };
}
