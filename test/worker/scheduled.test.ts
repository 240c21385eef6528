/**
 * The monolith's cron entry point (05 §5, §8), called the way the runtime
 * calls it: one content-free event per run, off by default, and a real
 * delivery through the fake Telegram when the flag and secrets are set.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../worker/entries/monolith";
import { fakeTelegram } from "../fakes/telegram";
import { captureConsole, doorEnv } from "../helpers/door";
import { addContact, CHAT_ID, NOTIFY_ON, outboxRow, resetNotifyTables, state, TOKEN } from "./notify-harness";

async function runCron(overrides: Record<string, unknown> = {}) {
  const logs = captureConsole();
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), doorEnv(overrides));
  await waitOnExecutionContext(ctx);
  return logs;
}

beforeEach(async () => {
  await resetNotifyTables();
});

describe("scheduled run", () => {
  it("reports disabled, with zero counts, while notifications are off", async () => {
    const logs = await runCron();
    expect(logs.lines()).toHaveLength(1);
    const event = JSON.parse(logs.lines()[0]!);
    expect(Object.keys(event)).toEqual([
      "event_id", "time", "role", "event_type", "outcome", "discovered", "attempted", "delivered", "retried", "failed", "skipped",
      "overflow_skipped", "duration_ms",
    ]);
    expect(event).toMatchObject({ role: "monolith", event_type: "scheduled", outcome: "disabled", delivered: 0 });
  });

  it("is misconfigured, sending nothing, when a secret is missing", async () => {
    const telegram = fakeTelegram();
    const logs = await runCron({ TELEGRAM_NOTIFICATIONS_ENABLED: "true", TELEGRAM_BOT_TOKEN: TOKEN });
    expect(JSON.parse(logs.lines()[0]!)).toMatchObject({ outcome: "misconfigured", delivered: 0, attempted: 0 });
    expect(telegram.requests).toEqual([]);
    expect(logs.lines().join("\n")).not.toContain(TOKEN);
  });

  it("pins activation on the first run and delivers a later contact on the next", async () => {
    const telegram = fakeTelegram();
    expect(JSON.parse((await runCron(NOTIFY_ON)).lines()[0]!)).toMatchObject({ outcome: "ok", discovered: 0 });
    // Created exactly at the activation pin: enqueued (≥ activated_at) and already due.
    const contactId = await addContact({ createdAt: (await state())!.activated_at });
    const logs = await runCron(NOTIFY_ON);
    expect(JSON.parse(logs.lines()[0]!)).toMatchObject({ outcome: "ok", discovered: 1, delivered: 1 });
    expect(telegram.requests).toHaveLength(1);
    expect(await outboxRow(contactId)).toMatchObject({ state: "delivered" });
    expect(logs.lines().join("\n")).not.toContain(CHAT_ID);
  });
});
