/**
 * The per-minute and the hourly cron survive each other (issue 20 item 5):
 * the in-workerd lease tests of test/worker/notify-scheduler.test.ts, on the
 * real local door. `npm start` on a temp state with contact and goal
 * notifications on, Telegram an in-process loopback stand-in that records
 * every message by the source id it carries, and a backlog of expired
 * dialogue fetch-attempt windows and spent OAuth ids for the hourly cleanup.
 *
 * While the mixed write load of test/crash/workload.ts runs, cron passes go
 * to Wrangler's scheduled-handler URL two (now and then three) at a time, each
 * with a minute-0 scheduled time, so every pass also runs the hourly cleanup
 * in the same handler as the other's delivery. After the load, passes go on
 * until nothing is due; then, with the door stopped, test/crash/checks.ts
 * (with no kills, so no resend is excused) holds every receipt, row, outbox
 * row and Telegram message against each other, and the lease row must be
 * free. No timing is asserted: the load runs for a fixed wall-clock span and
 * whatever the machine manages in it is checked; the e2e project's limits
 * (180 s per hook and test) only stop a hang.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCrashRun, type ContactRow, type ObservationRow, type OutboxRow, type SignalRow } from "../crash/checks";
import { LocalDoor, STAND_IN_CHAT_ID } from "../crash/local-door";
import { startTelegramStandIn, type TelegramStandIn } from "../crash/telegram-stand-in";
import { Workload } from "../crash/workload";
import { removeTempDirs, stopAllDoors } from "./helpers";

/** Expired rows per cleanup table: more than one run's 10 batches of 1000, so several overlapping runs share the backlog. */
const EXPIRED_ROWS = 15_000;
const LIVE_ROWS = 50;
const LOAD_MS = 20_000;
const LANES = 2;
/** Bounded waits for a loaded 2-core machine: they stop a hang, never measure speed. */
const DRAIN_TIMEOUT_MS = 120_000;

let standIn: TelegramStandIn;
let local: LocalDoor;

/** A minute-0 scheduled time in the current hour: the handler runs the hourly cleanup (05 §5.1). */
function minuteZero(): number {
  const time = new Date();
  time.setUTCMinutes(0, 0, 0);
  return time.getTime();
}

beforeAll(async () => {
  standIn = await startTelegramStandIn({ delayMs: () => Math.floor(Math.random() * 60) });
  local = await LocalDoor.prepare("cron-overlap", {
    telegramApiOrigin: standIn.origin,
    flags: ["TELEGRAM_NOTIFICATIONS_ENABLED", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED"],
    flagsVia: "dev-vars",
  });
  // npm start applies the migrations; the backlog goes in while the door runs (nothing reads those tables but the cleanup).
  await local.start();
  const series = (n: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})`;
  await local.d1Statements([
    `INSERT INTO dialogue_fetch_attempts (key_hash, window_start, failures) ${series(EXPIRED_ROWS)} SELECT 'expired-' || i, '2020-01-01T00:00:00.000Z', 1 FROM n`,
    `INSERT INTO dialogue_fetch_attempts (key_hash, window_start, failures) ${series(LIVE_ROWS)} SELECT 'live-' || i, '2999-01-01T00:00:00.000Z', 1 FROM n`,
    `INSERT INTO owner_oauth_spent (id, kind, expires_at) ${series(EXPIRED_ROWS)} SELECT 'expired-' || i, 'code', '2020-01-01T00:00:00.000Z' FROM n`,
    `INSERT INTO owner_oauth_spent (id, kind, expires_at) ${series(LIVE_ROWS)} SELECT 'live-' || i, 'refresh', '2999-01-01T00:00:00.000Z' FROM n`,
  ]);
});

afterAll(async () => {
  await stopAllDoors();
  await standIn?.close();
  removeTempDirs();
});

describe("overlapping per-minute and hourly cron passes under a write load (real local door, stand-in Telegram)", () => {
  it("never double-send, never lose a row, deliver every due row once, and leave the lease free", async () => {
    // The activation pass pins activated_at before any load contact exists (05 §5 step 3).
    expect(await local.cronPass()).toBe("200");

    const workload = new Workload(20_005, () => local.mcp);
    let stopped = false;
    const statuses: string[] = [];
    let rounds = 0;
    const passes = (count: number) => Promise.all(Array.from({ length: count }, () => local.cronPass(minuteZero())));
    const cron = (async () => {
      while (!stopped) {
        rounds += 1;
        statuses.push(...(await passes(rounds % 4 === 0 ? 3 : 2)));
      }
    })();
    const load = workload.drive(LANES, 1, () => stopped);
    await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
    stopped = true;
    await Promise.all([load, cron]);

    // After the load: overlapping passes until nothing is due and every contact is queued (bounded).
    const drainBegin = Date.now();
    for (;;) {
      statuses.push(...(await passes(2)));
      const [[left]] = (await local.d1Statements([
        `SELECT
           (SELECT COUNT(*) FROM notification_outbox WHERE state IN ('pending', 'retry_wait', 'sending')) AS due,
           (SELECT COUNT(*) FROM contacts c WHERE c.self_reported_test = 0
              AND NOT EXISTS (SELECT 1 FROM notification_outbox o WHERE o.source_kind = 'contact' AND o.source_id = c.contact_id)) AS unqueued`,
      ])) as [[{ due: number; unqueued: number }]];
      if (left.due === 0 && left.unqueued === 0) break;
      if (Date.now() - drainBegin > DRAIN_TIMEOUT_MS) throw new Error(`the outbox did not drain within ${DRAIN_TIMEOUT_MS / 1000} s: ${JSON.stringify(left)}`);
      for (let i = 0; i < 10; i += 1) statuses.push(...(await passes(2)));
    }
    await local.stop();
    // Read once the door has stopped, so every event line it wrote has arrived.
    const events = local.scheduledEvents();

    const [contacts, signals, observations, outbox, state, cleanup] = await local.d1Statements([
      "SELECT contact_id, submission_id, summary, self_reported_test, created_at FROM contacts",
      "SELECT signal_id, submission_id, goal, created_at FROM task_signals",
      "SELECT observation_id FROM observed_task_signals",
      "SELECT source_kind, source_id, state, attempts, last_error_code FROM notification_outbox",
      "SELECT lease_id, lease_expires_at FROM notification_state WHERE id = 1",
      `SELECT
         (SELECT COUNT(*) FROM dialogue_fetch_attempts WHERE key_hash LIKE 'expired-%') AS expired_attempts,
         (SELECT COUNT(*) FROM dialogue_fetch_attempts WHERE key_hash LIKE 'live-%') AS live_attempts,
         (SELECT COUNT(*) FROM owner_oauth_spent WHERE id LIKE 'expired-%') AS expired_spent,
         (SELECT COUNT(*) FROM owner_oauth_spent WHERE id LIKE 'live-%') AS live_spent`,
    ]);
    const verdict = checkCrashRun({
      writes: workload.writes,
      markerPattern: workload.markerPattern(),
      contacts: contacts as unknown as ContactRow[],
      signals: signals as unknown as SignalRow[],
      observations: observations as unknown as ObservationRow[],
      outbox: (outbox as unknown as OutboxRow[]).map((row) => ({ ...row, attempts: Number(row.attempts) })),
      sends: standIn.sends,
      strays: standIn.strays,
      chatId: STAND_IN_CHAT_ID,
      kills: [],
      lease: state![0] as { lease_id: unknown; lease_expires_at: unknown },
    });
    const { figures } = verdict;
    console.log(
      `[cron-overlap] ${statuses.length} passes (${rounds} overlapping rounds under load); outcomes ${JSON.stringify(countBy(events.map((event) => event.outcome)))}; ` +
        `${figures.receipts} receipts, ${figures.contactRows} contacts, ${figures.signalRows} signals, ${observations!.length} observations; ` +
        `${figures.delivered}/${figures.notifiable} contacts and ${figures.goalsDelivered} goals delivered, ${figures.goalsOverflow} goals skipped as overflow; ${figures.telegramSends} messages`,
    );

    // Nothing lost, nothing sent twice, every due row delivered once, the lease free (the test runs no kill, so no resend is excused).
    expect(verdict.failures).toEqual([]);
    expect(figures.unexplainedExtraSends + figures.extraSendsInWindow).toBe(0);
    // Every pass answered; the passes did overlap (a lease was refused), and the test did real work.
    expect(statuses.filter((status) => status !== "200")).toEqual([]);
    expect(events.length).toBe(statuses.length + 1);
    expect(events.some((event) => event.outcome === "lease_busy")).toBe(true);
    expect(events.filter((event) => event.outcome !== "ok" && event.outcome !== "lease_busy")).toEqual([]);
    expect(figures.receipts).toBeGreaterThan(0);
    expect(figures.delivered).toBeGreaterThan(0);
    expect(figures.delivered).toBe(figures.notifiable);
    // The hourly cleanup ran in those passes: the expired backlog is gone, the live rows stayed.
    expect(cleanup![0]).toEqual({ expired_attempts: 0, live_attempts: LIVE_ROWS, expired_spent: 0, live_spent: LIVE_ROWS });
  });
});

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
