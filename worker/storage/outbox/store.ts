/**
 * Runs the `outbox` group's statements (./sql.ts) through d1.ts; every
 * function throws `StorageError` on a fault, and the cron run turns it into
 * its `storage_error` outcome in one place (notify/scheduler.ts).
 */
import { all, first, run, type Statement } from "../d1";
import { newOutboxId } from "../ids";
import {
  acquireLeaseStatement,
  capPendingGoalsStatement,
  claimStatement,
  discoverContactsStatement,
  enqueueObservationStatement as enqueueObservationSql,
  ensureStateStatement,
  holdsLeaseStatement,
  markDeliveredStatement,
  markFailedStatement,
  markRetryStatement,
  markSkippedStatement,
  pinChatStatement,
  recordDeliveryStatement,
  recordFailureStatement,
  recoverStaleSendingStatement,
  releaseLeaseStatement,
  selectDueStatement,
  type DueRow,
  type SkipReason,
  type StateRow,
} from "./sql";

export {
  DISCOVERY_LIMIT,
  LEASE_SECONDS,
  MAX_ATTEMPTS,
  PENDING_GOAL_CAP,
  SEND_LIMIT,
  STALE_SENDING_SECONDS,
  type DueRow,
  type OutboxState,
  type SkipReason,
  type SourceKind,
  type StateRow,
} from "./sql";

/** The goal-notification enqueue with a fresh outbox id, for the observation batch (05 §3). */
export function enqueueObservationStatement(observationId: string, createdAt: string, outboxId: string = newOutboxId()): Statement {
  return enqueueObservationSql(observationId, createdAt, outboxId);
}

const changes = async (result: Promise<D1Result>): Promise<number> => (await result).meta.changes ?? 0;

/** Returns how many outbox rows discovery inserted. */
export const discoverContacts = (db: D1Database, activatedAt: string): Promise<number> => changes(run(db, discoverContactsStatement(activatedAt)));
export const recoverStaleSending = (db: D1Database, now: string, staleBefore: string): Promise<number> =>
  changes(run(db, recoverStaleSendingStatement(now, staleBefore)));
/** Returns how many rows were skipped (`overflow_skipped`). */
export const capPendingGoals = (db: D1Database): Promise<number> => changes(run(db, capPendingGoalsStatement()));
export const selectDue = (db: D1Database, now: string): Promise<DueRow[]> => all<DueRow>(db, selectDueStatement(now));

/** The new attempt count, or null when someone else claimed the row first. */
export async function claim(db: D1Database, outboxId: string, now: string, leaseId: string): Promise<number | null> {
  const row = await first<{ attempts: number }>(db, claimStatement(outboxId, now, leaseId));
  return row === null ? null : row.attempts;
}

export async function markSkipped(db: D1Database, outboxId: string, reason: SkipReason): Promise<void> {
  await run(db, markSkippedStatement(outboxId, reason));
}
export async function markDelivered(db: D1Database, outboxId: string, now: string, messageId: number): Promise<void> {
  await run(db, markDeliveredStatement(outboxId, now, messageId));
}
export async function markRetry(db: D1Database, outboxId: string, nextAttemptAt: string, errorCode: string, httpStatus: number | null): Promise<void> {
  await run(db, markRetryStatement(outboxId, nextAttemptAt, errorCode, httpStatus));
}
export async function markFailed(db: D1Database, outboxId: string, errorCode: string, httpStatus: number | null): Promise<void> {
  await run(db, markFailedStatement(outboxId, errorCode, httpStatus));
}

export async function ensureState(db: D1Database, now: string): Promise<void> {
  await run(db, ensureStateStatement(now));
}
/** The state row when this run took the lease; null when another run holds it. */
export const acquireLease = (db: D1Database, leaseId: string, now: string, expiresAt: string): Promise<StateRow | null> =>
  first<StateRow>(db, acquireLeaseStatement(leaseId, now, expiresAt));
export async function holdsLease(db: D1Database, leaseId: string, now: string): Promise<boolean> {
  return (await all<{ id: number }>(db, holdsLeaseStatement(leaseId, now))).length === 1;
}
export async function releaseLease(db: D1Database, leaseId: string, now: string): Promise<void> {
  await run(db, releaseLeaseStatement(leaseId, now));
}
export async function pinChat(db: D1Database, chatHash: string, now: string): Promise<void> {
  await run(db, pinChatStatement(chatHash, now));
}
export async function recordDelivery(db: D1Database, now: string): Promise<void> {
  await run(db, recordDeliveryStatement(now));
}
export async function recordFailure(db: D1Database, now: string, backoffUntil: string | null): Promise<void> {
  await run(db, recordFailureStatement(now, backoffUntil));
}
