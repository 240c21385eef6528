/**
 * All SQL on `notification_outbox` (05 §2–§5): discovery, stale recovery, the
 * goal-queue cap, due selection, claims and the state transitions of 05 §4.
 * The goal enqueue statement that `signals` batches with its observation lives
 * in storage/outbox.ts (a capability never imports another) and is re-exported
 * here so this module remains the one index of outbox SQL.
 *
 * Every transition is a conditional UPDATE on the row's current state, so a
 * row claimed by another run is skipped, never sent twice by this one. The
 * outbox holds references and delivery metadata only — never message text.
 */
import { all, first, run, statement } from "../storage/d1";

export { enqueueObservationStatement, newOutboxId } from "../storage/outbox";

/** Per run (05 §5): discovery cap, send cap, goal-queue cap. */
export const DISCOVERY_LIMIT = 100;
export const SEND_LIMIT = 5;
export const PENDING_GOAL_CAP = 20;
/** A `sending` row older than this was left by a crashed or timed-out run (05 §4). */
export const STALE_SENDING_SECONDS = 120;
/** The eighth failed attempt is final (05 §4). */
export const MAX_ATTEMPTS = 8;

export type SourceKind = "contact" | "observation";
export type OutboxState = "pending" | "sending" | "retry_wait" | "delivered" | "failed" | "skipped";
export type SkipReason = "source_missing" | "test_source" | "before_activation";

export interface DueRow {
  outbox_id: string;
  source_kind: SourceKind;
  source_id: string;
}

/** `delay(n) = min(60 × 2^(n−1), 3600)` seconds (05 §4). */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(60 * 2 ** (Math.max(1, attempts) - 1), 3600);
}

/**
 * Step 6: one INSERT … SELECT for at most 100 non-test contacts created at or
 * after the activation pin that have no outbox row yet, oldest first. The
 * outbox row takes the contact's `created_at`, so due rows go out in the order
 * the contacts arrived. Returns how many rows were inserted.
 */
export async function discoverContacts(db: D1Database, activatedAt: string): Promise<number> {
  const result = await run(
    db,
    statement(
      `INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, state, attempts, next_attempt_at)
       SELECT 'nt_' || lower(hex(randomblob(16))), 'contact', c.contact_id, c.created_at, 'pending', 0, c.created_at
       FROM contacts c
       WHERE c.self_reported_test = 0 AND c.created_at >= ?
         AND NOT EXISTS (SELECT 1 FROM notification_outbox o WHERE o.source_kind = 'contact' AND o.source_id = c.contact_id)
       ORDER BY c.created_at, c.contact_id
       LIMIT ?
       ON CONFLICT DO NOTHING`,
      activatedAt,
      DISCOVERY_LIMIT,
    ),
  );
  return result.meta.changes ?? 0;
}

/** Step 7a: `sending` rows abandoned for more than 120 s become `retry_wait` (or `failed` at the last attempt). */
export async function recoverStaleSending(db: D1Database, now: string, staleBefore: string): Promise<number> {
  const result = await run(
    db,
    statement(
      `UPDATE notification_outbox
       SET state = CASE WHEN attempts >= ? THEN 'failed' ELSE 'retry_wait' END,
           next_attempt_at = ?, last_error_code = 'interrupted'
       WHERE state = 'sending' AND last_attempt_at < ?`,
      MAX_ATTEMPTS,
      now,
      staleBefore,
    ),
  );
  return result.meta.changes ?? 0;
}

/**
 * Step 7b: of the pending observation rows, the 20 oldest stay; every other
 * one becomes `skipped` / `overflow` in one conditional UPDATE. Contact rows
 * are never capped. Returns how many were skipped (`overflow_skipped`).
 */
export async function capPendingGoals(db: D1Database): Promise<number> {
  const result = await run(
    db,
    statement(
      `UPDATE notification_outbox SET state = 'skipped', last_error_code = 'overflow'
       WHERE source_kind = 'observation' AND state = 'pending'
         AND outbox_id NOT IN (
           SELECT outbox_id FROM notification_outbox
           WHERE source_kind = 'observation' AND state = 'pending'
           ORDER BY created_at, outbox_id LIMIT ?)`,
      PENDING_GOAL_CAP,
    ),
  );
  return result.meta.changes ?? 0;
}

/** Step 9: due rows, every contact row before any observation row, at most 5. */
export async function selectDue(db: D1Database, now: string): Promise<DueRow[]> {
  return all<DueRow>(
    db,
    statement(
      `SELECT outbox_id, source_kind, source_id FROM notification_outbox
       WHERE state IN ('pending', 'retry_wait') AND next_attempt_at <= ?
       ORDER BY CASE source_kind WHEN 'contact' THEN 0 ELSE 1 END, created_at, outbox_id
       LIMIT ?`,
      now,
      SEND_LIMIT,
    ),
  );
}

/**
 * Claims a due row (`pending`/`retry_wait` → `sending`, one more attempt) only
 * while it is still due and the lease is still this run's. Returns the new
 * attempt count, or null when someone else got there first.
 */
export async function claim(db: D1Database, outboxId: string, now: string, leaseId: string): Promise<number | null> {
  const row = await first<{ attempts: number }>(
    db,
    statement(
      `UPDATE notification_outbox SET state = 'sending', attempts = attempts + 1, last_attempt_at = ?
       WHERE outbox_id = ? AND state IN ('pending', 'retry_wait') AND next_attempt_at <= ?
         AND EXISTS (SELECT 1 FROM notification_state WHERE id = 1 AND lease_id = ? AND lease_expires_at > ?)
       RETURNING attempts`,
      now,
      outboxId,
      now,
      leaseId,
      now,
    ),
  );
  return row === null ? null : row.attempts;
}

/** `sending` → `skipped` without calling Telegram (missing, test or pre-activation source). */
export async function markSkipped(db: D1Database, outboxId: string, reason: SkipReason): Promise<void> {
  await run(
    db,
    statement("UPDATE notification_outbox SET state = 'skipped', last_error_code = ? WHERE outbox_id = ? AND state = 'sending'", reason, outboxId),
  );
}

/** `sending` → `delivered`, with the Telegram message id and the error fields cleared. */
export async function markDelivered(db: D1Database, outboxId: string, now: string, messageId: number): Promise<void> {
  await run(
    db,
    statement(
      `UPDATE notification_outbox
       SET state = 'delivered', delivered_at = ?, telegram_message_id = ?, last_error_code = NULL, last_http_status = NULL
       WHERE outbox_id = ? AND state = 'sending'`,
      now,
      messageId,
      outboxId,
    ),
  );
}

/** `sending` → `retry_wait` at `nextAttemptAt`, keeping why. */
export async function markRetry(
  db: D1Database,
  outboxId: string,
  nextAttemptAt: string,
  errorCode: string,
  httpStatus: number | null,
): Promise<void> {
  await run(
    db,
    statement(
      `UPDATE notification_outbox SET state = 'retry_wait', next_attempt_at = ?, last_error_code = ?, last_http_status = ?
       WHERE outbox_id = ? AND state = 'sending'`,
      nextAttemptAt,
      errorCode,
      httpStatus,
      outboxId,
    ),
  );
}

/** `sending` → `failed` after the eighth failed attempt; the error fields are kept. */
export async function markFailed(db: D1Database, outboxId: string, errorCode: string, httpStatus: number | null): Promise<void> {
  await run(
    db,
    statement(
      "UPDATE notification_outbox SET state = 'failed', last_error_code = ?, last_http_status = ? WHERE outbox_id = ? AND state = 'sending'",
      errorCode,
      httpStatus,
      outboxId,
    ),
  );
}
