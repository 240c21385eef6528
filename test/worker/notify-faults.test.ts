/**
 * Faults and privacy of the cron run (05 DoD, 10 §3): a D1 failure at any
 * statement, and every Telegram failure, leave every contact and observation
 * exactly as it was; notify never writes to those tables; and no log line
 * ever carries the token, the chat id (or its hash), a Telegram answer body,
 * visitor text or a D1 error text.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../worker/lib/hash";
import { faultyD1 } from "../fakes/faulty-d1";
import { fakeTelegram, type TelegramAnswer } from "../fakes/telegram";
import { captureConsole } from "../helpers/door";
import { db } from "../helpers/db";
import { Canaries } from "../helpers/privacy";
import { addContact, addObservation, CHAT_ID, clock, cron, forceOutboxRow, resetNotifyTables, sourceSnapshot, state, TOKEN } from "./notify-harness";

beforeEach(async () => {
  clock.reset();
  await resetNotifyTables();
});

const WRITES_TO_SOURCES = /^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+(contacts|observed_task_signals)\b/i;

/**
 * A failure anywhere ends the run as storage_error — except a failed lease
 * release at the very end, which only delays the next run (the lease expires).
 */
function expectedOutcome(failedSql: string | undefined): string {
  if (failedSql === undefined) return "ok";
  return /SET lease_id = NULL/.test(failedSql) ? "ok" : "storage_error";
}

/** One due contact, one due goal row, a stale sending row: every code path of a run has work to do. */
async function busyScenario(canaries?: Canaries): Promise<void> {
  await db()
    .prepare("INSERT INTO notification_state (id, activated_at, consecutive_failures, updated_at) VALUES (1, ?, 0, ?)")
    .bind(clock.iso(-600), clock.iso(-600))
    .run();
  const text = (label: string) => (canaries ? canaries.make(label) : label);
  await addContact({ createdAt: clock.iso(-300), summary: text("summary"), replyTo: text("replyto"), operator: text("operator") });
  const stale = await addContact({ createdAt: clock.iso(-400), summary: text("stalesummary") });
  await forceOutboxRow("contact", stale, { createdAt: clock.iso(-400), state: "sending", attempts: 1, lastAttemptAt: clock.iso(-300) });
  const observation = await addObservation({ createdAt: clock.iso(-200), goal: text("goal"), blocker: text("blocker") });
  await forceOutboxRow("observation", observation, { createdAt: clock.iso(-200) });
}

describe("contacts and observations stay intact", () => {
  it("after a D1 failure at every single statement of a run", async () => {
    fakeTelegram();
    let reachedEnd = false;
    for (let nth = 1; nth <= 60 && !reachedEnd; nth += 1) {
      await resetNotifyTables();
      await busyScenario();
      const before = await sourceSnapshot();
      const logs = captureConsole();
      const faulty = faultyD1(db(), { failNth: nth, message: "CANARYd1error" });
      const event = await cron({ CONTACTS: faulty });
      reachedEnd = faulty.statements.length < nth;
      expect(event.outcome).toBe(expectedOutcome(faulty.statements[nth - 1]?.sql));
      expect(await sourceSnapshot()).toEqual(before);
      expect(faulty.statements.filter((statement) => WRITES_TO_SOURCES.test(statement.sql))).toEqual([]);
      expect(logs.lines()).toHaveLength(1);
      expect(logs.lines()[0]).not.toContain("CANARYd1error");
    }
    expect(reachedEnd).toBe(true);
  });

  it("after D1 reports success: false at every single statement", async () => {
    fakeTelegram();
    let reachedEnd = false;
    for (let nth = 1; nth <= 60 && !reachedEnd; nth += 1) {
      await resetNotifyTables();
      await busyScenario();
      const before = await sourceSnapshot();
      const faulty = faultyD1(db(), { failNth: nth, unsuccessful: true });
      const event = await cron({ CONTACTS: faulty });
      reachedEnd = faulty.statements.length < nth;
      expect(event.outcome).toBe(expectedOutcome(faulty.statements[nth - 1]?.sql));
      expect(await sourceSnapshot()).toEqual(before);
    }
    expect(reachedEnd).toBe(true);
  });

  it.each<[string, TelegramAnswer]>([
    ["500", { status: 500 }],
    ["401", { status: 401 }],
    ["429", { status: 429, retryAfter: 5 }],
    ["302", { status: 302, location: "https://elsewhere.example/" }],
    ["ok_false", "ok_false"],
    ["huge", "huge"],
    ["network", "network"],
    ["hang", "hang"],
  ])("after a Telegram %s", async (_label, answer) => {
    const telegram = fakeTelegram();
    telegram.fallback = answer;
    await busyScenario();
    const before = await sourceSnapshot();
    await cron();
    clock.advance(7200);
    await cron();
    expect(await sourceSnapshot()).toEqual(before);
  });
});

describe("canaries never reach a log line", () => {
  it("token, chat id and its hash, Telegram error bodies, visitor text and D1 errors", async () => {
    const canaries = new Canaries();
    const bodyCanary = (label: string) => canaries.make(label);
    const telegram = fakeTelegram();
    const logs = captureConsole();
    await busyScenario(canaries);
    telegram.queue(
      { status: 500, body: `upstream exploded ${bodyCanary("body500")}` },
      { status: 400, body: JSON.stringify({ ok: false, description: bodyCanary("body400") }) },
      { status: 401, body: JSON.stringify({ ok: false, description: bodyCanary("body401") }) },
    );
    await cron();
    clock.advance(3600);
    telegram.queue({ status: 429, body: JSON.stringify({ ok: false, description: bodyCanary("body429"), parameters: { retry_after: 1 } }) });
    await cron();
    clock.advance(5);
    telegram.queue({ status: 302, body: bodyCanary("body302"), location: `https://elsewhere.example/${bodyCanary("location")}` }, "ok");
    await cron();
    clock.advance(3600);
    await cron();
    await cron({ CONTACTS: faultyD1(db(), { failNth: 3, message: bodyCanary("d1message") }) });
    await cron({ TELEGRAM_OWNER_CHAT_ID: "999999999" });

    expect(telegram.requests.length).toBeGreaterThanOrEqual(5);
    const lines = logs.lines();
    expect(lines.length).toBe(6);
    await canaries.assertAbsentFrom(lines);
    const haystack = lines.join("\n");
    for (const secret of [TOKEN, TOKEN.split(":")[1]!, CHAT_ID, await sha256Hex(CHAT_ID), (await state())!.owner_chat_hash!]) {
      expect(haystack).not.toContain(secret);
    }
    expect(haystack).not.toContain("api.telegram.org");
    expect(haystack).not.toMatch(/nt_[0-9a-f]{32}|mc_[0-9a-f-]{36}|ob_[0-9a-f]{32}/);
  });
});
