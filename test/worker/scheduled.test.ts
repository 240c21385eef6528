/** The monolith's cron entry point (05 §8): one content-free event per run. */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../worker/entries/monolith";
import { captureConsole, doorEnv } from "../helpers/door";

async function runCron(overrides: Record<string, unknown> = {}) {
  const logs = captureConsole();
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }), doorEnv(overrides));
  await waitOnExecutionContext(ctx);
  return logs;
}

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

  it("never claims a delivery while this build has no Telegram adapter", async () => {
    const logs = await runCron({ TELEGRAM_NOTIFICATIONS_ENABLED: "true", TELEGRAM_BOT_TOKEN: "CANARY-token", TELEGRAM_OWNER_CHAT_ID: "CANARY-chat" });
    const event = JSON.parse(logs.lines()[0]!);
    expect(event).toMatchObject({ outcome: "misconfigured", delivered: 0, attempted: 0 });
    expect(logs.lines().join("\n")).not.toContain("CANARY");
  });
});
