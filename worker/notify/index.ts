/**
 * Owner notifications (05): what other layers may use.
 *
 * - config.ts              flag, secrets, API origin → ready | disabled | misconfigured
 * - state.ts               `notification_state`: activation pin, chat pin, lease, backoff
 * - notification-queue.ts  `notification_outbox`: discovery, cap, claims, transitions
 * - sources.ts             the contact / observation a row refers to (read-only)
 * - telegram.ts            the adapter: message text and the Bot API call
 * - cleanup.ts             the hourly housekeeping of 05 §5.1
 * - scheduler.ts           one cron run and its `scheduled` event
 */
export { runScheduled, type SchedulerOptions } from "./scheduler";
