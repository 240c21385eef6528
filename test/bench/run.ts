/**
 * `npm run bench` (10 §6, issue 14): every benchmark in one process tree, each
 * measurement and each ratio from the same run, gates and reported targets side
 * by side. Prints a table, writes dist/bench/report.json and docs/performance.md
 * (machine, date, load, command, every row), and exits 1 when a gated budget is
 * missed. Timing is never asserted in the test suites.
 *
 * During development one piece can run alone:
 *   node dist/bench/run.mjs --only=search,cpu,bundles,overhead,load,metrics [--quick]
 * (`--quick`: fewer rounds and a 10 s load run, for checking the code only;
 * for metrics a 128 MB export, 3 rounds and only the 1 M distinct-events rows).
 * `--only=metrics` alone is how to iterate on `magnt metrics`: every metrics
 * row, DuckDB included, in about five minutes.
 * A partial or quick run writes dist/bench/report.json but never
 * docs/performance.md, which always shows one complete run.
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { benchBundles } from "./bundles";
import { benchCpu } from "./cpu";
import { benchLoad } from "./load";
import { benchMetrics as runMetricsBench } from "./metrics";
import { benchOverhead } from "./overhead";
import { describeMachine, finishMachine, printTable, renderPerformanceDoc, Report, writeFileMaking } from "./report";
import { benchSearch } from "./search";

const ROOT = process.cwd();
const OUT = join(ROOT, "dist/bench");
const PIECES = ["search", "cpu", "bundles", "overhead", "load", "metrics"] as const;
type Piece = (typeof PIECES)[number];

function selectedPieces(argv: readonly string[]): Set<Piece> {
  const only = argv.find((arg) => arg.startsWith("--only="));
  if (only === undefined) return new Set(PIECES);
  const chosen = only.slice("--only=".length).split(",").filter((name) => name !== "");
  const unknown = chosen.filter((name) => !(PIECES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown bench piece(s): ${unknown.join(", ")} (known: ${PIECES.join(", ")})`);
  return new Set(chosen as Piece[]);
}

async function main(): Promise<void> {
  const pieces = selectedPieces(process.argv.slice(2));
  const quick = process.argv.includes("--quick");
  const complete = pieces.size === PIECES.length && !quick;
  mkdirSync(OUT, { recursive: true });
  const machine = describeMachine();
  const started = new Date();
  console.log(`bench on ${machine.cpuModel}, ${machine.nproc} CPUs, ${machine.totalMemoryMB} MB, node ${machine.node}`);
  console.log(`load at start: ${machine.uptimeStart}`);
  const report = new Report();
  const step = async (piece: Piece, run: () => Promise<void> | void) => {
    if (!pieces.has(piece)) return;
    const begin = performance.now();
    console.log(`… ${piece}`);
    await run();
    console.log(`  ${piece} done in ${((performance.now() - begin) / 1000).toFixed(0)} s`);
  };
  await step("search", () => benchSearch(report));
  await step("cpu", () => benchCpu(report, { root: ROOT, outDir: OUT, ...(quick ? { iterations: 100 } : {}) }));
  await step("bundles", () => benchBundles(report, { root: ROOT, outDir: OUT }));
  await step("overhead", () => benchOverhead(report, { root: ROOT, outDir: OUT, ...(quick ? { rounds: 3, sequentialCalls: 100, concurrentSeconds: 0.5, concurrentMinSamples: 100 } : {}) }));
  await step("load", () => benchLoad(report, { root: ROOT, ...(quick ? { seconds: 10, stepSeconds: 2, steps: [1, 4, 16] } : {}) }));
  await step("metrics", () =>
    runMetricsBench(report.record, {
      root: ROOT,
      outDir: OUT,
      section: (title, body) => report.section(title, body),
      ...(quick ? { largeBytes: 128e6, rounds: 3, distinctEvents: [1_000_000], distinctFromFile: 1_000_000 } : {}),
    }),
  );
  const finished = finishMachine(machine);
  const seconds = (Date.now() - started.getTime()) / 1000;

  console.log("");
  printTable(report);
  const json = { time: started.toISOString(), seconds, node: process.version, machine: finished, complete, quick, pieces: [...pieces], rows: report.rows, sections: report.sections };
  writeFileSync(join(OUT, "report.json"), `${JSON.stringify(json, null, 2)}\n`);
  const command = complete ? "npm run bench" : `node dist/bench/run.mjs ${process.argv.slice(2).join(" ")}`;
  const doc = renderPerformanceDoc(report, finished, { date: started.toISOString(), command, seconds });
  // A partial or quick run's rendering goes under dist/ for review, never over the published figures.
  writeFileMaking(complete ? join(ROOT, "docs/performance.md") : join(OUT, "performance.partial.md"), doc);
  const missedGates = report.missedGates();
  console.log(`\nload at end: ${finished.uptimeEnd}`);
  console.log(
    `${missedGates.length === 0 ? "all gates met" : `${missedGates.length} gate(s) missed`}; report: dist/bench/report.json${complete ? ", docs/performance.md" : " (partial or quick run: docs/performance.md not written)"}`,
  );
  process.exit(missedGates.length === 0 ? 0 : 1);
}

await main();
