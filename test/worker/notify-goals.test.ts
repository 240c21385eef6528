/**
 * Goal notifications (03 §7, 05 §1): with TELEGRAM_GOAL_NOTIFICATIONS_ENABLED
 * exactly "true", a non-test observation and its outbox row are written in one
 * D1 batch — all or nothing — and only after the activation pin exists; test
 * observations are never enqueued; a failed batch leaves neither row and the
 * search still answers.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { observeSearchedTask } from "../../worker/signals/observe-task";
import type { Env } from "../../worker/config/env";
import { faultyD1 } from "../fakes/faulty-d1";
import { fakeTelegram } from "../fakes/telegram";
import { captureConsole, doorEnv } from "../helpers/door";
import { countRows, db, selectRows } from "../helpers/db";
import { search, uniqueWord } from "../helpers/signals";
import { clock, cron, NOTIFY_ON, outbox, pinActivation, resetNotifyTables } from "./notify-harness";

const GOALS_ON = { TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: "true" } as const;
const allow = async () => ({ limited: false });

beforeEach(async () => {
  clock.reset();
  await resetNotifyTables();
});

async function observe(options: { env?: Partial<Env>; test?: boolean; controlledTest?: boolean; database?: D1Database } = {}) {
  const goal = `${uniqueWord("goal")} build a thing`;
  const result = await observeSearchedTask(options.database ?? db(), { goal, blocker: "stuck", is_test: options.test === true }, {
    controlledTest: options.controlledTest === true,
    checkPublicWrite: allow,
    env: doorEnv(options.env ?? {}),
  });
  return { goal, result };
}

describe("the observation + outbox batch", () => {
  it("writes both rows, pending and due at the observation's time, once the activation pin exists", async () => {
    await pinActivation(clock.iso(-60));
    const statements = faultyD1(db());
    const { result } = await observe({ env: GOALS_ON, database: statements });
    expect(result).toEqual({ saved: true, rateLimited: false });
    const [observation] = await selectRows<{ observation_id: string; created_at: string }>("SELECT * FROM observed_task_signals");
    const rows = await outbox();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      source_kind: "observation",
      source_id: observation!.observation_id,
      created_at: observation!.created_at,
      next_attempt_at: observation!.created_at,
      state: "pending",
      attempts: 0,
      last_attempt_at: null,
      delivered_at: null,
    });
    expect(rows[0]!.outbox_id).toMatch(/^nt_[0-9a-f]{32}$/);
    // Nothing ran outside the batch (the wrapper records only single statements).
    expect(statements.statements).toEqual([]);
  });

  it("writes only the observation before the first enabled run has pinned the activation time", async () => {
    const { result } = await observe({ env: GOALS_ON });
    expect(result.saved).toBe(true);
    expect(await countRows("observed_task_signals")).toBe(1);
    expect(await countRows("notification_outbox")).toBe(0);
  });

  it("writes only the observation while the pin is later than the observation", async () => {
    await pinActivation(new Date(Date.now() + 3_600_000).toISOString());
    await observe({ env: GOALS_ON });
    expect(await countRows("observed_task_signals")).toBe(1);
    expect(await countRows("notification_outbox")).toBe(0);
  });

  it.each([
    ["is_test", { test: true }],
    ["the controlled-test User-Agent", { controlledTest: true }],
  ])("never enqueues a test observation (%s)", async (_label, options) => {
    await pinActivation(clock.iso(-60));
    await observe({ env: GOALS_ON, ...options });
    expect(await countRows("observed_task_signals", "self_reported_test = 1")).toBe(1);
    expect(await countRows("notification_outbox")).toBe(0);
  });

  it.each([undefined, "TRUE", "1", " true"])("does not enqueue while the goal flag is %j", async (value) => {
    await pinActivation(clock.iso(-60));
    await observe({ env: { TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: value } });
    expect(await countRows("observed_task_signals")).toBe(1);
    expect(await countRows("notification_outbox")).toBe(0);
  });

  it("is all or nothing: a failing outbox insert leaves no observation either", async () => {
    await pinActivation(clock.iso(-60));
    await db().prepare("ALTER TABLE notification_outbox RENAME TO notification_outbox_away").run();
    try {
      const { result } = await observe({ env: GOALS_ON });
      expect(result).toEqual({ saved: false, rateLimited: false });
      expect(await countRows("observed_task_signals")).toBe(0);
    } finally {
      await db().prepare("ALTER TABLE notification_outbox_away RENAME TO notification_outbox").run();
    }
  });

  it("is all or nothing: a failing batch leaves neither row", async () => {
    await pinActivation(clock.iso(-60));
    const failing = faultyD1(db(), { failBatches: true, message: "CANARYbatch" });
    const { result } = await observe({ env: GOALS_ON, database: failing });
    expect(result.saved).toBe(false);
    expect(await countRows("observed_task_signals")).toBe(0);
    expect(await countRows("notification_outbox")).toBe(0);
  });
});

describe("through the public search tool", () => {
  it("a non-test search enqueues its goal, and the cron sends it after the contacts", async () => {
    const telegram = fakeTelegram();
    clock.ms = Date.now() - 60_000;
    await cron();
    const goal = `${uniqueWord("goal")} searched through the door`;
    const { structured } = await search({ goal }, { overrides: { ...NOTIFY_ON, ...GOALS_ON } });
    expect(structured!.status).toBe("no_relevant_experience");
    expect(await countRows("notification_outbox", "source_kind = 'observation' AND state = 'pending'")).toBe(1);
    clock.ms = Date.now() + 1000;
    expect(await cron(GOALS_ON)).toMatchObject({ delivered: 1 });
    expect(telegram.texts()[0]).toContain("MAGNT · searched goal");
    expect(telegram.texts()[0]).toContain(goal);
  });

  it("still answers, with observed_task_saved: false, when the batch fails", async () => {
    await pinActivation(new Date(Date.now() - 60_000).toISOString());
    const logs = captureConsole();
    const failing = faultyD1(db(), { failBatches: true, message: "CANARYgoalbatch" });
    const { structured } = await search({ goal: uniqueWord() }, { overrides: { ...GOALS_ON, CONTACTS: failing } });
    expect(structured!.status).toBe("no_relevant_experience");
    expect(logs.events()[0]).toMatchObject({ observed_task_saved: false });
    expect(logs.lines().join("\n")).not.toContain("CANARYgoalbatch");
    expect(await countRows("observed_task_signals")).toBe(0);
    expect(await countRows("notification_outbox")).toBe(0);
  });
});
