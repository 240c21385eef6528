/**
 * One cron run (05 §5): lease, discovery, selection, state transitions, and
 * exactly one content-free `scheduled` event (05 §8).
 *
 * Invariants this module keeps:
 * - nothing is read or written while TELEGRAM_NOTIFICATIONS_ENABLED is not
 *   exactly "true", and nothing is sent while the configuration is incomplete;
 * - only the run holding the lease sends, and it re-checks the lease before
 *   every send, so overlapping runs never deliver a row twice;
 * - a source created before the activation pin, or marked as a test, is never
 *   sent; contact rows always go before goal rows;
 * - a failure changes outbox and state rows only — never a contact or an
 *   observation (notify never writes to those tables);
 * - the event carries counts only; no id, text, token, chat id or Telegram
 *   answer reaches a log (telemetry.ts is the only writer).
 */
import type { Role, ScheduledEvent, ScheduledOutcome } from "../contracts/events";
import type { Env } from "../config/env";
import { emitScheduledEvent } from "../edge/telemetry";
import { sha256Hex } from "../lib/hash";
import { onStorageError } from "../storage/failure";
import { scopeD1 } from "../storage/d1-retry";
import { hourlyCleanup, isCleanupMinute } from "./cleanup";
import { readNotifyConfig, type NotifyConfig } from "./config";
import {
  capPendingGoals,
  claim,
  discoverContacts,
  markDelivered,
  markFailed,
  markRetry,
  markSkipped,
  MAX_ATTEMPTS,
  recoverStaleSending,
  selectDue,
  STALE_SENDING_SECONDS,
  type DueRow,
  acquireLease,
  ensureState,
  holdsLease,
  LEASE_SECONDS,
  pinChat,
  recordDelivery,
  recordFailure,
  releaseLease,
} from "../storage/outbox/store";
import { loadSource, type Source } from "./sources";
import { sendTelegramMessage, type MessageModel, type TelegramResult } from "./telegram";

/** `delay(n) = min(60 × 2^(n−1), 3600)` seconds (05 §4): doubling from a minute, capped at an hour. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(60 * 2 ** (Math.max(1, attempts) - 1), 3600);
}

/** Test seams: a clock and a short Telegram timeout (10 §2). Production passes nothing. */
export interface SchedulerOptions {
  now?: () => Date;
  telegramTimeoutMs?: number;
}

/** A run stops after this many failed sends (05 §5 step 10). */
const FAILURES_PER_RUN = 3;
/** Global backoff after a bad token or chat (401/403/404) and the 429 bounds (05 §5 step 11). */
const AUTH_BACKOFF_SECONDS = 3600;
const RETRY_AFTER_DEFAULT_SECONDS = 60;
const RETRY_AFTER_MIN_SECONDS = 1;
const RETRY_AFTER_MAX_SECONDS = 3600;

type Counts = Pick<ScheduledEvent, "discovered" | "attempted" | "delivered" | "retried" | "failed" | "skipped" | "overflow_skipped">;

export async function runScheduled(controller: ScheduledController, env: Env, role: Role, options: SchedulerOptions = {}): Promise<ScheduledEvent> {
  const clock = options.now ?? (() => new Date());
  const startedAt = clock();
  const counts: Counts = { discovered: 0, attempted: 0, delivered: 0, retried: 0, failed: 0, skipped: 0, overflow_skipped: 0 };
  // One D1 retry scope per run (09 §5): its retry count goes into the event.
  const scoped = scopeD1(env);
  const outcome = await deliver(scoped.env, counts, clock, options);
  if (isCleanupMinute(controller.scheduledTime)) await hourlyCleanup(scoped.env.CONTACTS, clock());
  const d1Retries = scoped.d1Retries();
  const event: ScheduledEvent = {
    event_id: crypto.randomUUID(),
    time: startedAt.toISOString(),
    role,
    event_type: "scheduled",
    outcome,
    ...counts,
    duration_ms: Math.max(0, clock().getTime() - startedAt.getTime()),
    ...(d1Retries > 0 ? { d1_retries: d1Retries } : {}),
  };
  emitScheduledEvent(event);
  return event;
}

/** Steps 1–12 of 05 §5; any D1 failure ends the run as `storage_error`. */
async function deliver(env: Env, counts: Counts, clock: () => Date, options: SchedulerOptions): Promise<ScheduledOutcome> {
  const ready = readNotifyConfig(env);
  if (ready.kind !== "ready") return ready.kind;
  const { config } = ready;
  const { db } = config;
  const leaseId = crypto.randomUUID();
  let leased = false;
  try {
    return await onStorageError(async (): Promise<ScheduledOutcome> => {
      const now = clock();
      await ensureState(db, now.toISOString());
      const state = await acquireLease(db, leaseId, now.toISOString(), plusSeconds(now, LEASE_SECONDS));
      if (state === null) return "lease_busy";
      leased = true;

      const chatHash = await sha256Hex(config.chatId);
      if (state.owner_chat_hash === null) await pinChat(db, chatHash, now.toISOString());
      else if (state.owner_chat_hash !== chatHash) return "chat_mismatch";

      counts.discovered = await discoverContacts(db, state.activated_at);
      await recoverStaleSending(db, now.toISOString(), plusSeconds(now, -STALE_SENDING_SECONDS));
      counts.overflow_skipped = await capPendingGoals(db);
      if (state.backoff_until !== null && state.backoff_until > now.toISOString()) return "backoff";

      const due = await selectDue(db, now.toISOString());
      return await sendDue(config, due, state.activated_at, leaseId, counts, clock, options);
    }, () => "storage_error");
  } finally {
    // Step 12 (also after an early stop): release only if still ours; a failure here only delays the next run.
    if (leased) await onStorageError(() => releaseLease(db, leaseId, clock().toISOString()), () => undefined);
  }
}

/** Steps 9–11: one row after another, each behind a fresh lease check and a claim. */
async function sendDue(
  config: NotifyConfig,
  due: readonly DueRow[],
  activatedAt: string,
  leaseId: string,
  counts: Counts,
  clock: () => Date,
  options: SchedulerOptions,
): Promise<ScheduledOutcome> {
  const { db } = config;
  let failuresThisRun = 0;
  for (const row of due) {
    const now = clock();
    if (!(await holdsLease(db, leaseId, now.toISOString()))) return "lease_lost";
    const attempts = await claim(db, row.outbox_id, now.toISOString(), leaseId);
    if (attempts === null) continue;
    counts.attempted += 1;

    const source = await loadSource(db, row.source_kind, row.source_id);
    if (source === null || source.isTest || source.createdAt < activatedAt) {
      await markSkipped(db, row.outbox_id, source === null ? "source_missing" : source.isTest ? "test_source" : "before_activation");
      counts.skipped += 1;
      continue;
    }

    const result = await sendTelegramMessage(config, messageModel(source, row.outbox_id, attempts), {
      ...(options.telegramTimeoutMs === undefined ? {} : { timeoutMs: options.telegramTimeoutMs }),
    });
    const after = clock();
    if (result.ok) {
      await markDelivered(db, row.outbox_id, after.toISOString(), result.messageId);
      await recordDelivery(db, after.toISOString());
      counts.delivered += 1;
      continue;
    }

    failuresThisRun += 1;
    const stop = await applyFailure(db, row.outbox_id, attempts, result, after, counts);
    if (stop || failuresThisRun >= FAILURES_PER_RUN) break;
  }
  return "ok";
}

/**
 * 05 §4 and §5 step 11 for one failed send. Returns true when the run must
 * stop: after a 429, and after a bad token or chat has set the global
 * backoff (sending on would only repeat the same refusal).
 */
async function applyFailure(
  db: D1Database,
  outboxId: string,
  attempts: number,
  result: Extract<TelegramResult, { ok: false }>,
  now: Date,
  counts: Counts,
): Promise<boolean> {
  const status = result.httpStatus ?? null;
  if (result.kind === "http_429") {
    const seconds = clamp(result.retryAfterSeconds ?? RETRY_AFTER_DEFAULT_SECONDS, RETRY_AFTER_MIN_SECONDS, RETRY_AFTER_MAX_SECONDS);
    const backoffUntil = plusSeconds(now, seconds);
    await markRetry(db, outboxId, backoffUntil, result.kind, status);
    await recordFailure(db, now.toISOString(), backoffUntil);
    counts.retried += 1;
    return true;
  }
  const authFailure = status === 401 || status === 403 || status === 404;
  if (attempts >= MAX_ATTEMPTS) {
    await markFailed(db, outboxId, result.kind, status);
    counts.failed += 1;
  } else {
    await markRetry(db, outboxId, plusSeconds(now, retryDelaySeconds(attempts)), result.kind, status);
    counts.retried += 1;
  }
  await recordFailure(db, now.toISOString(), authFailure ? plusSeconds(now, AUTH_BACKOFF_SECONDS) : null);
  return authFailure;
}

/** The message model: ids, times, booleans and the excerpt source — nothing else of the source row. */
function messageModel(source: Source, outboxId: string, attempts: number): MessageModel {
  return source.kind === "contact"
    ? {
        kind: "contact",
        contactId: source.id,
        createdAt: source.createdAt,
        hasReplyChannel: source.hasReplyChannel,
        isFollowUp: source.isFollowUp,
        outboxId,
        attempts,
        excerptSource: source.text,
      }
    : {
        kind: "observation",
        observationId: source.id,
        createdAt: source.createdAt,
        hasBlocker: source.hasBlocker,
        hasTried: source.hasTried,
        outboxId,
        attempts,
        excerptSource: source.text,
      };
}

function plusSeconds(date: Date, seconds: number): string {
  return new Date(date.getTime() + seconds * 1000).toISOString();
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(value)));
}
