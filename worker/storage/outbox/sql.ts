/**
 * Group `outbox` — the one owner of `notification_outbox` and
 * `notification_state` (05 §2–§5, migrations 0004–0005): discovery, stale
 * recovery, the goal-queue cap, due selection, claims, the state transitions
 * of 05 §4, and the one-row state (activation pin, chat pin, lease, global
 * backoff). Dependency-free; the CLI imports the same text.
 *
 * Reads: contacts
 *
 * (Discovery is an INSERT … SELECT driven by `contacts`; only the outbox row
 * is written, so a failed notification can never alter a contact.)
 *
 * Every transition is a conditional UPDATE on the row's current state, so a
 * row claimed by another run is skipped, never sent twice by this one. The
 * outbox holds references and delivery metadata only — never message text.
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

/** Per run (05 §5): discovery cap, send cap, goal-queue cap. */
export const DISCOVERY_LIMIT = 100;
export const SEND_LIMIT = 5;
export const PENDING_GOAL_CAP = 20;
/** A `sending` row older than this was left by a crashed or timed-out run (05 §4). */
export const STALE_SENDING_SECONDS = 120;
/** The eighth failed attempt is final (05 §4). */
export const MAX_ATTEMPTS = 8;
/** How long one run may hold the lease (05 §5 step 4); longer than 5 sends × 8 s. */
export const LEASE_SECONDS = 55;

export type SourceKind = "contact" | "observation";
export type SkipReason = "source_missing" | "test_source" | "before_activation";

export interface DueRow {
  outbox_id: string;
  source_kind: SourceKind;
  source_id: string;
}

export interface StateRow {
  activated_at: string;
  owner_chat_hash: string | null;
  backoff_until: string | null;
  consecutive_failures: number;
}

// ---------------------------------------------------------------- notification_outbox

/**
 * Enqueues an observation for a goal notification, batched with the
 * observation insert: a `pending` row with `next_attempt_at = created_at`,
 * written only when the activation pin exists and is not later than the
 * observation (05 §3), so nothing searched before the first enabled cron run
 * can ever be sent. A guard that inserts no row is not a failure; a second row
 * for the same source cannot exist (UNIQUE).
 */
export function enqueueObservationStatement(observationId: string, createdAt: string, outboxId: string): Statement {
  return {
    sql: `INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, state, attempts, next_attempt_at)
     SELECT ?, 'observation', ?, ?, 'pending', 0, ?
     WHERE EXISTS (SELECT 1 FROM notification_state WHERE id = 1 AND activated_at <= ?)
     ON CONFLICT(source_kind, source_id) DO NOTHING`,
    params: [outboxId, observationId, createdAt, createdAt, createdAt],
  };
}

/**
 * Step 6: one INSERT … SELECT for at most 100 non-test contacts created at or
 * after the activation pin that have no outbox row yet, oldest first. The
 * outbox row takes the contact's `created_at`, so due rows go out in the order
 * the contacts arrived. The id is generated in SQL in the `nt_` + 32 hex form
 * of 00 §9, because one statement inserts many rows.
 */
export function discoverContactsStatement(activatedAt: string): Statement {
  return {
    sql: `INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, state, attempts, next_attempt_at)
       SELECT 'nt_' || lower(hex(randomblob(16))), 'contact', c.contact_id, c.created_at, 'pending', 0, c.created_at
       FROM contacts c
       WHERE c.self_reported_test = 0 AND c.created_at >= ?
         AND NOT EXISTS (SELECT 1 FROM notification_outbox o WHERE o.source_kind = 'contact' AND o.source_id = c.contact_id)
       ORDER BY c.created_at, c.contact_id
       LIMIT ?
       ON CONFLICT DO NOTHING`,
    params: [activatedAt, DISCOVERY_LIMIT],
  };
}

/** Step 7a: `sending` rows abandoned for more than 120 s become `retry_wait` (or `failed` at the last attempt). */
export function recoverStaleSendingStatement(now: string, staleBefore: string): Statement {
  return {
    sql: `UPDATE notification_outbox
       SET state = CASE WHEN attempts >= ? THEN 'failed' ELSE 'retry_wait' END,
           next_attempt_at = ?, last_error_code = 'interrupted'
       WHERE state = 'sending' AND last_attempt_at < ?`,
    params: [MAX_ATTEMPTS, now, staleBefore],
  };
}

/**
 * Step 7b: of the pending observation rows, the 20 oldest stay; every other
 * one becomes `skipped` / `overflow` in one conditional UPDATE. Contact rows
 * are never capped.
 */
export function capPendingGoalsStatement(): Statement {
  return {
    sql: `UPDATE notification_outbox SET state = 'skipped', last_error_code = 'overflow'
       WHERE source_kind = 'observation' AND state = 'pending'
         AND outbox_id NOT IN (
           SELECT outbox_id FROM notification_outbox
           WHERE source_kind = 'observation' AND state = 'pending'
           ORDER BY created_at, outbox_id LIMIT ?)`,
    params: [PENDING_GOAL_CAP],
  };
}

/** Step 9: due rows, every contact row before any observation row, at most 5. */
export function selectDueStatement(now: string): Statement {
  return {
    sql: `SELECT outbox_id, source_kind, source_id FROM notification_outbox
       WHERE state IN ('pending', 'retry_wait') AND next_attempt_at <= ?
       ORDER BY CASE source_kind WHEN 'contact' THEN 0 ELSE 1 END, created_at, outbox_id
       LIMIT ?`,
    params: [now, SEND_LIMIT],
  };
}

/**
 * Claims a due row (`pending`/`retry_wait` → `sending`, one more attempt) only
 * while it is still due and the lease is still this run's; RETURNING the new
 * attempt count, no row when someone else got there first.
 */
export function claimStatement(outboxId: string, now: string, leaseId: string): Statement {
  return {
    sql: `UPDATE notification_outbox SET state = 'sending', attempts = attempts + 1, last_attempt_at = ?
       WHERE outbox_id = ? AND state IN ('pending', 'retry_wait') AND next_attempt_at <= ?
         AND EXISTS (SELECT 1 FROM notification_state WHERE id = 1 AND lease_id = ? AND lease_expires_at > ?)
       RETURNING attempts`,
    params: [now, outboxId, now, leaseId, now],
  };
}

/** `sending` → `skipped` without calling Telegram (missing, test or pre-activation source). */
export function markSkippedStatement(outboxId: string, reason: SkipReason): Statement {
  return {
    sql: "UPDATE notification_outbox SET state = 'skipped', last_error_code = ? WHERE outbox_id = ? AND state = 'sending'",
    params: [reason, outboxId],
  };
}

/** `sending` → `delivered`, with the Telegram message id and the error fields cleared. */
export function markDeliveredStatement(outboxId: string, now: string, messageId: number): Statement {
  return {
    sql: `UPDATE notification_outbox
       SET state = 'delivered', delivered_at = ?, telegram_message_id = ?, last_error_code = NULL, last_http_status = NULL
       WHERE outbox_id = ? AND state = 'sending'`,
    params: [now, messageId, outboxId],
  };
}

/** `sending` → `retry_wait` at `nextAttemptAt`, keeping why. */
export function markRetryStatement(outboxId: string, nextAttemptAt: string, errorCode: string, httpStatus: number | null): Statement {
  return {
    sql: `UPDATE notification_outbox SET state = 'retry_wait', next_attempt_at = ?, last_error_code = ?, last_http_status = ?
       WHERE outbox_id = ? AND state = 'sending'`,
    params: [nextAttemptAt, errorCode, httpStatus, outboxId],
  };
}

/** `sending` → `failed` after the eighth failed attempt; the error fields are kept. */
export function markFailedStatement(outboxId: string, errorCode: string, httpStatus: number | null): Statement {
  return {
    sql: "UPDATE notification_outbox SET state = 'failed', last_error_code = ?, last_http_status = ? WHERE outbox_id = ? AND state = 'sending'",
    params: [errorCode, httpStatus, outboxId],
  };
}

// ---------------------------------------------------------------- notification_state (one row, id = 1)
//
// Why a lease: the cron can overlap with itself (a slow run, or two Workers on
// one database during the B.1 cutover). Taking the lease is one conditional
// UPDATE, so exactly one run wins; every send re-checks that the lease is
// still ours and unexpired before it calls Telegram.

/** Step 3: the first enabled run pins the activation time; later runs never move it. */
export function ensureStateStatement(now: string): Statement {
  return {
    sql: `INSERT INTO notification_state (id, activated_at, consecutive_failures, updated_at)
       VALUES (1, ?, 0, ?) ON CONFLICT(id) DO NOTHING`,
    params: [now, now],
  };
}

/** Step 4: takes the lease when it is free or expired; no row when another run holds it. */
export function acquireLeaseStatement(leaseId: string, now: string, expiresAt: string): Statement {
  return {
    sql: `UPDATE notification_state SET lease_id = ?, lease_expires_at = ?, updated_at = ?
       WHERE id = 1 AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
       RETURNING activated_at, owner_chat_hash, backoff_until, consecutive_failures`,
    params: [leaseId, expiresAt, now, now],
  };
}

/** Whether the lease is still ours and unexpired (checked before every send, step 9). */
export function holdsLeaseStatement(leaseId: string, now: string): Statement {
  return { sql: "SELECT id FROM notification_state WHERE id = 1 AND lease_id = ? AND lease_expires_at > ?", params: [leaseId, now] };
}

/** Step 12: releases the lease only if it is still ours. */
export function releaseLeaseStatement(leaseId: string, now: string): Statement {
  return {
    sql: "UPDATE notification_state SET lease_id = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = 1 AND lease_id = ?",
    params: [now, leaseId],
  };
}

/** Step 5: stores the chat hash when none is pinned yet (never overwrites one). */
export function pinChatStatement(chatHash: string, now: string): Statement {
  return {
    sql: "UPDATE notification_state SET owner_chat_hash = ?, updated_at = ? WHERE id = 1 AND owner_chat_hash IS NULL",
    params: [chatHash, now],
  };
}

/** Step 11: a delivery resets the failure streak. */
export function recordDeliveryStatement(now: string): Statement {
  return { sql: "UPDATE notification_state SET consecutive_failures = 0, updated_at = ? WHERE id = 1", params: [now] };
}

/**
 * Step 11: a failed attempt adds one to the streak and, when given, moves the
 * global backoff (429 `retry_after`, or an hour after 401/403/404). A backoff
 * never moves earlier than one already set.
 */
export function recordFailureStatement(now: string, backoffUntil: string | null): Statement {
  return {
    sql: `UPDATE notification_state SET consecutive_failures = consecutive_failures + 1,
         backoff_until = CASE WHEN ? IS NULL THEN backoff_until
                              WHEN backoff_until IS NULL OR backoff_until < ? THEN ?
                              ELSE backoff_until END,
         updated_at = ?
       WHERE id = 1`,
    params: [backoffUntil, backoffUntil, backoffUntil, now],
    // Never retried (09 §5.1, decision 178): a counter bumped twice is not the same as once.
    idempotent: false,
  };
}

// ---------------------------------------------------------------- magnt outbox (read only, 08 §12)

/** Every outbox state (the CHECK constraint of 0004). */
export const OUTBOX_STATES = ["pending", "sending", "retry_wait", "delivered", "failed", "skipped"] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];

/** The outbox columns `magnt outbox` shows, in SELECT order: references and delivery metadata, never text. */
export const OUTBOX_ROW_COLUMNS = [
  "outbox_id",
  "source_kind",
  "source_id",
  "state",
  "attempts",
  "next_attempt_at",
  "last_attempt_at",
  "last_error_code",
  "last_http_status",
  "delivered_at",
  "telegram_message_id",
  "created_at",
] as const;

/** The notifier's one state row; the chat pin only as pinned or not, never its hash. */
export const NOTIFIER_STATE_SQL =
  "SELECT activated_at, owner_chat_hash IS NOT NULL AS chat_pinned, lease_expires_at, backoff_until, consecutive_failures FROM notification_state WHERE id = 1";

/** Rows per state. */
export const OUTBOX_COUNTS_SQL = "SELECT state, COUNT(*) AS n FROM notification_outbox GROUP BY state";

const OUTBOX_ROWS_SELECT = `SELECT ${OUTBOX_ROW_COLUMNS.join(", ")} FROM notification_outbox`;
const OUTBOX_ROWS_ORDER = "ORDER BY created_at DESC, outbox_id DESC LIMIT ?";

/** Outbox rows, newest first, of one state or all. */
export function outboxRowsStatement(state: OutboxState | null, limit: number): Statement {
  return state === null
    ? { sql: `${OUTBOX_ROWS_SELECT} ${OUTBOX_ROWS_ORDER}`, params: [limit] }
    : { sql: `${OUTBOX_ROWS_SELECT} WHERE state = ? ${OUTBOX_ROWS_ORDER}`, params: [state, limit] };
}
