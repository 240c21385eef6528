/**
 * The built CLI's `metrics` as a child process (08 §5): `node bin/magnt.js
 * metrics …` on the fixture files in every input shape and the split pair,
 * stdin (`-`) plain and gzip through a real pipe, `--json`, exit 2 for an
 * unparseable date and 3 for an unreadable file (each ending stdout with one
 * JSON error object), the canary check on both output modes, and a file large
 * enough for the parallel path, whose worker thread (dist/cli/metrics-worker.mjs)
 * must count blocks and give exactly the serial path's summary. No door is
 * started: this file runs in seconds.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { summarise } from "../../cli/commands/metrics/index";
import { PARALLEL_MIN_BYTES } from "../../cli/commands/metrics/parallel";
import { stdinInput } from "../../cli/commands/metrics/sources";
import { apiRecord, expectedMonolithSummary, monolithEvents, type Event } from "../fixtures/metrics/scenario";
import { jsonLines, magnt, MAGNT_BIN, OFFLINE_ENV, REPO_ROOT, removeTempDirs, tempDir, type CliRun } from "./helpers";

const fixture = (name: string): string => join(REPO_ROOT, "test/fixtures/metrics", name);

afterAll(() => removeTempDirs());

/**
 * Runs the built CLI through real pipes: `input` piped to its stdin (the `-`
 * input), or, with `closedStdout`, its stdout's read end closed before it
 * writes anything, as `| head` closes it after a line.
 */
function magntPiped(args: string[], pipes: { input?: Buffer; closedStdout?: boolean }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAGNT_BIN, ...args], { cwd: REPO_ROOT, env: OFFLINE_ENV, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    if (pipes.closedStdout === true) child.stdout.destroy();
    else child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`magnt ${args.join(" ")} did not finish\n${stderr}`));
    }, 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(pipes.input);
  });
}

/** Exactly one JSON line on stdout, nothing on stderr, exit 0. */
function summaryOf(run: CliRun): unknown {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe("");
  const lines = jsonLines(run.stdout);
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe("magnt metrics (built CLI)", () => {
  it.each(["monolith.ndjson", "monolith-source.ndjson", "monolith-array.json", "monolith-envelope.json", "monolith.ndjson.gz"])(
    "%s --json gives the hand-derived summary",
    async (name) => {
      expect(summaryOf(await magnt(["metrics", fixture(name), "--json"]))).toEqual(expectedMonolithSummary());
    },
  );

  it("counts the split pair (gateway + core) once, and dedupes the same events across shapes", async () => {
    const expected = expectedMonolithSummary();
    const split = summaryOf(await magnt(["metrics", fixture("gateway.ndjson"), fixture("core.json"), "--json"]));
    expect(split).toEqual({ ...expected, inputs: { ...expected.inputs, files: 2, records: 55 + 44 } });
    const all = summaryOf(
      await magnt(["metrics", fixture("monolith.ndjson"), fixture("monolith-array.json"), fixture("monolith.ndjson.gz"), "--json"]),
    ) as typeof expected;
    expect({ ...all, inputs: undefined }).toEqual({ ...expected, inputs: undefined });
    expect(all.inputs.counted_events).toBe(expected.inputs.counted_events);
  });

  it("reads stdin (-), plain and gzip, through a real pipe", async () => {
    const bytes = readFileSync(fixture("monolith.ndjson"));
    for (const input of [bytes, gzipSync(bytes)]) {
      expect(summaryOf(await magntPiped(["metrics", "-", "--json"], { input }))).toEqual(expectedMonolithSummary());
    }
  });

  it("prints the human report by default (funnel first, counts, details; no colour off a TTY)", async () => {
    const run = await magnt(["metrics", fixture("monolith-envelope.json")]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Funnel\b/);
    expect(run.stdout).toMatch(/counted events\s+47\b/);
    expect(run.stdout).toMatch(/valid searches\s+█+\s+8\s+267%/);
    expect(run.stdout).toMatch(/Per day \(UTC\) 2026-05-01 … 2026-05-02, 2 days/);
    expect(run.stdout).toContain("correlation: contributions with receipt 8");
    expect(run.stdout).not.toMatch(/\u001b\[/);
  });

  it.each([["--since", "yesterday"], ["--until", "2026-02-30"]])("%s %s → exit 2, stdout ends with one JSON error", async (option, value) => {
    const run = await magnt(["metrics", fixture("monolith.ndjson"), option, value, "--json"]);
    expect(run.code).toBe(2);
    const lines = jsonLines(run.stdout);
    expect(lines).toHaveLength(1);
    expect(lines.at(-1)).toMatchObject({ error: { code: "usage" } });
  });

  it("an unreadable file (missing, or a directory) → exit 3, stdout ends with one JSON error", async () => {
    for (const bad of [join(tempDir("metrics"), "missing.ndjson"), tempDir("metrics")]) {
      const run = await magnt(["metrics", fixture("monolith.ndjson"), bad, "--json"]);
      expect(run.code).toBe(3);
      const lines = jsonLines(run.stdout);
      expect(lines).toHaveLength(1);
      expect(lines.at(-1)).toMatchObject({ error: { code: "environment" } });
    }
  });

  it("counts a large NDJSON file on the main thread and the worker thread exactly as the serial path", async () => {
    // The scenario under fresh ids per repetition, every third repetition re-using the previous ids
    // (duplicates across blocks, first occurrence wins), with `http` events in between, past PARALLEL_MIN_BYTES.
    const events = monolithEvents();
    const padding = JSON.stringify(apiRecord({ event_id: "http-0", time: "2026-05-01T10:00:00.000Z", event_type: "http", path: "/", userAgent: "x".repeat(400) }, 0));
    const parts: string[] = [];
    let bytes = 0;
    for (let round = 0; bytes < PARALLEL_MIN_BYTES + 4 * 1024 * 1024; round += 1) {
      const idRound = round % 3 === 2 ? round - 1 : round;
      for (const [index, event] of events.entries()) {
        const line = JSON.stringify(apiRecord({ ...event, event_id: `${String(event.event_id)}-${idRound}`, controlled_test: round % 3 === 2 ? true : event.controlled_test }, index));
        parts.push(line, padding);
        bytes += line.length + padding.length + 2;
      }
    }
    const text = Buffer.from(`${parts.join("\n")}\n`);
    const path = join(tempDir("metrics-large"), "large.ndjson");
    writeFileSync(path, text);
    // Two threads whatever the machine's load (chooseThreads would pick one on a busy machine).
    const run = await magnt(["metrics", path, "--json"], { env: { MAGNT_BENCH_STATS: "1", MAGNT_METRICS_THREADS: "2" } });
    expect(run.code, run.stderr).toBe(0);
    const stats = JSON.parse(run.stderr.trim().replace(/^magnt-bench-stats /, "")) as { blocks: number; worker_blocks: number };
    expect(stats.blocks).toBeGreaterThan(1);
    expect(stats.worker_blocks, "the worker thread counted blocks").toBeGreaterThan(0);
    const serial = await summarise([stdinInput(Readable.from([text]))], { since: null, until: null });
    expect(serial.inputs.duplicates_removed).toBeGreaterThan(0);
    expect(jsonLines(run.stdout)).toEqual([JSON.parse(JSON.stringify(serial))]);
  }, 120_000);

  it("never prints a canary from any string field, in either output mode", async () => {
    const CANARY = "CANARYe2e9b1";
    const events: Event[] = monolithEvents().map((event, index) => {
      const copy: Event = {};
      for (const [key, value] of Object.entries(event)) {
        copy[key] = key !== "event_type" && key !== "time" && typeof value === "string" ? `${CANARY}-${key}-${index}` : value;
      }
      copy.goal = `${CANARY}-goal`;
      copy.message = `${CANARY}-message`;
      return copy;
    });
    const dir = tempDir("metrics-canary");
    const ndjson = join(dir, "canary.ndjson");
    writeFileSync(ndjson, events.map((event) => JSON.stringify(event)).join("\n") + "\n");
    const envelope = join(dir, "canary.json");
    writeFileSync(envelope, JSON.stringify({ result: { events: { events: events.map(apiRecord) } } }));
    const runs = [
      await magnt(["metrics", ndjson]),
      await magnt(["metrics", ndjson, "--json"]),
      await magnt(["metrics", envelope]),
      await magnt(["metrics", envelope, "--json"]),
      await magntPiped(["metrics", "-", "--json"], { input: gzipSync(readFileSync(ndjson)) }),
    ];
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout + run.stderr).not.toContain(CANARY);
    }
    // The canaries did reach the counter: every event counted, methods and names as `unknown`.
    const summary = jsonLines(runs[1]!.stdout)[0] as ReturnType<typeof expectedMonolithSummary>;
    expect(summary.by_event_type).toEqual({ mcp_request: 41, mcp_card: 2, a2a_request: 4, a2a_card: 1 });
    expect(Object.keys(summary.mcp.by_method)).toEqual(["unknown", "(none)"]);
  });
});

describe("a reader that stops early (decision 202)", () => {
  it.each([
    ["the report", ["metrics", fixture("monolith.ndjson")]],
    ["--json", ["metrics", fixture("monolith.ndjson"), "--json"]],
    ["--help", ["metrics", "--help"]],
  ])("%s into a closed pipe ends with exit 0 and no stack trace", async (_label, args) => {
    const run = await magntPiped(args, { closedStdout: true });
    expect(run.stderr).not.toMatch(/EPIPE|at .*\(|Unhandled/);
    expect(run.code, run.stderr).toBe(0);
  });
});
