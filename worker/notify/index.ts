/**
 * Owner notifications (05): what other layers may use.
 *
 * - config.ts              flag, secrets, API origin → ready | disabled | misconfigured
 * - sources.ts             the contact / observation a row refers to (read-only)
 * - telegram.ts            the adapter: message text and the Bot API call
 * - cleanup.ts             the hourly housekeeping of 05 §5.1
 * - scheduler.ts           one cron run and its `scheduled` event
 *
 * The SQL of the outbox and its state row is the `outbox` storage group's
 * (`storage/outbox/`); the sources are read through the `contacts` and
 * `observations` groups. This capability holds no SQL.
 */
export { runScheduled, type SchedulerOptions } from "./scheduler";
