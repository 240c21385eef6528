/**
 * The hourly cleanup (05 §5.1): when the scheduled minute is 0, whatever the
 * flags, delete expired dialogue fetch-attempt windows (older than two hours)
 * and spent owner OAuth ids whose `expires_at` has passed. These are the only
 * rows the door ever deletes by itself (09 §1); contacts, signals,
 * observations and the outbox are never touched.
 *
 * Both tables arrive with later migrations (0006, 0007). A missing table — or
 * any other failure — is ignored on purpose: the next hour tries again, and
 * the cron run's notification outcome must not depend on housekeeping.
 */
import { run, statement } from "../storage/d1";

const FETCH_ATTEMPT_RETENTION_MS = 2 * 60 * 60 * 1000;

/** True when the scheduled time falls on minute 0 (UTC minutes equal local minutes for whole-hour zones; the cron is UTC). */
export function isCleanupMinute(scheduledTime: number): boolean {
  return new Date(scheduledTime).getUTCMinutes() === 0;
}

export async function hourlyCleanup(db: D1Database | undefined, now: Date): Promise<void> {
  if (db === undefined) return;
  const cutoff = new Date(now.getTime() - FETCH_ATTEMPT_RETENTION_MS).toISOString();
  await ignoreFailure(run(db, statement("DELETE FROM dialogue_fetch_attempts WHERE window_start < ?", cutoff)));
  await ignoreFailure(run(db, statement("DELETE FROM owner_oauth_spent WHERE expires_at < ?", now.toISOString())));
}

async function ignoreFailure(work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch {
    // Intentionally ignored (see the module comment): housekeeping retries every hour.
  }
}
