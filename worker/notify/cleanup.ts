/**
 * The hourly cleanup (05 §5.1): when the scheduled minute is 0, whatever the
 * flags, delete expired dialogue fetch-attempt windows (older than two hours)
 * and spent owner OAuth ids whose `expires_at` has passed. These are the only
 * rows the door ever deletes by itself (09 §1); contacts, signals,
 * observations and the outbox are never touched.
 *
 * Bounded work: each table is cleaned in batches of at most
 * `CLEANUP_BATCH_ROWS` rows per statement (`DELETE … WHERE rowid IN (SELECT …
 * LIMIT ?)`), at most `CLEANUP_BATCHES_PER_RUN` batches per table and run. A
 * backlog (a flood of wrong-attempt rows, a door that was down) is drained
 * over several hours instead of by one unbounded `DELETE` that would hold
 * D1's single writer — and every visitor's write behind it — for as long as
 * it takes, and spend a day's row writes in one statement.
 *
 * Both tables arrive with later migrations (0006, 0007). A missing table — or
 * any other storage fault — is ignored on purpose: the table's remaining batches
 * wait for the next hour, and the cron run's notification outcome must not
 * depend on housekeeping.
 */
import { run, type Statement } from "../storage/d1";
import { onStorageError } from "../storage/failure";
import { deleteExpiredFetchAttemptsStatement } from "../storage/dialogue/store";
import { deleteExpiredSpentStatement } from "../storage/oauth/store";

const FETCH_ATTEMPT_RETENTION_MS = 2 * 60 * 60 * 1000;

/** Rows one cleanup statement deletes at most (why these two numbers: docs/decisions.md 81). */
export const CLEANUP_BATCH_ROWS = 1000;
/** Batches per table per hourly run: at most 10 000 rows of each table an hour. */
export const CLEANUP_BATCHES_PER_RUN = 10;

/** True when the scheduled time falls on minute 0 (UTC minutes equal local minutes for whole-hour zones; the cron is UTC). */
export function isCleanupMinute(scheduledTime: number): boolean {
  return new Date(scheduledTime).getUTCMinutes() === 0;
}

export async function hourlyCleanup(db: D1Database | undefined, now: Date): Promise<void> {
  if (db === undefined) return;
  const cutoff = new Date(now.getTime() - FETCH_ATTEMPT_RETENTION_MS).toISOString();
  await deleteInBatches(db, deleteExpiredFetchAttemptsStatement(cutoff, CLEANUP_BATCH_ROWS));
  await deleteInBatches(db, deleteExpiredSpentStatement(now.toISOString(), CLEANUP_BATCH_ROWS));
}

/** Repeats one bounded delete until a batch comes back short, the run's bound is reached, or it fails. */
async function deleteInBatches(db: D1Database, batchDelete: Statement): Promise<void> {
  for (let batch = 0; batch < CLEANUP_BATCHES_PER_RUN; batch += 1) {
    const deleted = await onStorageError(async () => (await run(db, batchDelete)).meta.changes, () => null);
    // A fault is ignored on purpose (see the module comment): the rest waits for the next hour.
    if (deleted === null) return;
    // A short batch means nothing expired is left (a missing count is treated the same way).
    if (typeof deleted !== "number" || deleted < CLEANUP_BATCH_ROWS) return;
  }
}
