/**
 * The `magnt metrics` benchmark (10 §6, 08 §5.2), called by `npm run bench`.
 *
 * A seeded export of Workers Logs API records (the event under `source`, with
 * `$workers`/`$metadata` siblings, ≈ 500-byte lines, ≈ 30 % counted event
 * types, ≈ 5 % exact duplicate lines) is generated once into a temp directory,
 * read once to warm the page cache, and then read by each contender in its own
 * child process, on the same file in the same run:
 * - the built CLI, `magnt metrics <file> --json` (its own bytes, seconds and
 *   peak RSS through the hidden MAGNT_BENCH_STATS=1);
 * - a bare Node loop that splits lines and `JSON.parse`s each (the gate's 1.0×);
 * - `jq` with the filter of 10 §6, when on PATH;
 * - DuckDB `read_ndjson_auto` + group-by on two threads, when `@duckdb/node-api`
 *   resolves from the repository (or from MAGNT_BENCH_DUCKDB_DIR).
 * Then the CLI's peak RSS with 1 M and 5 M distinct counted events, streamed
 * from a generator through stdin so no multi-GB file is written.
 *
 * Timing is never asserted in the test suites; this module only reports.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";

export interface BenchRow {
  benchmark: string;
  measurement: string;
  value: number | null;
  unit: string;
  budget: string;
  kind: "gate" | "target" | "info";
}
export type RecordFn = (row: BenchRow, passes: boolean | null) => void;

const MB = 1_000_000;
const BENCH = "magnt metrics";

// ---------------------------------------------------------------- the seeded export

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = "0123456789abcdef";
function hex(random: () => number, length: number): string {
  let text = "";
  for (let index = 0; index < length; index += 1) text += HEX[Math.floor(random() * 16)];
  return text;
}
function uuid(random: () => number): string {
  return `${hex(random, 8)}-${hex(random, 4)}-4${hex(random, 3)}-a${hex(random, 3)}-${hex(random, 12)}`;
}
function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

const USER_AGENTS = [
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
  "claude-code/1.0.44",
  "python-httpx/0.27.0",
  "node",
  "Cursor/1.2 (darwin)",
];
const PATHS = ["/", "/robots.txt", "/llms.txt", "/.well-known/ai-catalog.json", "/favicon.ico", "/about"];
const MCP_METHODS = ["initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call", "tools/call", "ping", "resources/read"];
const TOOLS = ["about_magnt", "propose_contact", "search_shared_experience", "search_shared_experience", "contribute_task_signal"];

/** One event: ≈ 30 % counted types, the rest `http` and `scheduled`. */
function benchEvent(random: () => number, time: number, receipts: string[]): Record<string, unknown> {
  const roll = random();
  const common = {
    event_id: uuid(random),
    time: new Date(time).toISOString(),
    role: "monolith",
    method: "POST",
    host: "magnt.ru",
    path: "/mcp",
    query: "",
    userAgent: pick(random, USER_AGENTS),
    clientKind: "browser-or-unknown",
    clientName: "unknown",
    referrer: "",
    country: "DE",
    colo: "FRA",
    city: "Frankfurt am Main",
    asn: 24940,
    status: 200,
    duration_ms: Math.floor(random() * 40),
    outcome: "success",
    controlled_test: random() < 0.02,
    identity_verified: false,
  };
  if (roll < 0.05) {
    return { event_id: common.event_id, time: common.time, role: "monolith", event_type: "scheduled", outcome: "ok", discovered: 0, attempted: 0, delivered: 0, retried: 0, failed: 0, skipped: 0, overflow_skipped: 0, duration_ms: 3 };
  }
  if (roll < 0.7) {
    return { ...common, event_type: "http", method: "GET", path: pick(random, PATHS), outcome: "http_success" };
  }
  if (roll < 0.73) return { ...common, event_type: roll < 0.715 ? "mcp_card" : "a2a_card", method: "GET", path: "/mcp/server-card" };
  if (roll < 0.76) {
    return { ...common, event_type: "a2a_request", path: "/a2a", a2a_protocol_version: "1.0", a2a_method: pick(random, ["SendMessage", "GetTask", "message/send"]), rpc_error_code: null };
  }
  const method = pick(random, MCP_METHODS);
  const event: Record<string, unknown> = {
    ...common,
    event_type: "mcp_request",
    mcp_protocol_version: "2026-07-28",
    mcp_method: method,
    client_name: "claude-code",
    client_version: "1.0.44",
    tool_name: null,
    resource_name: method === "resources/read" ? "magnt://profile" : null,
    rpc_error_code: null,
    tool_result: null,
  };
  if (method !== "tools/call") return event;
  const tool = pick(random, TOOLS);
  event.tool_name = tool;
  event.validation_status = "valid";
  event.self_reported_test = random() < 0.05;
  if (tool === "search_shared_experience") {
    const match = random() < 0.4;
    event.tool_result = match ? "matches_found" : "no_relevant_experience";
    event.matches_count = match ? 1 + Math.floor(random() * 3) : 0;
    event.observed_task_saved = true;
    event.rate_limited = false;
    if (!match) {
      event.search_receipt = `sr_${hex(random, 32)}`;
      receipts.push(event.search_receipt as string);
      if (receipts.length > 64) receipts.shift();
    }
  } else if (tool === "contribute_task_signal") {
    event.tool_result = random() < 0.9 ? "accepted" : "duplicate";
    event.signal_id = `ts_${uuid(random)}`;
    event.rate_limited = false;
    if (receipts.length > 0 && random() < 0.6) event.search_receipt = pick(random, receipts);
  } else if (tool === "propose_contact") {
    event.tool_result = "accepted_for_human_review";
    event.contact_id = `mc_${uuid(random)}`;
    event.duplicate = random() < 0.1;
    event.has_reply_channel = true;
    event.has_previous_contact = false;
    event.rate_limited = false;
  } else {
    event.tool_result = "profile_returned";
  }
  return event;
}

/** One API-export line: the event under `source`, plus the platform's siblings. */
function apiLine(random: () => number, event: Record<string, unknown>): string {
  const requestId = hex(random, 16);
  return JSON.stringify({
    source: event,
    dataset: "cloudflare-workers",
    timestamp: Date.parse(event.time as string),
    $workers: { truncated: false, outcome: "ok", scriptName: "magnt-observer", eventType: "fetch", executionModel: "stateless", requestId },
    $metadata: { id: hex(random, 26), requestId, service: "magnt-observer", level: "log", type: "cf-worker", origin: "fetch" },
  });
}

/** Writes a seeded export of at least `bytes` bytes; returns its size. */
export function generateBenchExport(path: string, bytes: number, seed = 1): number {
  const random = prng(seed);
  const receipts: string[] = [];
  const recent: string[] = [];
  const fd = openSync(path, "w");
  let written = 0;
  let time = Date.UTC(2026, 4, 1);
  let batch = "";
  try {
    while (written < bytes) {
      let line: string;
      if (recent.length > 0 && random() < 0.05) line = pick(random, recent); // an exact duplicate line
      else {
        time += Math.floor(random() * 2000);
        line = apiLine(random, benchEvent(random, time, receipts));
        recent.push(line);
        if (recent.length > 32) recent.shift();
      }
      batch += `${line}\n`;
      if (batch.length >= 1 << 20) {
        written += writeSync(fd, batch);
        batch = "";
      }
    }
    if (batch !== "") written += writeSync(fd, batch);
  } finally {
    closeSync(fd);
  }
  return written;
}

// ---------------------------------------------------------------- contenders

interface RunResult {
  seconds: number;
  maxRssBytes: number | null;
}

/** The bare loop: 4 MiB reads, split on newline bytes, `JSON.parse` every line. */
const BARE_LOOP = `
const fs = require("node:fs");
const fd = fs.openSync(process.argv[1], "r");
const started = performance.now();
let carry = "";
let records = 0;
for (;;) {
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  const read = fs.readSync(fd, buffer, 0, buffer.length, null);
  if (read === 0) break;
  let position = 0;
  for (;;) {
    const newline = buffer.indexOf(10, position);
    if (newline === -1 || newline >= read) break;
    const line = carry + buffer.toString("utf8", position, newline);
    carry = "";
    if (line.length > 0) { JSON.parse(line); records += 1; }
    position = newline + 1;
  }
  carry += buffer.toString("utf8", position, read);
}
if (carry.trim() !== "") { JSON.parse(carry); records += 1; }
process.stderr.write(JSON.stringify({ seconds: (performance.now() - started) / 1000, max_rss_bytes: process.resourceUsage().maxRSS * 1024, records }) + "\\n");
`;

function lastJsonLine(text: string): Record<string, unknown> {
  const lines = text.trim().split("\n");
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index]!.replace(/^magnt-bench-stats /, "");
    if (line.startsWith("{")) return JSON.parse(line) as Record<string, unknown>;
  }
  throw new Error(`no stats line in: ${text.slice(0, 500)}`);
}

function runMagnt(cli: string, file: string): RunResult {
  const result = spawnSync(process.execPath, [cli, "metrics", file, "--json"], {
    env: { ...process.env, MAGNT_BENCH_STATS: "1", NO_COLOR: "1" },
    encoding: "utf8",
    maxBuffer: 64 * MB,
  });
  if (result.status !== 0) throw new Error(`magnt metrics failed (${result.status}): ${result.stderr}`);
  const stats = lastJsonLine(result.stderr);
  return { seconds: stats.seconds as number, maxRssBytes: stats.max_rss_bytes as number };
}

function runBareLoop(file: string): RunResult {
  const result = spawnSync(process.execPath, ["-e", BARE_LOOP, file], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`bare loop failed: ${result.stderr}`);
  const stats = lastJsonLine(result.stderr);
  return { seconds: stats.seconds as number, maxRssBytes: stats.max_rss_bytes as number };
}

function jqAvailable(): boolean {
  return spawnSync("jq", ["--version"], { encoding: "utf8" }).status === 0;
}

function runJq(file: string): RunResult {
  const filter = '(.source // .) | select(.event_type=="mcp_request") | [.event_id,.mcp_method,.tool_name,.tool_result]';
  const started = performance.now();
  const result = spawnSync("sh", ["-c", `jq -c '${filter}' "$1" > /dev/null`, "sh", file], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`jq failed: ${result.stderr}`);
  return { seconds: (performance.now() - started) / 1000, maxRssBytes: null };
}

/** Where `@duckdb/node-api` resolves from, if anywhere. */
function duckdbModule(root: string): string | null {
  for (const base of [root, process.env.MAGNT_BENCH_DUCKDB_DIR]) {
    if (base === undefined || base === "") continue;
    try {
      return createRequire(join(base, "package.json")).resolve("@duckdb/node-api");
    } catch {
      // not installed there
    }
  }
  return null;
}

function runDuckDb(modulePath: string, file: string): RunResult {
  const script = `
const { DuckDBInstance } = await import(${JSON.stringify(modulePath)});
const instance = await DuckDBInstance.create(":memory:", { threads: "2" });
const connection = await instance.connect();
const started = performance.now();
const reader = await connection.runAndReadAll(
  "SELECT source.event_type AS t, source.mcp_method AS m, source.tool_name AS n, source.tool_result AS r, count(*) AS c FROM read_ndjson_auto(" + ${JSON.stringify(`'${file.replaceAll("'", "''")}'`)} + ") GROUP BY ALL");
const rows = reader.getRows().length;
process.stderr.write(JSON.stringify({ seconds: (performance.now() - started) / 1000, max_rss_bytes: process.resourceUsage().maxRSS * 1024, rows }) + "\\n");
`;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`DuckDB failed: ${result.stderr}`);
  const stats = lastJsonLine(result.stderr);
  return { seconds: stats.seconds as number, maxRssBytes: stats.max_rss_bytes as number };
}

/** Peak RSS of the CLI reading `events` distinct counted events from stdin (minimal mcp_card events). */
async function rssAtDistinctEvents(cli: string, events: number): Promise<number> {
  const child = spawn(process.execPath, [cli, "metrics", "-", "--json"], {
    env: { ...process.env, MAGNT_BENCH_STATS: "1" },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  const random = prng(events);
  const base = Date.UTC(2026, 4, 1);
  let batch = "";
  for (let index = 0; index < events; index += 1) {
    batch += `{"event_id":"${uuid(random)}","time":"${new Date(base + index).toISOString()}","event_type":"mcp_card","controlled_test":false}\n`;
    if (batch.length >= 1 << 20) {
      if (!child.stdin.write(batch)) await new Promise((resolve) => child.stdin.once("drain", resolve));
      batch = "";
    }
  }
  child.stdin.end(batch);
  const code = await exited;
  if (code !== 0) throw new Error(`magnt metrics - failed (${code}): ${stderr}`);
  return lastJsonLine(stderr).max_rss_bytes as number;
}

function warm(file: string): void {
  const fd = openSync(file, "r");
  const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
  while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  closeSync(fd);
}

// ---------------------------------------------------------------- the benchmark

export interface MetricsBenchOptions {
  root: string;
  outDir: string;
  /** Size of the large export (≥ 500 MB for the gate; smaller for a quick check). */
  largeBytes?: number;
  smallBytes?: number;
  /** Distinct counted events for the RSS rows. */
  distinctEvents?: readonly number[];
}

export async function benchMetrics(record: RecordFn, options: MetricsBenchOptions): Promise<void> {
  const largeBytes = options.largeBytes ?? 520 * MB;
  const smallBytes = options.smallBytes ?? 64 * MB;
  const cli = join(options.outDir, "metrics-cli.mjs");
  await build({
    entryPoints: [join(options.root, "cli/main.ts")],
    outfile: cli,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    packages: "external",
    logLevel: "warning",
  });
  const dir = mkdtempSync(join(tmpdir(), "magnt-metrics-bench-"));
  try {
    const small = join(dir, "export-64mb.ndjson");
    const large = join(dir, "export-large.ndjson");
    generateBenchExport(small, smallBytes, 64);
    generateBenchExport(large, largeBytes, 500);
    const size = statSync(large).size;
    const sizeLabel = `${(size / MB).toFixed(0)} MB`;

    warm(small);
    const smallRun = runMagnt(cli, small);
    record({ benchmark: BENCH, measurement: `peak RSS, ${(statSync(small).size / MB).toFixed(0)} MB input`, value: smallRun.maxRssBytes! / MB, unit: "MB", budget: "≤ 150", kind: "gate" }, smallRun.maxRssBytes! <= 150 * MB);

    warm(large);
    const bare = runBareLoop(large);
    const magnt = runMagnt(cli, large);
    const magntRate = size / MB / magnt.seconds;
    const bareRate = size / MB / bare.seconds;
    record({ benchmark: BENCH, measurement: `throughput, ${sizeLabel} NDJSON (API records)`, value: magntRate, unit: "MB/s", budget: "reported", kind: "info" }, true);
    record({ benchmark: BENCH, measurement: "bare split + JSON.parse loop", value: bareRate, unit: "MB/s", budget: "reported", kind: "info" }, true);
    record({ benchmark: BENCH, measurement: "throughput / bare loop", value: magntRate / bareRate, unit: "×", budget: "≥ 1.0", kind: "gate" }, magntRate / bareRate >= 1.0);
    record({ benchmark: BENCH, measurement: `peak RSS, ${sizeLabel} input`, value: magnt.maxRssBytes! / MB, unit: "MB", budget: "≤ 150", kind: "gate" }, magnt.maxRssBytes! <= 150 * MB);
    record({ benchmark: BENCH, measurement: "peak RSS, bare loop (reference)", value: bare.maxRssBytes! / MB, unit: "MB", budget: "reported", kind: "info" }, true);

    if (jqAvailable()) {
      const jq = runJq(large);
      const jqRate = size / MB / jq.seconds;
      record({ benchmark: BENCH, measurement: "jq (10 §6 filter)", value: jqRate, unit: "MB/s", budget: "reported", kind: "info" }, true);
      record({ benchmark: BENCH, measurement: "throughput / jq", value: magntRate / jqRate, unit: "×", budget: "≥ 3", kind: "gate" }, magntRate / jqRate >= 3);
    } else {
      record({ benchmark: BENCH, measurement: "throughput / jq (jq not installed)", value: null, unit: "×", budget: "≥ 3", kind: "gate" }, null);
    }

    const duckdb = duckdbModule(options.root);
    if (duckdb !== null) {
      const duck = runDuckDb(duckdb, large);
      const duckRate = size / MB / duck.seconds;
      record({ benchmark: BENCH, measurement: "DuckDB read_ndjson_auto + group-by, 2 threads", value: duckRate, unit: "MB/s", budget: "reported", kind: "info" }, true);
      record({ benchmark: BENCH, measurement: "throughput / DuckDB", value: magntRate / duckRate, unit: "×", budget: "≥ 0.5", kind: "target" }, magntRate / duckRate >= 0.5);
    } else {
      record({ benchmark: BENCH, measurement: "throughput / DuckDB (@duckdb/node-api not installed)", value: null, unit: "×", budget: "≥ 0.5", kind: "target" }, null);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const events of options.distinctEvents ?? [1_000_000, 5_000_000]) {
    const rss = await rssAtDistinctEvents(cli, events);
    const label = events >= 1_000_000 ? `${events / 1_000_000} M` : `${events}`;
    record({ benchmark: BENCH, measurement: `peak RSS, ${label} distinct counted events`, value: rss / MB, unit: "MB", budget: "≤ 150", kind: "target" }, rss <= 150 * MB);
  }
}

/** `node dist/bench/metrics.mjs [MB]`: this benchmark alone (a quick check with a smaller export). */
export async function runStandalone(argv: readonly string[]): Promise<void> {
  const largeMb = Number(argv[0] ?? 520);
  const rows: Array<BenchRow & { status: string }> = [];
  await benchMetrics(
    (row, passes) => rows.push({ ...row, status: passes === null ? "not measured" : passes ? "ok" : "missed" }),
    {
      root: process.cwd(),
      outDir: join(process.cwd(), "dist/bench"),
      largeBytes: largeMb * MB,
      smallBytes: Math.min(64, largeMb) * MB,
      distinctEvents: argv[1] === undefined ? [1_000_000, 5_000_000] : argv[1].split(",").map(Number),
    },
  );
  for (const row of rows) {
    console.log(`${row.measurement.padEnd(56)} ${row.value === null ? "—" : row.value.toFixed(2)} ${row.unit} (${row.budget}, ${row.kind}) ${row.status}`);
  }
}
