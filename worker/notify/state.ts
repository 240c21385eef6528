/**
 * All SQL on `notification_state` (05 §3, §5): the activation pin, the chat
 * pin, the lease and the global backoff. One row, `id = 1`.
 *
 * Why a lease: the cron can overlap with itself (a slow run, or two Workers
 * on one database during the B.1 cutover). Taking the lease is one
 * conditional UPDATE, so exactly one run wins; every send re-checks that the
 * lease is still ours and unexpired before it calls Telegram.
 */
import { all, first, notRetried, run, statement } from "../storage/d1";

/** How long one run may hold the lease (05 §5 step 4); longer than 5 sends × 8 s. */
export const LEASE_SECONDS = 55;

export interface StateRow {
  activated_at: string;
  owner_chat_hash: string | null;
  backoff_until: string | null;
  consecutive_failures: number;
}

/** Step 3: the first enabled run pins the activation time; later runs never move it. */
export async function ensureState(db: D1Database, now: string): Promise<void> {
  await run(
    db,
    statement(
      `INSERT INTO notification_state (id, activated_at, consecutive_failures, updated_at)
       VALUES (1, ?, 0, ?) ON CONFLICT(id) DO NOTHING`,
      now,
      now,
    ),
  );
}

/** Step 4: takes the lease when it is free or expired; null when another run holds it. */
export async function acquireLease(db: D1Database, leaseId: string, now: string, expiresAt: string): Promise<StateRow | null> {
  return first<StateRow>(
    db,
    statement(
      `UPDATE notification_state SET lease_id = ?, lease_expires_at = ?, updated_at = ?
       WHERE id = 1 AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
       RETURNING activated_at, owner_chat_hash, backoff_until, consecutive_failures`,
      leaseId,
      expiresAt,
      now,
      now,
    ),
  );
}

/** Whether the lease is still ours and unexpired (checked before every send, step 9). */
export async function holdsLease(db: D1Database, leaseId: string, now: string): Promise<boolean> {
  const rows = await all<{ id: number }>(
    db,
    statement("SELECT id FROM notification_state WHERE id = 1 AND lease_id = ? AND lease_expires_at > ?", leaseId, now),
  );
  return rows.length === 1;
}

/** Step 12: releases the lease only if it is still ours. */
export async function releaseLease(db: D1Database, leaseId: string, now: string): Promise<void> {
  await run(
    db,
    statement(
      "UPDATE notification_state SET lease_id = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = 1 AND lease_id = ?",
      now,
      leaseId,
    ),
  );
}

/** Step 5: stores the chat hash when none is pinned yet (never overwrites one). */
export async function pinChat(db: D1Database, chatHash: string, now: string): Promise<void> {
  await run(
    db,
    statement("UPDATE notification_state SET owner_chat_hash = ?, updated_at = ? WHERE id = 1 AND owner_chat_hash IS NULL", chatHash, now),
  );
}

/** Step 11: a delivery resets the failure streak. */
export async function recordDelivery(db: D1Database, now: string): Promise<void> {
  await run(db, statement("UPDATE notification_state SET consecutive_failures = 0, updated_at = ? WHERE id = 1", now));
}

/**
 * Step 11: a failed attempt adds one to the streak and, when given, moves the
 * global backoff (429 `retry_after`, or an hour after 401/403/404). A backoff
 * never moves earlier than one already set.
 */
export async function recordFailure(db: D1Database, now: string, backoffUntil: string | null): Promise<void> {
  // Never retried (decision 128): a counter bumped twice is not the same as once.
  await run(
    db,
    notRetried(statement(
      `UPDATE notification_state SET consecutive_failures = consecutive_failures + 1,
         backoff_until = CASE WHEN ? IS NULL THEN backoff_until
                              WHEN backoff_until IS NULL OR backoff_until < ? THEN ?
                              ELSE backoff_until END,
         updated_at = ?
       WHERE id = 1`,
      backoffUntil,
      backoffUntil,
      backoffUntil,
      now,
    )),
  );
}
