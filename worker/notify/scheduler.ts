/**
 * The cron run of the monolith (05 §5), which emits exactly one `scheduled`
 * event per run.
 *
 * This build has no Telegram delivery yet (the notifications issue adds the
 * outbox, lease and adapter behind this same entry point). Until then the run
 * reports `disabled` while TELEGRAM_NOTIFICATIONS_ENABLED is off, which is the
 * only state `magnt flags enable` allows without migration 0004, and
 * `misconfigured` otherwise — it never claims a delivery it did not make.
 */
import type { Role, ScheduledEvent, ScheduledOutcome } from "../contracts/events";
import type { Env } from "../config/env";
import { isOn } from "../config/flags";
import { emitScheduledEvent } from "../edge/telemetry";

export async function runScheduled(_controller: ScheduledController, env: Env, role: Role): Promise<ScheduledEvent> {
  const startedAt = Date.now();
  const outcome: ScheduledOutcome = isOn(env, "TELEGRAM_NOTIFICATIONS_ENABLED") ? "misconfigured" : "disabled";
  const event: ScheduledEvent = {
    event_id: crypto.randomUUID(),
    time: new Date(startedAt).toISOString(),
    role,
    event_type: "scheduled",
    outcome,
    discovered: 0,
    attempted: 0,
    delivered: 0,
    retried: 0,
    failed: 0,
    skipped: 0,
    overflow_skipped: 0,
    duration_ms: Math.max(0, Date.now() - startedAt),
  };
  emitScheduledEvent(event);
  return event;
}
