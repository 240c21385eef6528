/**
 * The one outbox-row statement two capabilities need (05 §4, 03 §7): the
 * goal-notification enqueue that `signals` batches with its observation
 * insert, and that `notify` owns the rest of the outbox SQL around. It lives
 * in storage/ because a capability never imports another capability; the
 * outbox table itself is described in 09 §3 (migration 0004).
 */
import { OUTBOX_ID_PREFIX } from "../contracts/ids";
import { randomHex } from "../lib/hash";
import { statement, type Statement } from "./d1";

/** `nt_` + 32 lower-case hex (00 §9); the SQL discovery uses the same form. */
export const newOutboxId = (): string => OUTBOX_ID_PREFIX + randomHex(16);

/**
 * Enqueues an observation for a goal notification: a `pending` row with
 * `next_attempt_at = created_at`, written only when the activation pin exists
 * and is not later than the observation (05 §3), so nothing searched before the
 * first enabled cron run can ever be sent. A guard that inserts no row is not
 * a failure; a second row for the same source cannot exist (UNIQUE).
 */
export function enqueueObservationStatement(observationId: string, createdAt: string, outboxId: string = newOutboxId()): Statement {
  return statement(
    `INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, state, attempts, next_attempt_at)
     SELECT ?, 'observation', ?, ?, 'pending', 0, ?
     WHERE EXISTS (SELECT 1 FROM notification_state WHERE id = 1 AND activated_at <= ?)
     ON CONFLICT(source_kind, source_id) DO NOTHING`,
    outboxId,
    observationId,
    createdAt,
    createdAt,
    createdAt,
  );
}
