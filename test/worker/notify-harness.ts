/**
 * Driving the cron run in the workers suites (05): a controllable clock, the
 * flags and secrets of a configured notifier, direct inserts of contacts and
 * observations with chosen timestamps, and readers of the outbox and state.
 */
import { createScheduledController } from "cloudflare:test";
import type { Env } from "../../worker/config/env";
import type { ScheduledEvent } from "../../worker/contracts/events";
import { runScheduled } from "../../worker/notify/index";
import { doorEnv } from "../helpers/door";
import { db, selectRows } from "../helpers/db";

type Overrides = Partial<Record<keyof Env, unknown>>;

/** A bot token in the Bot API's form and a numeric chat id, both unique per file. */
export const TOKEN = `4242424242:CANARYtoken${crypto.randomUUID().replaceAll("-", "")}`;
export const CHAT_ID = `7${Array.from(crypto.getRandomValues(new Uint8Array(13)), (byte) => byte % 10).join("")}`;

export const NOTIFY_ON = {
  TELEGRAM_NOTIFICATIONS_ENABLED: "true",
  TELEGRAM_BOT_TOKEN: TOKEN,
  TELEGRAM_OWNER_CHAT_ID: CHAT_ID,
} as const;

/** The test clock: every run sees `clock.now()`; tests move it explicitly. */
export const clock = {
  ms: Date.now(),
  now(): Date {
    return new Date(this.ms);
  },
  iso(offsetSeconds = 0): string {
    return new Date(this.ms + offsetSeconds * 1000).toISOString();
  },
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  },
  reset(): void {
    // A minute that is never 0, so the hourly cleanup runs only where a test asks for it; and never
    // ahead of the real clock, because rows written by the code under test carry the real time.
    const now = new Date();
    const real = now.getTime();
    now.setUTCMinutes(30, 0, 0);
    this.ms = now.getTime() > real ? now.getTime() - 60 * 60 * 1000 : now.getTime();
  },
};

/** One cron run with the notifier configured (overrides may remove or change anything). */
export async function cron(overrides: Overrides = {}, options: { scheduledTime?: number; timeoutMs?: number } = {}): Promise<ScheduledEvent> {
  return runScheduled(
    createScheduledController({ cron: "* * * * *", scheduledTime: options.scheduledTime ?? clock.ms }),
    doorEnv({ ...NOTIFY_ON, ...overrides }),
    "monolith",
    { now: () => clock.now(), telegramTimeoutMs: options.timeoutMs ?? 50 },
  );
}

export async function resetNotifyTables(): Promise<void> {
  await db().batch([
    db().prepare("DELETE FROM notification_outbox"),
    db().prepare("DELETE FROM notification_state"),
    db().prepare("DELETE FROM contacts"),
    db().prepare("DELETE FROM observed_task_signals"),
  ]);
}

export interface ContactFields {
  createdAt: string;
  test?: boolean;
  summary?: string;
  replyTo?: string | null;
  previous?: string | null;
  operator?: string | null;
  agentIdentity?: string | null;
  foundVia?: string | null;
}

/** Inserts a contact row as the store would (ids in the door's form), returning its id. */
export async function addContact(fields: ContactFields): Promise<string> {
  const id = `mc_${crypto.randomUUID()}`;
  await db()
    .prepare(
      `INSERT INTO contacts (contact_id, created_at, summary, reply_to, previous_contact_id, operator, agent_identity, found_via,
         self_reported_test, submission_id, payload_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      id,
      fields.createdAt,
      fields.summary ?? "A short hello",
      fields.replyTo ?? null,
      fields.previous ?? null,
      fields.operator ?? null,
      fields.agentIdentity ?? null,
      fields.foundVia ?? null,
      fields.test === true ? 1 : 0,
      crypto.randomUUID(),
      "0".repeat(64),
    )
    .run();
  return id;
}

export async function addObservation(fields: { createdAt: string; goal?: string; blocker?: string | null; tried?: string | null; test?: boolean }): Promise<string> {
  const id = `ob_${crypto.randomUUID().replaceAll("-", "")}`;
  await db()
    .prepare("INSERT INTO observed_task_signals (observation_id, created_at, goal, blocker, tried, self_reported_test) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(id, fields.createdAt, fields.goal ?? "deploy a worker", fields.blocker ?? null, fields.tried ?? null, fields.test === true ? 1 : 0)
    .run();
  return id;
}

/** Puts a row straight into the outbox (to force sources the discovery would never pick). */
export async function forceOutboxRow(
  kind: "contact" | "observation",
  sourceId: string,
  fields: { createdAt: string; state?: string; attempts?: number; nextAttemptAt?: string; lastAttemptAt?: string | null },
): Promise<string> {
  const id = `nt_${crypto.randomUUID().replaceAll("-", "")}`;
  await db()
    .prepare(
      `INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, state, attempts, next_attempt_at, last_attempt_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(id, kind, sourceId, fields.createdAt, fields.state ?? "pending", fields.attempts ?? 0, fields.nextAttemptAt ?? fields.createdAt, fields.lastAttemptAt ?? null)
    .run();
  return id;
}

export interface OutboxRow {
  outbox_id: string;
  source_kind: string;
  source_id: string;
  created_at: string;
  state: string;
  attempts: number;
  next_attempt_at: string;
  last_attempt_at: string | null;
  last_error_code: string | null;
  last_http_status: number | null;
  delivered_at: string | null;
  telegram_message_id: number | null;
}

export async function outbox(): Promise<OutboxRow[]> {
  return selectRows<OutboxRow>("SELECT * FROM notification_outbox ORDER BY created_at, outbox_id");
}

export async function outboxRow(sourceId: string): Promise<OutboxRow | undefined> {
  return (await selectRows<OutboxRow>("SELECT * FROM notification_outbox WHERE source_id = ?", sourceId))[0];
}

export interface StateRow {
  activated_at: string;
  owner_chat_hash: string | null;
  lease_id: string | null;
  lease_expires_at: string | null;
  backoff_until: string | null;
  consecutive_failures: number;
}

export async function state(): Promise<StateRow | undefined> {
  return (await selectRows<StateRow>("SELECT * FROM notification_state WHERE id = 1"))[0];
}

/** Pins the activation time (and optionally a chat hash) as an earlier run would have. */
export async function pinActivation(activatedAt: string): Promise<void> {
  await db()
    .prepare("INSERT INTO notification_state (id, activated_at, consecutive_failures, updated_at) VALUES (1, ?, 0, ?)")
    .bind(activatedAt, activatedAt)
    .run();
}

/** Every contact and observation row in full, to prove a fault changed none of them. */
export async function sourceSnapshot(): Promise<unknown[]> {
  return [
    ...(await selectRows("SELECT * FROM contacts ORDER BY contact_id")),
    ...(await selectRows("SELECT * FROM observed_task_signals ORDER BY observation_id")),
  ];
}
