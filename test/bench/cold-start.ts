/**
 * Cold start (10 §6, issue 21 item 4): the time from nothing to the first
 * answer — start a runtime, evaluate the bundle, answer one `tools/list` —
 * for the door (the monolith bundle) and the bare SDK echo worker, as a ratio.
 *
 * Each start is a fresh Miniflare instance with one Worker, so the figure
 * includes starting workerd itself, which both sides pay alike and which
 * would pull the ratio towards 1. An empty Worker (no modules, a fixed
 * answer) is started the same way in every round, and the reported ratio is
 * net of it: (door − empty) / (echo − empty), over the medians of the rounds.
 * The three sides take turns in a rotating order so that load drift favours
 * none. The raw (gross) figures are in the detail column.
 */
import { Miniflare, type WorkerOptions } from "miniflare";
import type { Report } from "./report";
import { toolsList } from "./requests";
import { median } from "./stats";

const BENCH = "cold start";
const TARGET = 1.2;
const URL = "https://magnt.ru/mcp";

export interface ColdStartOptions {
  root: string;
  /** The door and echo bundles the overhead bench already built. */
  door: string;
  echo: string;
  rounds: number;
}

interface Side {
  name: "door" | "echo" | "empty";
  worker: WorkerOptions;
}

async function startAndAnswer(side: Side): Promise<number> {
  const begin = performance.now();
  const mf = new Miniflare({
    handleRuntimeStdio: (stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) => {
      stdout.resume();
      stderr.resume();
    },
    workers: [{ ...side.worker, name: side.name, compatibilityDate: "2026-04-01" } as WorkerOptions],
  });
  try {
    await mf.ready;
    const response = await mf.dispatchFetch(URL, toolsList() as never);
    const text = await response.text();
    if (response.status !== 200 || (side.name !== "empty" && !text.includes('"tools"'))) {
      throw new Error(`cold start: ${side.name} answered ${response.status}: ${text.slice(0, 200)}`);
    }
    return performance.now() - begin;
  } finally {
    await mf.dispose();
  }
}

export async function benchColdStart(report: Report, options: ColdStartOptions): Promise<void> {
  const sides: Side[] = [
    {
      name: "door",
      worker: {
        modules: true,
        scriptPath: options.door,
        d1Databases: ["CONTACTS"],
        bindings: { PUBLIC_ORIGIN: "https://magnt.ru", ALLOWED_HOSTS: "magnt.ru", SITE_ORIGIN: "" },
      },
    },
    { name: "echo", worker: { modules: true, scriptPath: options.echo, d1Databases: ["ECHO_DB"] } },
    { name: "empty", worker: { modules: true, script: 'export default { fetch() { return new Response("{}"); } };' } },
  ];
  const samples: Record<Side["name"], number[]> = { door: [], echo: [], empty: [] };
  // One unmeasured start of each, so the first measured one pays no disk or JIT warm-up of the bench itself.
  for (const side of sides) await startAndAnswer(side);
  for (let round = 0; round < options.rounds; round += 1) {
    for (let turn = 0; turn < sides.length; turn += 1) {
      const side = sides[(round + turn) % sides.length]!;
      samples[side.name].push(await startAndAnswer(side));
    }
  }
  const door = median(samples.door);
  const echo = median(samples.echo);
  const empty = median(samples.empty);
  const net = (door - empty) / (echo - empty);
  report.record(
    { benchmark: BENCH, measurement: "door / echo: start, evaluate the bundle, first tools/list (net of an empty Worker)", value: net, unit: "×", budget: "reported", kind: "info" },
    true,
    {
      detail: `medians over ${options.rounds} rounds: door ${door.toFixed(0)} ms, echo ${echo.toFixed(0)} ms, empty Worker ${empty.toFixed(0)} ms; gross ratio ${(door / echo).toFixed(2)}×`,
      target: { budget: `≤ ${TARGET}`, met: net <= TARGET },
    },
  );
  report.section(
    "Method: cold start",
    [
      "Each sample starts a fresh Miniflare instance with one Worker, waits until it is ready (workerd started, the bundle",
      "evaluated) and sends one modern `tools/list`; the sample is the wall time from creating the instance to the end of that",
      `answer. The door (the monolith bundle of the overhead bench), the echo worker and an empty Worker take turns, ${options.rounds}`,
      "rounds in a rotating order, after one unmeasured start of each. Starting workerd costs both sides the same and would",
      "pull the ratio towards 1, so the row is net of the empty Worker: (door − empty) / (echo − empty) over the medians.",
    ].join("\n"),
  );
}
