/**
 * `npm run test:crash` (issue 20 item 2, 10 §1): a crash loses nothing.
 *
 * The real local door as the README starts it (`npm start`, on a temp copy of
 * the local config and a temp `--persist-to` state, notifications on, Telegram
 * a loopback stand-in) runs the mixed write load of test/crash/workload.ts
 * plus back-to-back cron passes (a third of them two at once). At a seeded
 * random moment the whole process group (npm, magnt, Wrangler, workerd) gets
 * SIGKILL; the suite waits until no process of the group is alive, reads the
 * outbox rows the kill left in `sending` and the lease, restarts `npm start`
 * on the same state, retries every lost write that had a `submission_id`
 * identically, and starts the next round. Every other kill is timed inside a
 * Telegram answer (the stand-in has the message, the Worker not yet its
 * answer) — the window in which 05 §4 allows a resend — the others fall
 * anywhere. After the last restart the cron passes drain the outbox (stale
 * `sending` rows are recovered after 120 s, as in production), the door stops
 * normally, and test/crash/checks.ts holds every receipt, every row and every
 * Telegram message against each other. Then `magnt migrate` must find nothing
 * to apply and a last `npm start` must answer the probe.
 *
 * Knobs: CRASH_SEED (default random; printed, and it fixes the kill schedule,
 * the stand-in's delays and the load's content — not the interleaving, which
 * is the machine's), CRASH_KILLS (default 6, at least 5 for the published
 * figures), CRASH_KEEP=1 keeps the temp state. Exit 1 when any check fails.
 * A complete passing run writes its figures into docs/reliability.md (between
 * the crash-figures markers) and dist/crash/report.{md,json}.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { prng } from "../bench/corpus";
import { portAnswers, REPO_ROOT, removeTempDirs, stopAllDoors } from "../e2e/helpers";
import { checkCrashRun, plantedDefects, type ContactRow, type CrashInput, type CrashVerdict, type KillRecord, type OutboxRow, type SignalRow } from "./checks";
import { LocalDoor, STAND_IN_CHAT_ID } from "./local-door";
import { startTelegramStandIn, type RecordedSend } from "./telegram-stand-in";
import { Workload, type Write } from "./workload";

const LANES = 3;
/**
 * A pause of 0–200 ms between a lane's requests (agents do not loop without a
 * pause): on a fast machine the load would otherwise create more contacts than
 * a few minutes of 5-message cron runs can deliver after the kills.
 */
const THINK_MAX_MS = 200;
/** A random kill comes 3–25 s into a round's load; a targeted one waits at least 3 s, then for a send. */
const MIN_LOAD_MS = 3_000;
const MAX_LOAD_MS = 25_000;
/** A targeted kill waits this long for a send at most (a lease a kill left held blocks sending for up to 55 s). */
const TARGET_WAIT_MS = 90_000;
/**
 * The drain after the last restart ends when every contact is delivered. It
 * fails only when the count of undelivered contacts has not gone down for this
 * long — well above the 55 s a kill's lease and the 120 s a stale `sending` row
 * wait (05 §4, §5) — so a slow machine is never a failure, a stuck outbox is.
 */
const DRAIN_STALL_MS = 300_000;
const FIGURES_START = "<!-- crash-figures:start (written by npm run test:crash) -->";
const FIGURES_END = "<!-- crash-figures:end -->";

interface RoundLog {
  round: number;
  startMs: number;
  retries: { duplicate: number; fresh: number; other: number };
  loadMs: number;
  kill?: KillRecord;
  killMs?: number;
  passes: number;
}

const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const kills = Number(process.env.CRASH_KILLS ?? 6);
if (!Number.isInteger(seed) || !Number.isInteger(kills) || kills < 1) throw new Error("CRASH_SEED and CRASH_KILLS must be integers (CRASH_KILLS ≥ 1)");

// Separate streams, so that the kill schedule does not depend on how many passes or sends a round managed.
const schedule = prng(seed ^ 0x5eed);
const delays = prng(seed ^ 0xde1a);
const think = prng(seed ^ 0x7417);
const pairs = prng(seed ^ 0x9a15);
const log = (line: string) => console.log(`[crash] ${line}`);

async function main(): Promise<number> {
  const loadStart = loadavg();
  const started = Date.now();
  log(`seed ${seed} (CRASH_SEED=${seed} replays the schedule), ${kills} kills, ${cpus().length} CPUs, load average ${loadStart.map((value) => value.toFixed(2)).join(" ")}`);

  let onSend: ((send: RecordedSend, delayMs: number) => void) | undefined;
  const standIn = await startTelegramStandIn({ delayMs: () => 50 + Math.floor(delays() * 250), onSend: (send, delayMs) => onSend?.(send, delayMs) });
  const local = await LocalDoor.prepare("crash", { telegramApiOrigin: standIn.origin, flags: ["TELEGRAM_NOTIFICATIONS_ENABLED"] });
  const workload = new Workload(seed, () => local.mcp);
  const rounds: RoundLog[] = [];
  const killRecords: KillRecord[] = [];
  const restartProblems: string[] = [];
  let passesFired = 0;
  let passesFailed = 0;

  try {
    for (let round = 1; round <= kills + 1; round += 1) {
      const begin = Date.now();
      const door = await local.start();
      if (!door.output().includes("local migrations: up to date")) restartProblems.push(`start ${round}: magnt dev did not report the local migrations up to date`);
      const entry: RoundLog = { round, startMs: door.readyAfterMs, retries: { duplicate: 0, fresh: 0, other: 0 }, loadMs: 0, passes: 0 };
      rounds.push(entry);
      if (round === 1) {
        // The activation pass pins activated_at before any load contact exists (05 §5 step 3).
        if ((await local.cronPass()) !== "200") throw new Error("the activation pass failed");
        passesFired += 1;
      }

      // The identical retries of every write the last kill took an answer from (only those with a submission_id can be retried).
      for (const write of workload.lostInKill()) {
        if (write.submissionId === null) continue;
        const send = await workload.send(write, round, "after_kill");
        if (send.outcome !== "receipt") entry.retries.other += 1;
        else if (send.fresh === true) entry.retries.fresh += 1;
        else entry.retries.duplicate += 1;
      }
      if (round === kills + 1) {
        log(`round ${round}: npm start ${(entry.startMs / 1000).toFixed(1)} s; retries ${entry.retries.duplicate} duplicate, ${entry.retries.fresh} new, ${entry.retries.other} other; draining the outbox`);
        break;
      }

      // Load and cron passes until the kill.
      let stopped = false;
      const cron = (async () => {
        while (!stopped) {
          const pair = pairs() < 1 / 3;
          const statuses = await Promise.all(pair ? [local.cronPass(), local.cronPass()] : [local.cronPass()]);
          entry.passes += statuses.length;
          passesFired += statuses.length;
          passesFailed += statuses.filter((status) => status !== "200" && status !== "network_error").length;
        }
      })();
      const loadBegin = Date.now();
      const lanes = workload.drive(LANES, round, () => stopped, () => Math.floor(think() * THINK_MAX_MS));
      const targeted = round % 2 === 0;
      const wait = MIN_LOAD_MS + Math.floor(schedule() * (MAX_LOAD_MS - MIN_LOAD_MS));
      const fraction = schedule();
      let timedInSend = false;
      if (!targeted) await sleep(wait);
      else {
        await sleep(MIN_LOAD_MS);
        // The next send the stand-in records: kill at a random point of the delay its answer is held back by.
        timedInSend = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => {
            onSend = undefined;
            resolve(false);
          }, TARGET_WAIT_MS);
          onSend = (_send, delayMs) => {
            onSend = undefined;
            clearTimeout(timer);
            setTimeout(() => resolve(true), Math.floor(fraction * delayMs));
          };
        });
      }

      stopped = true;
      workload.killing = true;
      const inFlight = workload.pending;
      const killAt = Date.now();
      entry.loadMs = killAt - loadBegin;
      await local.kill();
      entry.killMs = Date.now() - killAt;
      await Promise.all([lanes, cron]);
      await workload.settle();
      workload.killing = false;
      if (await portAnswers(local.port)) throw new Error("the port still answers after the kill");

      // What the kill left: `sending` rows and the lease (the door is down; nothing else writes).
      const [sending, state] = await local.d1Statements([
        "SELECT source_id, attempts FROM notification_outbox WHERE state = 'sending'",
        "SELECT lease_id, lease_expires_at FROM notification_state WHERE id = 1",
      ]);
      const lease = state?.[0];
      const kill: KillRecord = {
        round,
        at: killAt,
        targeted: timedInSend,
        inFlight,
        sendingRows: (sending ?? []).map((row) => ({ source_id: String(row.source_id), attempts: Number(row.attempts) })),
        leaseHeld: lease !== undefined && lease.lease_id !== null && Date.parse(String(lease.lease_expires_at)) > killAt,
      };
      killRecords.push(kill);
      entry.kill = kill;
      const lostNow = workload.writes.filter((write) => write.sends.some((send) => send.round === round && send.outcome === "lost_in_kill")).length;
      log(
        `round ${round}: npm start ${(entry.startMs / 1000).toFixed(1)} s; retries ${entry.retries.duplicate} duplicate, ${entry.retries.fresh} new; ` +
          `load ${(entry.loadMs / 1000).toFixed(1)} s, ${entry.passes} passes; SIGKILL ${targeted ? (timedInSend ? "inside a Telegram answer" : "(no send came: at a random moment)") : "at a random moment"} ` +
          `with ${inFlight} requests in flight (${lostNow} writes lost their answer); ${kill.sendingRows.length} outbox rows left sending; lease ${kill.leaseHeld ? "held" : "free"}; ` +
          `${Math.round((Date.now() - begin) / 1000)} s`,
      );
    }

    // Drain: passes until every non-test contact is delivered (bounded by progress, not by speed).
    const drainBegin = Date.now();
    let undelivered = Number.POSITIVE_INFINITY;
    let progressAt = Date.now();
    while (Date.now() - progressAt < DRAIN_STALL_MS) {
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const statuses = await Promise.all(pairs() < 1 / 3 ? [local.cronPass(), local.cronPass()] : [local.cronPass()]);
        passesFired += statuses.length;
        passesFailed += statuses.filter((status) => status !== "200").length;
      }
      const [left] = await local.d1Statements([
        `SELECT COUNT(*) AS n FROM contacts c WHERE c.self_reported_test = 0 AND NOT EXISTS
           (SELECT 1 FROM notification_outbox o WHERE o.source_kind = 'contact' AND o.source_id = c.contact_id AND o.state = 'delivered')`,
      ]);
      const now = Number(left?.[0]?.n ?? Number.NaN);
      if (!(now >= 0)) throw new Error("cannot count the undelivered contacts");
      if (now < undelivered) progressAt = Date.now();
      undelivered = now;
      if (undelivered === 0) break;
    }
    log(`drained in ${Math.round((Date.now() - drainBegin) / 1000)} s (${undelivered} contacts undelivered)`);
    // One more pass pair after the drain, so the lease check below sees the state the last runs left.
    const last = await Promise.all([local.cronPass(), local.cronPass()]);
    passesFired += 2;
    passesFailed += last.filter((status) => status !== "200").length;
    await local.stop();
    // Read once the door has stopped, so every event line it wrote has arrived.
    const events = local.scheduledEvents();

    // The verdict, from the stopped door's state.
    const [contacts, signals, outbox, state] = await local.d1Statements([
      "SELECT contact_id, submission_id, summary, self_reported_test, created_at FROM contacts",
      "SELECT signal_id, submission_id, goal, created_at FROM task_signals",
      "SELECT source_kind, source_id, state, attempts FROM notification_outbox",
      "SELECT lease_id, lease_expires_at FROM notification_state WHERE id = 1",
    ]);
    const input: CrashInput = {
      writes: workload.writes,
      markerPattern: workload.markerPattern(),
      contacts: (contacts ?? []) as unknown as ContactRow[],
      signals: (signals ?? []) as unknown as SignalRow[],
      outbox: ((outbox ?? []) as unknown as OutboxRow[]).map((row) => ({ ...row, attempts: Number(row.attempts) })),
      sends: standIn.sends,
      strays: standIn.strays,
      chatId: STAND_IN_CHAT_ID,
      kills: killRecords,
      lease: state?.[0] as CrashInput["lease"],
    };
    const verdict = checkCrashRun(input);
    const failures = [...verdict.failures, ...restartProblems];
    if (undelivered !== 0) failures.push(`the outbox stopped draining: ${undelivered} contacts undelivered, none delivered for ${DRAIN_STALL_MS / 1000} s`);
    if (passesFailed > 0) failures.push(`${passesFailed} cron passes answered neither 200 nor died in a kill`);
    if (workload.reads.failed > 0) failures.push(`${workload.reads.failed} reads failed without a kill`);

    // The checks can fail: each planted defect must trip at least one of them.
    const { planted, skipped } = plantedDefects(input);
    for (const { defect, input: defective } of planted) {
      if (checkCrashRun(defective).failures.length === 0) failures.push(`self-check: the planted defect "${defect}" went unnoticed`);
    }
    log(`self-check: ${planted.length} planted defects, each caught${skipped.length > 0 ? `; not plantable in this run: ${skipped.join(", ")}` : ""}`);

    // magnt migrate finds nothing to apply; npm start comes back.
    const migrate = await local.cliRun("migrate");
    const migrateClean = migrate.code === 0 && migrate.stdout.trim() === "up to date (local)";
    if (!migrateClean) failures.push(`magnt migrate after the crashes: exit ${migrate.code}, stdout ${JSON.stringify(migrate.stdout.trim())}`);
    const final = await local.start();
    const probe = await fetch(`${final.origin}/__magnt_probe`);
    const probeOk = probe.status === 200;
    await probe.text();
    if (!probeOk) failures.push(`the final npm start answered the probe with ${probe.status}`);
    await local.stop();

    const loadEnd = loadavg();
    const report = renderReport({
      seed,
      rounds,
      verdict,
      events: countOutcomes(events.map((event) => event.outcome)),
      passesFired,
      migrate: migrate.stdout.trim(),
      finalStartMs: final.readyAfterMs,
      loadStart,
      loadEnd,
      seconds: (Date.now() - started) / 1000,
      reads: workload.reads,
    });
    console.log(`\n${report}\n`);
    const out = join(REPO_ROOT, "dist/crash");
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "report.md"), `${report}\n`);
    writeFileSync(join(out, "report.json"), `${JSON.stringify({ seed, kills: killRecords, rounds, failures, figures: { ...verdict.figures, sendsByKindOutcome: Object.fromEntries(verdict.figures.sendsByKindOutcome), refused: Object.fromEntries(verdict.figures.refused) } }, null, 2)}\n`);
    if (failures.length > 0) {
      console.log(`${failures.length} check(s) failed:`);
      for (const line of failures) console.log(`  ✗ ${line}`);
      dumpOnFailure(workload.writes, failures);
      return 1;
    }
    if (kills >= 5) {
      writeFiguresIntoDocs(report);
      log("all checks passed; figures written to docs/reliability.md and dist/crash/report.md");
    } else log(`all checks passed; fewer than 5 kills, so docs/reliability.md was not rewritten (dist/crash/report.md)`);
    return 0;
  } finally {
    await stopAllDoors();
    await standIn.close();
    if (process.env.CRASH_KEEP === "1") log(`state kept in ${local.state} (config ${local.config})`);
    else removeTempDirs();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function countOutcomes(outcomes: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  return new Map([...counts].sort((a, b) => b[1] - a[1]));
}

function dumpOnFailure(writes: readonly Write[], failures: readonly string[]): void {
  const named = new Set(failures.flatMap((line) => [...line.matchAll(/write #(\d+)/g)].map((match) => Number(match[1]))));
  for (const write of writes.filter((candidate) => named.has(candidate.seq)).slice(0, 20)) {
    console.log(`  write #${write.seq} ${write.op} submission ${write.submissionId ?? "none"}: ${write.sends.map((send) => `${send.kind}/r${send.round}/${send.outcome}/${send.status}/${send.id ?? "-"}`).join(" ; ")}`);
  }
}

interface ReportInput {
  seed: number;
  rounds: readonly RoundLog[];
  verdict: CrashVerdict;
  events: Map<string, number>;
  passesFired: number;
  migrate: string;
  finalStartMs: number;
  loadStart: number[];
  loadEnd: number[];
  seconds: number;
  reads: { sent: number; answered: number; failed: number };
}

function renderReport(run: ReportInput): string {
  const f = run.verdict.figures;
  const lostFirst = f.lostCommittedWithSubmission + f.lostCommittedWithoutSubmission + f.lostNotCommittedWithSubmission + f.lostNotCommittedWithoutSubmission;
  const killed = run.rounds.filter((round) => round.kill !== undefined);
  const avg = (values: readonly number[]) => values.map((value) => value.toFixed(2)).join(" / ");
  const lines = [
    `Last run: ${new Date().toISOString().slice(0, 10)}, seed ${run.seed} (\`CRASH_SEED=${run.seed} npm run test:crash\` replays the schedule), ${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}),`,
    `load average (1 / 5 / 15 min) ${avg(run.loadStart)} at the start and ${avg(run.loadEnd)} at the end, ${Math.round(run.seconds)} s in all.`,
    "",
    "| Round | `npm start` until the probe answers | Identical retries of lost writes | Load until the kill | Cron passes | SIGKILL | Requests in flight | Outbox rows `sending` after the kill (stale ones of earlier kills included) | Lease left held |",
    "|---|---|---|---|---|---|---|---|---|",
    ...run.rounds.map((round) => {
      const kill = round.kill;
      const retries = round.round === 1 ? "—" : `${round.retries.duplicate} duplicate, ${round.retries.fresh} new${round.retries.other > 0 ? `, ${round.retries.other} other` : ""}`;
      if (kill === undefined) return `| ${round.round} (last) | ${(round.startMs / 1000).toFixed(1)} s | ${retries} | — (drain) | — | — | — | — | — |`;
      return `| ${round.round} | ${(round.startMs / 1000).toFixed(1)} s | ${retries} | ${(round.loadMs / 1000).toFixed(1)} s | ${round.passes} | ${kill.targeted ? "inside a Telegram answer" : "random moment"} | ${kill.inFlight} | ${kill.sendingRows.length} | ${kill.leaseHeld ? "yes" : "no"} |`;
    }),
    "",
    "| Figure | Value |",
    "|---|---|",
    `| kills (SIGKILL to the process group) | ${killed.length} |`,
    `| writes planned | ${f.writes} (${f.contactsPlanned} \`propose_contact\`, ${f.testContacts} of them \`is_test\`; ${f.signalsPlanned} \`contribute_task_signal\`; ${f.withoutSubmission} without \`submission_id\`) |`,
    `| sends by kind → outcome | ${[...f.sendsByKindOutcome].map(([key, value]) => `${key}: ${value}`).join(", ")} |`,
    `| reads (\`tools/list\`, \`search_shared_experience\`) | ${run.reads.sent} sent, ${run.reads.answered} answered, ${run.reads.failed} failed (the rest lost in kills) |`,
    `| receipts received | ${f.receipts} |`,
    `| rows stored | ${f.contactRows} contacts, ${f.signalRows} signals |`,
    `| receipts without exactly their row (lost writes) | 0 |`,
    `| writes whose first send a kill took | ${lostFirst}: ${f.lostCommittedWithSubmission + f.lostCommittedWithoutSubmission} had committed before the process died (${f.lostCommittedWithSubmission} with \`submission_id\`, ${f.lostCommittedWithoutSubmission} without), ${f.lostNotCommittedWithSubmission + f.lostNotCommittedWithoutSubmission} had not (${f.lostNotCommittedWithSubmission} with, ${f.lostNotCommittedWithoutSubmission} without) |`,
    `| identical retries of answered writes whose answer a kill took | ${f.lostRetries} |`,
    `| identical retries after the restart (every lost write with \`submission_id\`) | ${f.retriedAfterKill}: ${f.retryDuplicate} \`duplicate\` with the row's id (the write had committed — before this kill, or at an earlier answer), ${f.retryNew} new (it had not; the retry stored it once) |`,
    `| rows without any receipt | ${f.rowsWithoutReceipt}${f.rowsWithoutReceipt === 0 ? "" : " — each a write without \`submission_id\` that committed just before a kill took its answer (it cannot be retried: without the id a retry is a new message)"} |`,
    `| answers without a receipt (no kill) | ${f.refused.size === 0 ? "0" : [...f.refused].map(([key, value]) => `${key}: ${value}`).join(", ")} |`,
    `| contacts to notify (non-test) | ${f.notifiable}, ${f.delivered} delivered |`,
    `| Telegram messages (stand-in) | ${f.telegramSends}: ${f.sourcesSentOnce} contacts once, ${f.sourcesResentInWindow} contacts more than once (${f.extraSendsInWindow} extra messages), each extra one a resend 05 §4 allows |`,
    `| extra messages outside that window | ${f.unexplainedExtraSends} |`,
    `| claims the kills left \`sending\` (each row and attempt once; a stale one can outlive the next restart) | ${f.windowsAnswerLost + f.windowsClaimedNotSent}: ${f.windowsAnswerLost} whose message Telegram had (answer lost → resent once), ${f.windowsClaimedNotSent} claimed but not yet sent (sent once after the restart) |`,
    `| kills that left the cron lease held | ${f.killsWithLeaseHeld} (the next runs answer \`lease_busy\` until it expires, 55 s) |`,
    `| cron passes fired | ${run.passesFired}, ${run.passesFired - [...run.events.values()].reduce((sum, value) => sum + value, 0)} of them cut off by a kill; outcomes logged: ${[...run.events].map(([key, value]) => `${key} ${value}`).join(", ")} |`,
    `| \`magnt migrate\` after the crashes | \`${run.migrate}\`, exit 0 |`,
    `| final \`npm start\` | probe answered after ${(run.finalStartMs / 1000).toFixed(1)} s |`,
  ];
  return lines.join("\n");
}

function writeFiguresIntoDocs(report: string): void {
  const path = join(REPO_ROOT, "docs/reliability.md");
  const doc = readFileSync(path, "utf8");
  const start = doc.indexOf(FIGURES_START);
  const end = doc.indexOf(FIGURES_END);
  if (start === -1 || end === -1 || end < start) throw new Error(`docs/reliability.md lacks the ${FIGURES_START} … ${FIGURES_END} block`);
  writeFileSync(path, `${doc.slice(0, start + FIGURES_START.length)}\n${report}\n${doc.slice(end)}`);
}

process.exit(await main());
