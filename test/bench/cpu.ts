/**
 * CPU time per public request on its worst allowed input (issue 21, 10 §6):
 * the door's handler alone — the monolith bundle built with the Workers
 * conditions, its `fetch` called directly, D1 and the rate limiter replaced by
 * in-memory stand-ins that answer at once — measured in a child Node of its own
 * without V8's GC threads (`cpu-child.ts`, `cpu-measure.ts`). The CPU time
 * around one request (from the call, with the request built beforehand as the
 * platform hands it over, until the answer's bytes are read) is what the request cost: what
 * the platform bills against its limit (10 ms on the free plan), since time
 * waiting on D1 is not CPU there either. D1's own work is not in it; decoding
 * D1's answer is (the stand-in hands the rows over as JSON text parsed per
 * request, as the binding does).
 */
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { build } from "esbuild";
import { bundleWorker } from "./overhead";
import { wranglerAliases } from "../helpers/bundle";
import { GATE_MS, TARGET_MS } from "./cpu-measure";
import { buildThreadClock } from "./thread-clock";
import type { Report, Row as ReportRow } from "./report";

export interface CpuOptions {
  root: string;
  outDir: string;
  /** Measured requests per tool (default 400, after 50 unmeasured). */
  iterations?: number;
}

/**
 * Collections run on the measured thread, inside the request that caused them (a V8 flag, so a child);
 * `gc()` lets a row that builds a fresh window per request collect the building first (cpu-measure.ts).
 */
const CHILD_FLAGS = ["--single-threaded-gc", "--expose-gc"];

/**
 * The V8 configurations the handler is measured in. `platform` is gated: a
 * Worker's isolate may use 128 MB, and since October 2025 Workers let V8 size
 * the young generation from that limit by its own heuristics (blog.cloudflare.com,
 * "Unpacking Cloudflare Workers CPU Performance Benchmarks"), which is what
 * `--max-heap-size=128` asks of V8 here (a 1 MB new space where Node's own
 * default grows to 16 MB), decision 200; and workerd starts V8 with
 * incremental marking off (`--noincremental-marking`, set for every isolate in
 * workerd's `src/workerd/jsg/setup.c++`), so a full collection is one pause in
 * the request that triggers it rather than marking steps spread over the
 * requests around it, decision 221. Reported beside it: the same heap with
 * V8's default incremental marking (what the gate measured before 221), and
 * Node's default heap (about 4 GB), so the effect of each stays visible.
 */
const HEAPS = {
  platform: { flags: ["--max-heap-size=128", "--noincremental-marking"], label: "", gated: true },
  incremental: { flags: ["--max-heap-size=128"], label: ", incremental marking on (V8's default, off in Workers)", gated: false },
  node: { flags: [], label: ", Node's default heap", gated: false },
} as const;
type Heap = keyof typeof HEAPS;

export async function benchCpu(report: Report, options: CpuOptions): Promise<void> {
  // Bundled as Wrangler bundles the door (Workers conditions, the configs' aliases), so the measured
  // code is the deployed code; `node:*` stays external because it runs in Node here.
  const doorFile = await bundleWorker(
    join(options.root, "worker/entries/monolith.ts"),
    join(options.outDir, "workers/monolith-node.mjs"),
    wranglerAliases(),
    ["cloudflare:*", "node:*"],
  );
  const childFile = join(options.outDir, "cpu-child.mjs");
  await build({
    entryPoints: [join(options.root, "test/bench/cpu-child.ts")],
    outfile: childFile,
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "warning",
  });
  const clock = buildThreadClock(options.root, options.outDir);
  if (clock.kind === "unavailable") {
    console.error(`  cpu: no thread clock (${clock.reason}); measuring with the process clock, which also counts V8's compiler threads`);
  }
  for (const heap of Object.keys(HEAPS) as Heap[]) {
    const rowsFile = join(options.outDir, `cpu-rows-${heap}.json`);
    rmSync(rowsFile, { force: true });
    const task = { doorFile, rowsFile, iterations: options.iterations ?? 400, heap: { label: HEAPS[heap].label, gated: HEAPS[heap].gated }, clockFile: clock.kind === "built" ? clock.file : null };
    const child = spawnSync(process.execPath, [...CHILD_FLAGS, ...HEAPS[heap].flags, childFile], {
      env: { ...process.env, MAGNT_BENCH_CPU_CHILD: JSON.stringify(task) },
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (!existsSync(rowsFile)) throw new Error(`cpu bench: the measuring child wrote no rows (exit ${child.status ?? child.signal})`);
    const written = JSON.parse(readFileSync(rowsFile, "utf8")) as { rows: ReportRow[] };
    report.rows.push(...written.rows);
  }
  report.section("Method: CPU per request", METHOD);
}

const METHOD = `The monolith is bundled as Wrangler bundles it (Workers conditions) and its \`fetch\` is called in process (a child of
the bench); D1 and the rate limiter are in-memory stand-ins that answer at once (D1's rows are handed over as JSON text parsed per
request, as the binding decodes D1's answer). The measuring runs in a child process with V8's GC threads off
(\`--single-threaded-gc\`), so a request's figure — the measuring thread's CPU time from the call (the request built beforehand, its body as bytes, as the
platform hands it to a Worker) until the answer's bytes are read (decoding them is the client's work), read
with \`clock_gettime(CLOCK_THREAD_CPUTIME_ID)\` through a one-function addon the bench builds (\`test/bench/thread-cpu.c\`) —
includes the collections it caused and nothing of other requests': what the platform bills against its limit (10 ms on the free
plan); waiting on D1 is not CPU there either, and D1's own work is not counted. V8's background compiler threads are not the
request's thread and are not counted; Node 20's \`process.cpuUsage()\` counts them, and its slowest requests were those during which
TurboFan finished a compilation elsewhere (decision 205). Without a C compiler the bench falls back to that process clock and
labels the rows. The gated rows are measured in V8 as a Worker's isolate runs it: a 128 MB heap
(\`--max-heap-size=128\`), V8 sizing the young generation from it, as Workers do since October 2025 (a 1 MB new space, decision
200), and incremental marking off (\`--noincremental-marking\`, which workerd sets for every isolate in \`src/workerd/jsg/setup.c++\`),
so a full collection is one pause in the request that triggers it, not marking steps spread over the requests around it
(decision 221); the detail column says how many requests went above the free plan's 10 ms, which is where such a pause shows.
The rows marked "incremental marking on" repeat the measuring with V8's default marking in the same heap (the gated configuration
before decision 221), and the rows marked "Node's default heap" in Node's own defaults (about 4 GB, a new space that grows to
16 MB, incremental marking on), where collections are rarer but each costs more; both are reported, not gated. The child loads the door's
bundle, the stand-ins and its loop and nothing else (not the bench's Miniflare and esbuild, about 19 MB of heap that every full
collection would mark, decision 203); the stand-ins' windows (about 2.5 MB) are the one thing it holds beyond the door's own. Worst inputs: every field at its
limit, in Cyrillic words that never repeat (two-byte text; 800 distinct tokens in a 4000-character task); the search over 100
such candidates, each with the token list stored at contribution (03 §5.6). 50 unmeasured requests, then the measured ones; p99
gated at ${GATE_MS} ms, target ${TARGET_MS} ms. The two reported search rows show rows from before migration 0008: the first search of an
isolate tokenises each once (\`worker/signals/candidate-tokens.ts\`), later searches find them cached. On a machine shared with
other work the tail (p99) moves with its load much more than the median does.`;
