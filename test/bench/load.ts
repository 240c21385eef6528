/**
 * Sustained load (issue 14 item 3; bench only, never in the test commands).
 *
 * What runs: the real local door exactly as `npm start` runs it — the built
 * CLI's `magnt dev --port <free> --persist-to <temp>` (pending migrations
 * applied, then `wrangler dev` → workerd, with a real local D1 persisted under
 * the temp directory and no rate-limit binding, as wrangler.local.jsonc
 * configures). Every request goes to 127.0.0.1 from this process.
 *
 * Workload: ≈ 70 % reads (tools/list, about_magnt, search_shared_experience)
 * and ≈ 30 % writes (propose_contact and contribute_task_signal, each with a
 * fresh submission UUID, ≈ 10 % of writes an identical retry of an earlier
 * submission). Closed loop: N lanes each send the next request when the last
 * answered. A bounded ramp (N = 1, 2, 4, … 64, a few seconds each, stopping at
 * the plateau) finds the peak; the 60 s run uses the smallest N that reached
 * 95 % of the peak throughput — the highest rate the machine sustains without
 * merely queueing.
 *
 * Then, with the door stopped, the D1 tables are read directly
 * (`wrangler d1 execute --local --persist-to <temp>`) and every receipt the
 * clients received (warm-up, ramp and run) is checked: exactly one row per receipt,
 * with the submission it answered; one id per submission across all its
 * answers; at most one `duplicate: false` per submission; and row count =
 * distinct accepted receipts. Any 5xx other than the door's designed 503
 * ("Service temporarily unavailable") counts as unexpected.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTACT_STATUS, CONTRIBUTE_STATUS } from "../../worker/contracts/tools";
import { freePort, MAGNT_BIN, startDoor, stopDoor, type Door } from "../e2e/helpers";
import { OFFLINE_ENV, wranglerBin } from "./bundles";
import { prng, sentence } from "./corpus";
import type { Report } from "./report";
import { readToolAnswer, toolCall, toolsList, type McpRequest } from "./requests";
import { percentile } from "./stats";

const BENCH = "sustained load";
const DESIGNED_503_TEXT = "Service temporarily unavailable";
const REQUEST_TIMEOUT_MS = 30_000;

type Op = "tools/list" | "about_magnt" | "search_shared_experience" | "propose_contact" | "contribute_task_signal";
const READS: readonly Op[] = ["tools/list", "about_magnt", "search_shared_experience"];
/** Cumulative shares: 70 % reads, 30 % writes. */
const MIX: ReadonlyArray<readonly [Op, number]> = [
  ["tools/list", 0.25],
  ["about_magnt", 0.2],
  ["search_shared_experience", 0.25],
  ["propose_contact", 0.15],
  ["contribute_task_signal", 0.15],
];
const RETRY_SHARE = 0.1;

export interface LoadOptions {
  root: string;
  /** Seconds of the sustained run (default 60). */
  seconds?: number;
  /** Seconds per ramp step (default 4). */
  stepSeconds?: number;
  /** Ramp concurrencies, in order (default 1, 2, 4, 8, 16, 32, 64). */
  steps?: readonly number[];
}

// ---------------------------------------------------------------- workload

interface Submission {
  id: string;
  args: Record<string, unknown>;
}

interface ReceiptLedger {
  /** Every id answered for this submission (one expected). */
  ids: Set<string>;
  /** Answers that said the write was new (at most one expected). */
  fresh: number;
  duplicates: number;
}

interface Planned {
  op: Op;
  request: McpRequest;
  submission?: string;
  retry: boolean;
}

class Workload {
  private readonly random = prng(20_260_401);
  private readonly contacts: Submission[] = [];
  private readonly signals: Submission[] = [];
  readonly contactReceipts = new Map<string, ReceiptLedger>();
  readonly signalReceipts = new Map<string, ReceiptLedger>();
  sequence = 0;

  next(): Planned {
    const roll = this.random();
    let cumulative = 0;
    let op: Op = "tools/list";
    for (const [candidate, share] of MIX) {
      cumulative += share;
      if (roll < cumulative) {
        op = candidate;
        break;
      }
    }
    this.sequence += 1;
    switch (op) {
      case "tools/list":
        return { op, request: toolsList(), retry: false };
      case "about_magnt":
        return { op, request: toolCall("about_magnt", {}), retry: false };
      case "search_shared_experience":
        return { op, request: toolCall("search_shared_experience", { goal: sentence(this.random, 60 + Math.floor(this.random() * 60)) }), retry: false };
      case "propose_contact":
        return this.write(op, this.contacts, () => ({
          summary: `load ${this.sequence}: ${sentence(this.random, 200)}`,
          intent: sentence(this.random, 80),
          reply_to: `agent-${this.sequence}@example.test`,
        }));
      case "contribute_task_signal":
        return this.write(op, this.signals, () => ({
          goal: sentence(this.random, 120),
          blocker: sentence(this.random, 120),
          tried: sentence(this.random, 240),
          learned: sentence(this.random, 120),
        }));
    }
  }

  private write(op: "propose_contact" | "contribute_task_signal", pool: Submission[], fresh: () => Record<string, unknown>): Planned {
    if (pool.length > 0 && this.random() < RETRY_SHARE) {
      const earlier = pool[Math.floor(this.random() * pool.length)]!;
      return { op, request: toolCall(op, earlier.args), submission: earlier.id, retry: true };
    }
    const id = crypto.randomUUID();
    const args = { ...fresh(), submission_id: id };
    pool.push({ id, args });
    return { op, request: toolCall(op, args), submission: id, retry: false };
  }

  /** Files a write's answer under its submission. */
  noteAnswer(planned: Planned, outcome: string, structured: Record<string, unknown> | undefined): void {
    if (planned.submission === undefined || structured === undefined) return;
    let id: unknown;
    let fresh = false;
    let ledgers: Map<string, ReceiptLedger>;
    if (planned.op === "propose_contact") {
      if (outcome !== CONTACT_STATUS.accepted) return;
      id = structured.contact_id;
      fresh = structured.duplicate === false;
      ledgers = this.contactReceipts;
    } else {
      if (outcome !== CONTRIBUTE_STATUS.accepted && outcome !== CONTRIBUTE_STATUS.duplicate) return;
      id = structured.signal_id;
      fresh = outcome === CONTRIBUTE_STATUS.accepted;
      ledgers = this.signalReceipts;
    }
    const ledger = ledgers.get(planned.submission) ?? { ids: new Set<string>(), fresh: 0, duplicates: 0 };
    ledger.ids.add(String(id));
    if (fresh) ledger.fresh += 1;
    else ledger.duplicates += 1;
    ledgers.set(planned.submission, ledger);
  }

  /** Every submission UUID sent for this tool (first sends; retries reuse them). */
  sentIds(op: "propose_contact" | "contribute_task_signal"): Set<string> {
    return new Set((op === "propose_contact" ? this.contacts : this.signals).map((submission) => submission.id));
  }
}

// ---------------------------------------------------------------- driving

interface Sample {
  op: Op;
  latencyMs: number;
  /** HTTP status, or "timeout" / "network_error" when no answer came. */
  status: string;
  outcome: string;
  retry: boolean;
  /** Milliseconds since the phase began, when the answer arrived. */
  at: number;
}

interface Phase {
  concurrency: number;
  seconds: number;
  samples: Sample[];
}

async function sendOne(mcp: string, workload: Workload, planned: Planned): Promise<Omit<Sample, "at">> {
  const begin = performance.now();
  try {
    const response = await fetch(mcp, { ...planned.request, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    const latencyMs = performance.now() - begin;
    let outcome: string;
    if (response.status === 200) {
      const answer = readToolAnswer(text);
      outcome = answer.outcome;
      workload.noteAnswer(planned, answer.outcome, answer.structured);
    } else if (response.status === 503 && text.trim() === DESIGNED_503_TEXT) {
      outcome = "designed_503";
    } else {
      outcome = `http_${response.status}`;
    }
    return { op: planned.op, latencyMs, status: String(response.status), outcome, retry: planned.retry };
  } catch (error) {
    const timeout = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return { op: planned.op, latencyMs: performance.now() - begin, status: timeout ? "timeout" : "network_error", outcome: timeout ? "timeout" : "network_error", retry: planned.retry };
  }
}

/** Closed loop: `concurrency` lanes until the deadline (each lane finishes its request in flight). */
async function drive(mcp: string, workload: Workload, concurrency: number, seconds: number): Promise<Phase> {
  const samples: Sample[] = [];
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const lane = async () => {
    while (performance.now() < deadline) {
      const sample = await sendOne(mcp, workload, workload.next());
      samples.push({ ...sample, at: performance.now() - start });
      // A refused connection answers at once: pause so a dead door is not spun against until the deadline.
      if (sample.status === "network_error") await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { concurrency, seconds: (performance.now() - start) / 1000, samples };
}

const rpsOf = (phase: Phase) => phase.samples.length / phase.seconds;

function isUnexpected5xx(sample: Sample): boolean {
  return /^5\d\d$/.test(sample.status) && sample.outcome !== "designed_503";
}

// ---------------------------------------------------------------- D1, read directly

function queryD1(root: string, state: string, sql: string): Record<string, unknown>[] {
  const run = spawnSync(process.execPath, [wranglerBin(), "d1", "execute", "CONTACTS", "--config", "wrangler.local.jsonc", "--local", "--persist-to", state, "--json", "--command", sql], {
    cwd: root,
    env: OFFLINE_ENV,
    encoding: "utf8",
    timeout: 180_000,
    maxBuffer: 512 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`wrangler d1 execute failed (${run.status}): ${run.stderr.slice(0, 2000)}`);
  const parsed = JSON.parse(run.stdout) as Array<{ results: Record<string, unknown>[] }>;
  return parsed.flatMap((entry) => entry.results);
}

interface TableCheck {
  table: string;
  rows: number;
  distinctReceipts: number;
  /** Receipts whose id has no row, or whose row belongs to another submission. */
  lost: number;
  /** Submissions answered with more than one id, or more than one `duplicate: false`. */
  inconsistent: number;
  /** Rows for a submission the clients sent but never got a receipt for (e.g. a timed-out answer). */
  storedWithoutReceipt: number;
  /** Rows whose submission the clients never sent (there should be none: the database is fresh). */
  foreign: number;
  sentSubmissions: number;
  retriesAnswered: number;
}

function checkTable(table: string, idColumn: string, stored: Record<string, unknown>[], receipts: Map<string, ReceiptLedger>, sentIds: Set<string>): TableCheck {
  const bySubmission = new Map<string, string[]>();
  const byId = new Map<string, string>();
  for (const row of stored) {
    const submission = String(row.submission_id);
    const id = String(row[idColumn]);
    byId.set(id, submission);
    bySubmission.set(submission, [...(bySubmission.get(submission) ?? []), id]);
  }
  const distinct = new Set<string>();
  let lost = 0;
  let inconsistent = 0;
  let retriesAnswered = 0;
  for (const [submission, ledger] of receipts) {
    if (ledger.ids.size !== 1 || ledger.fresh > 1) inconsistent += 1;
    retriesAnswered += ledger.duplicates;
    for (const id of ledger.ids) {
      distinct.add(id);
      const rowsForSubmission = bySubmission.get(submission) ?? [];
      if (byId.get(id) !== submission || rowsForSubmission.length !== 1 || rowsForSubmission[0] !== id) lost += 1;
    }
  }
  let storedWithoutReceipt = 0;
  let foreign = 0;
  for (const submission of bySubmission.keys()) {
    if (!sentIds.has(submission)) foreign += 1;
    else if (!receipts.has(submission)) storedWithoutReceipt += 1;
  }
  return { table, rows: stored.length, distinctReceipts: distinct.size, lost, inconsistent, storedWithoutReceipt, foreign, sentSubmissions: sentIds.size, retriesAnswered };
}

// ---------------------------------------------------------------- the benchmark

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return new Map([...counts].sort((a, b) => b[1] - a[1]));
}

const formatCounts = (counts: Map<string, number>) => [...counts].map(([key, count]) => `${key}: ${count}`).join(", ");
const ms = (value: number) => `${value.toFixed(1)} ms`;

export async function benchLoad(report: Report, options: LoadOptions): Promise<void> {
  const seconds = options.seconds ?? 60;
  const stepSeconds = options.stepSeconds ?? 4;
  const steps = options.steps ?? [1, 2, 4, 8, 16, 32, 64];

  // The CLI `npm start` runs, built as `npm run build:cli` builds it (through the npm running this bench, when known).
  const npmCli = process.env.npm_execpath;
  const [npm, prefix] = npmCli !== undefined && npmCli.endsWith(".js") ? [process.execPath, [npmCli]] : ["npm", []];
  const build = spawnSync(npm, [...prefix, "run", "build:cli", "--silent"], { cwd: options.root, env: OFFLINE_ENV, encoding: "utf8", timeout: 120_000 });
  if (build.status !== 0) throw new Error(`npm run build:cli failed: ${build.stderr}`);

  const state = mkdtempSync(join(tmpdir(), "magnt-bench-load-"));
  const workload = new Workload();
  let door: Door | undefined;
  let warmup: Phase | undefined;
  const ramp: Phase[] = [];
  let sustained: Phase | undefined;
  try {
    try {
      const port = await freePort();
      door = await startDoor(process.execPath, [MAGNT_BIN, "dev", "--port", String(port), "--persist-to", state], port, { readyTimeoutMs: 120_000 });
      const mcp = door.mcp;

      // Warm-up (its answers are checked with the rest, its timings not reported), then the bounded ramp.
      warmup = await drive(mcp, workload, 4, 2);
      let best = 0;
      let flat = 0;
      for (const concurrency of steps) {
        const phase = await drive(mcp, workload, concurrency, stepSeconds);
        ramp.push(phase);
        const rps = rpsOf(phase);
        const p99 = percentile(latencies(phase.samples), 99);
        const failing = phase.samples.filter((sample) => sample.status !== "200").length;
        flat = rps < best * 1.05 ? flat + 1 : 0;
        best = Math.max(best, rps);
        // Bounded: two steps without a 5 % gain, a p99 over 2 s, or over 1 % failing answers end the ramp.
        if (flat >= 2 || p99 > 2000 || failing > phase.samples.length * 0.01) break;
      }
      const peak = Math.max(...ramp.map(rpsOf));
      const chosen = ramp.find((phase) => rpsOf(phase) >= 0.95 * peak)!.concurrency;

      sustained = await drive(mcp, workload, chosen, seconds);
    } finally {
      await stopDoor(door);
    }

    // The door is stopped: D1 is read directly from the persisted state.
    const sentContacts = workload.sentIds("propose_contact");
    const sentSignals = workload.sentIds("contribute_task_signal");
    const contacts = checkTable("contacts", "contact_id", queryD1(options.root, state, "SELECT contact_id, submission_id FROM contacts"), workload.contactReceipts, sentContacts);
    const signals = checkTable("task_signals", "signal_id", queryD1(options.root, state, "SELECT signal_id, submission_id FROM task_signals"), workload.signalReceipts, sentSignals);
    const observations = Number(queryD1(options.root, state, "SELECT COUNT(*) AS n FROM observed_task_signals")[0]?.n ?? 0);
    reportLoad(report, { warmup, ramp, sustained, contacts, signals, observations });
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- rows and the docs section

interface LoadResult {
  warmup: Phase;
  ramp: Phase[];
  sustained: Phase;
  contacts: TableCheck;
  signals: TableCheck;
  observations: number;
}

function latencies(samples: readonly Sample[]): number[] {
  return samples.map((sample) => sample.latencyMs);
}

function reportLoad(report: Report, result: LoadResult): void {
  const { ramp, sustained, contacts, signals } = result;
  const all = [result.warmup, ...ramp, sustained].flatMap((phase) => phase.samples);
  const samples = sustained.samples;
  const rps = rpsOf(sustained);
  const windows = Array.from({ length: Math.floor(sustained.seconds / 10) }, (_, index) => samples.filter((sample) => sample.at >= index * 10_000 && sample.at < (index + 1) * 10_000).length / 10);
  const reads = samples.filter((sample) => READS.includes(sample.op));
  const writes = samples.filter((sample) => !READS.includes(sample.op));
  const unexpected5xx = all.filter(isUnexpected5xx);
  const designed503 = all.filter((sample) => sample.outcome === "designed_503").length;
  const noAnswer = all.filter((sample) => sample.status === "timeout" || sample.status === "network_error").length;
  const searchesAnswered = all.filter((sample) => sample.op === "search_shared_experience" && sample.status === "200").length;
  const tables = [contacts, signals];
  const lost = contacts.lost + signals.lost;
  const countGap = tables.reduce((sum, table) => sum + Math.abs(table.rows - table.distinctReceipts), 0);
  const inconsistent = contacts.inconsistent + signals.inconsistent;
  const peak = Math.max(...ramp.map(rpsOf));

  const row = (measurement: string, value: number, unit: string, detail?: string, spread?: string) =>
    report.record({ benchmark: BENCH, measurement, value, unit, budget: "reported", kind: "info" }, true, { ...(detail === undefined ? {} : { detail }), ...(spread === undefined ? {} : { spread }) });

  row(
    "ramp peak (closed loop, bounded)",
    peak,
    "req/s",
    ramp.map((phase) => `${phase.concurrency} lanes: ${rpsOf(phase).toFixed(0)}`).join(", "),
  );
  row(`requests/s over ${Math.round(sustained.seconds)} s at ${sustained.concurrency} in flight (70 % reads / 30 % writes)`, rps, "req/s", `${samples.length} requests`, windows.length > 0 ? `${Math.min(...windows).toFixed(0)}–${Math.max(...windows).toFixed(0)} over 10 s windows` : undefined);
  row("p50, all requests", percentile(latencies(samples), 50), "ms", `reads ${ms(percentile(latencies(reads), 50))}, writes ${ms(percentile(latencies(writes), 50))}`);
  row("p99, all requests", percentile(latencies(samples), 99), "ms", `reads ${ms(percentile(latencies(reads), 99))}, writes ${ms(percentile(latencies(writes), 99))}`);
  row("answers by HTTP status (warm-up, ramp and run)", all.length, "requests", formatCounts(countBy(all, (sample) => sample.status)));
  row("designed 503s (warm-up, ramp and run)", designed503, "answers");
  row("no answer within 30 s or connection error (warm-up, ramp and run)", noAnswer, "requests");
  report.record(
    { benchmark: BENCH, measurement: "unexpected 5xx (any 5xx but the designed 503)", value: unexpected5xx.length, unit: "answers", budget: "= 0", kind: "gate" },
    unexpected5xx.length === 0,
    unexpected5xx.length === 0 ? {} : { detail: formatCounts(countBy(unexpected5xx, (sample) => `${sample.op} ${sample.status}`)) },
  );
  report.record(
    { benchmark: BENCH, measurement: "lost writes (a receipt without exactly its one row)", value: lost, unit: "receipts", budget: "= 0", kind: "gate" },
    lost === 0,
    { detail: tables.map((table) => `${table.table}: ${table.lost}`).join(", ") },
  );
  report.record(
    { benchmark: BENCH, measurement: "row count − distinct accepted receipts", value: countGap, unit: "rows", budget: "= 0", kind: "gate" },
    countGap === 0,
    { detail: tables.map((table) => `${table.table}: ${table.rows} rows / ${table.distinctReceipts} receipts (${table.storedWithoutReceipt} stored without a receipt, ${table.foreign} foreign)`).join("; ") },
  );
  report.record(
    { benchmark: BENCH, measurement: "submissions answered with two ids or two new receipts", value: inconsistent, unit: "submissions", budget: "= 0", kind: "gate" },
    inconsistent === 0,
    { detail: tables.map((table) => `${table.table}: ${table.sentSubmissions} submissions, ${table.retriesAnswered} duplicate answers`).join("; ") },
  );
  row("search observations stored / searches answered (best effort, 03 §7)", result.observations, "rows", `${result.observations} / ${searchesAnswered}`);

  const opTable = [
    "| operation | requests | p50 | p99 | outcomes |",
    "|---|---|---|---|---|",
    ...[...countBy(samples, (sample) => sample.op).keys()].map((op) => {
      const ofOp = samples.filter((sample) => sample.op === op);
      return `| ${op} | ${ofOp.length} | ${ms(percentile(latencies(ofOp), 50))} | ${ms(percentile(latencies(ofOp), 99))} | ${formatCounts(countBy(ofOp, (sample) => (sample.retry ? `${sample.outcome} (retry)` : sample.outcome)))} |`;
    }),
  ];
  const rampTable = ["| lanes | seconds | requests/s | p50 | p99 | non-200 |", "|---|---|---|---|---|---|", ...ramp.map((phase) => `| ${phase.concurrency} | ${phase.seconds.toFixed(1)} | ${rpsOf(phase).toFixed(0)} | ${ms(percentile(latencies(phase.samples), 50))} | ${ms(percentile(latencies(phase.samples), 99))} | ${phase.samples.filter((sample) => sample.status !== "200").length} |`)];
  const checkTableText = [
    "| table | rows | distinct accepted receipts | lost | stored without receipt | foreign rows | inconsistent submissions | submissions sent | duplicate answers |",
    "|---|---|---|---|---|---|---|---|---|",
    ...tables.map((table) => `| ${table.table} | ${table.rows} | ${table.distinctReceipts} | ${table.lost} | ${table.storedWithoutReceipt} | ${table.foreign} | ${table.inconsistent} | ${table.sentSubmissions} | ${table.retriesAnswered} |`),
  ];
  report.section(
    "Sustained load",
    [
      "The real local door as `npm start` runs it: the built CLI's `magnt dev --port <free> --persist-to <temp>` (local migrations",
      "applied, then `wrangler dev` → workerd with a real local D1 under the temp directory; no rate-limit binding, as in",
      "`wrangler.local.jsonc`). The bench process is the client, on 127.0.0.1, sharing the machine's cores with Wrangler's proxy and workerd.",
      "Workload: 25 % `tools/list`, 20 % `about_magnt`, 25 % `search_shared_experience` (70 % reads), 15 % `propose_contact`,",
      `15 % \`contribute_task_signal\` (30 % writes), each write with a fresh submission UUID, ${RETRY_SHARE * 100} % of writes an identical retry of an`,
      "earlier submission. Closed loop: each lane sends its next request when the last one answered (30 s client timeout).",
      `A bounded ramp (${stepsText(ramp)}) stops at the plateau; the run uses the smallest lane count that reached 95 % of the`,
      `peak throughput, for ${Math.round(result.sustained.seconds)} s. Afterwards, with the door stopped, both tables are read directly with`,
      "`wrangler d1 execute --local --persist-to <temp>` and every receipt of the warm-up (2 s, 4 lanes), the ramp and the run",
      "is checked against them.",
      "",
      "Ramp:",
      "",
      ...rampTable,
      "",
      `Run (${sustained.concurrency} lanes, ${sustained.seconds.toFixed(1)} s, ${rps.toFixed(0)} requests/s; per 10 s window: ${windows.map((value) => value.toFixed(0)).join(", ")}):`,
      "",
      ...opTable,
      "",
      "What was stored (warm-up, ramp and run):",
      "",
      ...checkTableText,
    ].join("\n"),
  );
}

function stepsText(ramp: readonly Phase[]): string {
  return `${ramp.map((phase) => phase.concurrency).join(", ")} lanes, ${ramp[0]?.seconds.toFixed(0) ?? "?"} s each`;
}
