/**
 * `npm run bench` (10 §6): every benchmark in one process tree, each
 * measurement and each ratio from the same run, gates and reported targets side
 * by side. Prints a table, writes dist/bench/report.json and exits 1 when a
 * gated budget is missed. Timing is never asserted in the test suites.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { findMatches } from "../../worker/signals/matcher";
import { benchMetrics as runMetricsBench } from "./metrics";
import { bundleFacts, carried, OWNER_GATEWAY_FORBIDDEN } from "../helpers/bundle";

const ROOT = process.cwd();
const OUT = join(ROOT, "dist/bench");
const OFFLINE_ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" };

type Status = "ok" | "missed" | "not measured";
interface Row {
  benchmark: string;
  measurement: string;
  value: number | null;
  unit: string;
  budget: string;
  kind: "gate" | "target" | "info";
  status: Status;
}
const rows: Row[] = [];

function record(row: Omit<Row, "status">, passes: boolean | null): void {
  rows.push({ ...row, status: passes === null ? "not measured" : passes ? "ok" : "missed" });
}

// ---------------------------------------------------------------- bundle size

const DEPLOYABLES = [
  ["monolith", "wrangler.jsonc"],
  ["core", "wrangler.core.jsonc"],
  ["gateway", "wrangler.gateway.jsonc"],
  ["owner_gateway", "wrangler.owner.jsonc"],
] as const;

function wranglerBin(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("wrangler/package.json")), "bin/wrangler.js");
}

function benchBundleSizes(): void {
  for (const [role, config] of DEPLOYABLES) {
    if (!existsSync(join(ROOT, config))) {
      record({ benchmark: "bundle size", measurement: `${role} (${config} not in this build)`, value: null, unit: "KB gzip", budget: "≤ 150", kind: "gate" }, null);
      continue;
    }
    const outdir = join(OUT, "bundle", role);
    const result = spawnSync(process.execPath, [wranglerBin(), "deploy", "--dry-run", "--outdir", outdir, "--config", config], {
      env: OFFLINE_ENV,
      encoding: "utf8",
    });
    if (result.status !== 0) throw new Error(`wrangler dry-run of ${config} failed:\n${result.stderr}`);
    const gzipBytes = readdirSync(outdir)
      .filter((file) => /\.(m?js)$/.test(file))
      .reduce((sum, file) => sum + gzipSync(readFileSync(join(outdir, file)), { level: 9 }).byteLength, 0);
    const kb = gzipBytes / 1000;
    record({ benchmark: "bundle size", measurement: role, value: kb, unit: "KB gzip", budget: "≤ 150", kind: "gate" }, kb <= 150);
    if (role === "monolith") {
      record({ benchmark: "bundle size", measurement: "monolith (public door)", value: kb, unit: "KB gzip", budget: "≤ 120", kind: "target" }, kb <= 120);
    }
  }
}

/** The public route table alone (what the gateway carries in front of core), next to the monolith. */
async function benchRouteTableBundle(): Promise<void> {
  const { inputs, gzipBytes } = await bundleFacts("worker/entries/public-routes.ts");
  const clean = !inputs.some((input) => /@modelcontextprotocol[\\/]server|node_modules[\\/]zod[\\/]/.test(input));
  record(
    { benchmark: "bundle size", measurement: "public route table (no SDK, no zod)", value: gzipBytes / 1000, unit: "KB gzip", budget: "SDK- and zod-free", kind: "gate" },
    clean,
  );
}

/** The owner gateway: no tool code, no MCP SDK (the rule lives in test/helpers/bundle.ts and its test). */
async function benchOwnerGatewayBundle(): Promise<void> {
  const facts = await bundleFacts("worker/entries/owner-gateway.ts");
  const forbidden = carried(facts, OWNER_GATEWAY_FORBIDDEN);
  record(
    { benchmark: "bundle size", measurement: "owner gateway (no tool code, no MCP SDK)", value: facts.gzipBytes / 1000, unit: "KB gzip", budget: "tool- and SDK-free", kind: "gate" },
    forbidden.length === 0,
  );
  if (forbidden.length > 0) console.error(`owner gateway bundle carries: ${forbidden.join(", ")}`);
  const leftovers = Object.entries(facts.bytesInOutput).filter(([path]) => /^worker\/owner\/(store|schemas|visitor-content)\.ts$/.test(path));
  record(
    { benchmark: "bundle size", measurement: "owner gateway: owner store/schema constants kept", value: leftovers.reduce((sum, [, bytes]) => sum + bytes, 0) / 1000, unit: "KB (min)", budget: "", kind: "info" },
    true,
  );
}

// ---------------------------------------------------------------- door overhead

async function bundleWorker(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    minify: true,
    external: ["cloudflare:*"],
    logLevel: "warning",
  });
  return outfile;
}

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function toolCall(name: string, args: Record<string, unknown>): RequestInit {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: MODERN_META } }),
  };
}

type Call = () => Promise<void>;

async function p50(call: Call, warmup: number, iterations: number): Promise<number> {
  for (let index = 0; index < warmup; index += 1) await call();
  const samples: number[] = [];
  for (let index = 0; index < iterations; index += 1) {
    const start = performance.now();
    await call();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

async function requestsPerSecond(call: Call, seconds: number, inFlight: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let completed = 0;
  const lane = async () => {
    while (performance.now() < deadline) {
      await call();
      completed += 1;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, lane));
  return completed / ((performance.now() - start) / 1000);
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function benchDoorOverhead(): Promise<void> {
  const door = await bundleWorker("worker/entries/monolith.ts", join(OUT, "workers/monolith.mjs"));
  const echo = await bundleWorker("test/bench/echo-worker.ts", join(OUT, "workers/echo.mjs"));
  const mf = new Miniflare({
    // The door's telemetry lines are drained, not printed: 8000 of them would bury the report.
    handleRuntimeStdio: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
      stdout.resume();
      stderr.resume();
    },
    workers: [
      {
        name: "door",
        modules: true,
        scriptPath: door,
        compatibilityDate: "2026-04-01",
        d1Databases: ["CONTACTS"],
        bindings: { PUBLIC_ORIGIN: "https://magnt.ru", ALLOWED_HOSTS: "magnt.ru", SITE_ORIGIN: "" },
      },
      { name: "echo", modules: true, scriptPath: echo, compatibilityDate: "2026-04-01", routes: ["echo.bench/*"] },
    ],
  });
  try {
    const db = await mf.getD1Database("CONTACTS", "door");
    for (const file of readdirSync(join(ROOT, "migrations")).filter((name) => name.endsWith(".sql")).sort()) {
      for (const statement of splitSql(readFileSync(join(ROOT, "migrations", file), "utf8"))) await db.prepare(statement).run();
    }
    for (let index = 0; index < 100; index += 1) {
      await db
        .prepare(
          "INSERT INTO task_signals (signal_id, created_at, goal, blocker, tried, learned, submission_id, payload_hash, self_reported_test, status) VALUES (?, ?, ?, ?, ?, NULL, ?, 'bench', 0, 'active')",
        )
        .bind(`ts_${crypto.randomUUID()}`, new Date(Date.now() - index * 1000).toISOString(), ...realisticTask(index), crypto.randomUUID())
        .run();
    }

    const doorCall = (name: string, args: () => Record<string, unknown>): Call => async () => {
      const response = await mf.dispatchFetch("https://magnt.ru/mcp", toolCall(name, args()) as never);
      await response.text();
    };
    const echoCall: Call = async () => {
      const response = await mf.dispatchFetch("https://echo.bench/mcp", toolCall("echo", { text: "hello" }) as never);
      await response.text();
    };
    const about = doorCall("about_magnt", () => ({}));

    const echoP50 = await p50(echoCall, 200, 2000);
    const doorP50 = await p50(about, 200, 2000);
    const echoRps = await requestsPerSecond(echoCall, 5, 16);
    const doorRps = await requestsPerSecond(about, 5, 16);
    const latencyRatio = doorP50 / echoP50;
    const throughputRatio = echoRps / doorRps;
    record({ benchmark: "door overhead", measurement: "p50 echo tools/call", value: echoP50, unit: "ms", budget: "", kind: "info" }, true);
    record({ benchmark: "door overhead", measurement: "p50 door about_magnt", value: doorP50, unit: "ms", budget: "", kind: "info" }, true);
    record({ benchmark: "door overhead", measurement: "rps echo (16 in flight)", value: echoRps, unit: "req/s", budget: "", kind: "info" }, true);
    record({ benchmark: "door overhead", measurement: "rps door (16 in flight)", value: doorRps, unit: "req/s", budget: "", kind: "info" }, true);
    record({ benchmark: "door overhead", measurement: "p50(door) / p50(echo)", value: latencyRatio, unit: "×", budget: "≤ 1.5", kind: "gate" }, latencyRatio <= 1.5);
    record({ benchmark: "door overhead", measurement: "rps(echo) / rps(door)", value: throughputRatio, unit: "×", budget: "≤ 1.5", kind: "gate" }, throughputRatio <= 1.5);
    record({ benchmark: "door overhead", measurement: "p50 ratio", value: latencyRatio, unit: "×", budget: "≤ 1.3", kind: "target" }, latencyRatio <= 1.3);
    record({ benchmark: "door overhead", measurement: "rps ratio", value: throughputRatio, unit: "×", budget: "≤ 1.3", kind: "target" }, throughputRatio <= 1.3);

    let seq = 0;
    const searchP50 = await p50(doorCall("search_shared_experience", () => ({ goal: `deploy cloudflare worker cron retry ${seq++}`, is_test: true })), 50, 500);
    const proposeP50 = await p50(doorCall("propose_contact", () => ({ summary: `bench message ${seq++}`, is_test: true })), 50, 500);
    record({ benchmark: "door overhead", measurement: "p50 search_shared_experience (100 signals)", value: searchP50, unit: "ms", budget: "reported", kind: "info" }, true);
    record({ benchmark: "door overhead", measurement: "p50 propose_contact", value: proposeP50, unit: "ms", budget: "reported", kind: "info" }, true);
  } finally {
    await mf.dispose();
  }
}

/** Splits a migration file into statements (no semicolons inside our SQL strings). */
function splitSql(sql: string): string[] {
  return sql.split(";").map((statement) => statement.trim()).filter((statement) => statement !== "");
}

// ---------------------------------------------------------------- search

/** A deterministic PRNG so every run measures the same corpus. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ENGLISH = "deploy worker cloudflare cron queue retry timeout database migration schema index token oauth client server request response cache header stream parser invoice payment ledger contract investor vehicle securitisation structure capital market agent tool memory search signal".split(" ");
const RUSSIAN = "развернуть воркер база данных миграция схема индекс токен клиент сервер запрос ответ кэш заголовок поток платеж договор инвестор структура капитал рынок агент инструмент память поиск сигнал ошибка".split(" ");

function sentence(random: () => number, length: number): string {
  let text = "";
  while (text.length < length) {
    const words = random() < 0.6 ? ENGLISH : RUSSIAN;
    text += (text === "" ? "" : " ") + words[Math.floor(random() * words.length)]!;
  }
  return text.slice(0, length);
}

function realisticTask(seed: number): [string, string, string] {
  const random = prng(seed + 1);
  return [sentence(random, 120), sentence(random, 120), sentence(random, 240)];
}

function benchSearch(): void {
  const realistic = Array.from({ length: 100 }, (_, index) => {
    const [goal, blocker, tried] = realisticTask(index);
    return { signal_id: `ts_${index}`, goal, blocker, tried, learned: null };
  });
  const maximal = Array.from({ length: 100 }, (_, index) => {
    const random = prng(index + 1000);
    return { signal_id: `ts_${index}`, goal: sentence(random, 1000), blocker: sentence(random, 1000), tried: sentence(random, 2000), learned: null };
  });
  const query = { goal: "deploy a cloudflare worker with a cron queue", blocker: "retry timeout on the database migration", tried: "развернуть воркер и поиск ошибка" };

  const measure = (candidates: typeof realistic, iterations: number) => {
    const samples: number[] = [];
    for (let index = 0; index < iterations; index += 1) {
      const start = performance.now();
      findMatches(query, candidates);
      samples.push(performance.now() - start);
    }
    return median(samples);
  };
  measure(realistic, 500); // warm-up
  const realisticP50 = measure(realistic, 5000);
  record({ benchmark: "search", measurement: "tokenise + match, 100 realistic candidates", value: realisticP50, unit: "ms p50", budget: "≤ 1", kind: "gate" }, realisticP50 <= 1);
  const maximalP50 = measure(maximal, 500); // reported only: fewer iterations keep the run short
  record({ benchmark: "search", measurement: "tokenise + match, 100 maximum-length candidates", value: maximalP50, unit: "ms p50", budget: "reported", kind: "info" }, true);
}

// ---------------------------------------------------------------- metrics

async function benchMetrics(): Promise<void> {
  await runMetricsBench(record, { root: ROOT, outDir: OUT });
}

// ---------------------------------------------------------------- report

function printReport(): void {
  const header = ["benchmark", "measurement", "value", "unit", "budget", "kind", "status"];
  const lines = rows.map((row) => [
    row.benchmark,
    row.measurement,
    row.value === null ? "—" : row.value >= 100 ? row.value.toFixed(0) : row.value.toFixed(3),
    row.unit,
    row.budget,
    row.kind,
    row.status === "missed" && row.kind === "target" ? "missed (target)" : row.status,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (line: string[]) => line.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  console.log(format(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const line of lines) console.log(format(line));
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  benchSearch();
  benchBundleSizes();
  await benchRouteTableBundle();
  await benchOwnerGatewayBundle();
  await benchDoorOverhead();
  await benchMetrics();
  printReport();
  const report = { time: new Date().toISOString(), node: process.version, rows };
  writeFileSync(join(OUT, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  const missedGates = rows.filter((row) => row.kind === "gate" && row.status === "missed");
  console.log(`\n${missedGates.length === 0 ? "all gates met" : `${missedGates.length} gate(s) missed`}; report: dist/bench/report.json`);
  process.exit(missedGates.length === 0 ? 0 : 1);
}

await main();
