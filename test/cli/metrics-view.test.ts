/**
 * `magnt metrics` at a glance (issue 22, 08 §5.4): the human view of the
 * project's fixtures fits an 80×40 screen by default and never runs past the
 * terminal width (80 and 120, `--full` too); the per-day series (UTC) adds up
 * to the summary's counters, keeps quiet days and is the same on the parallel
 * path; and an input in which no record is JSON (random bytes, a `.gz` that is
 * not gzip, a truncated gzip) fails with a warning naming the file and what is
 * wrong, instead of an all-zero report.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { displayWidth } from "../../cli/lib/terminal-text";
import { DAILY_STEPS } from "../../cli/commands/metrics/aggregate";
import { count } from "../../cli/commands/metrics/index";
import { sparkline } from "../../cli/commands/metrics/report";
import { openFileInput, stdinInput } from "../../cli/commands/metrics/sources";
import { monolithEvents, type Event } from "../fixtures/metrics/scenario";
import { REPO_ROOT, runMagnt } from "./harness";

const FIXTURES = join(REPO_ROOT, "test/fixtures/metrics");
const fixture = (name: string) => join(FIXTURES, name);
const tempDir = () => mkdtempSync(join(tmpdir(), "magnt-metrics-view-"));
const NO_WINDOW = { since: null, until: null };

/** Every fixture set an operator would pass: each export alone, and the split pair together. */
const FIXTURE_SETS = [
  ["monolith.ndjson"],
  ["monolith-source.ndjson"],
  ["monolith-array.json"],
  ["monolith-envelope.json"],
  ["monolith.ndjson.gz"],
  ["gateway.ndjson", "core.json"],
];

function widest(text: string): number {
  return Math.max(0, ...text.split("\n").map((line) => displayWidth(line)));
}

function linesOf(text: string): string[] {
  return text.replace(/\n$/, "").split("\n");
}

describe("the human view fits the terminal", () => {
  it.each(FIXTURE_SETS.map((set) => [set.join(" + "), set] as const))("%s: ≤ 80 columns and ≤ 40 lines by default, within 120 too", async (_, set) => {
    const files = set.map(fixture);
    for (const columns of ["80", "120"]) {
      const result = await runMagnt(["metrics", ...files], { env: { COLUMNS: columns } });
      expect(result.code, result.stderr).toBe(0);
      expect(widest(result.stdout), result.stdout).toBeLessThanOrEqual(Number(columns));
      expect(linesOf(result.stdout).length, result.stdout).toBeLessThanOrEqual(40);
    }
    // On a TTY (colour on) the visible width is the same.
    const tty = await runMagnt(["metrics", ...files], { tty: true, env: { COLUMNS: "80" } });
    expect(widest(tty.stdout.replace(/\u001b\[[0-9;]*m/g, ""))).toBeLessThanOrEqual(80);
  });

  it("--help stays within 80 columns", async () => {
    const result = await runMagnt(["metrics", "--help"], { env: { COLUMNS: "80" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("--html <file>");
    expect(widest(result.stdout), result.stdout).toBeLessThanOrEqual(80);
  });

  it("--full and a window stay within 80 columns", async () => {
    for (const args of [["--full"], ["--since", "2026-05-01T09:30:00Z", "--until", "2026-05-02T00:00:00+03:00"], ["--full", "--since", "2026-05-01"]]) {
      const result = await runMagnt(["metrics", fixture("monolith.ndjson"), ...args], { env: { COLUMNS: "80" } });
      expect(result.code, result.stderr).toBe(0);
      expect(widest(result.stdout), result.stdout).toBeLessThanOrEqual(80);
    }
  });

  it("a long series shows the latest days that fit, and says so", async () => {
    const dir = tempDir();
    const base = monolithEvents().find((event) => event.mcp_method === "tools/list")!;
    const events: Event[] = [];
    for (let day = 0; day < 120; day += 1) {
      events.push({ ...base, event_id: `00000000-0000-4000-8000-${String(day).padStart(12, "0")}`, time: new Date(Date.UTC(2026, 0, 1) + day * 86_400_000).toISOString() });
    }
    const path = join(dir, "long.ndjson");
    writeFileSync(path, events.map((event) => JSON.stringify(event)).join("\n"));
    const result = await runMagnt(["metrics", path], { env: { COLUMNS: "80" } });
    expect(result.code, result.stderr).toBe(0);
    expect(widest(result.stdout)).toBeLessThanOrEqual(80);
    const heading = /Per day \(UTC\) (\S+) … 2026-04-30, last (\d+) of 120 days/.exec(result.stdout);
    expect(heading, result.stdout).not.toBeNull();
    const shown = Number(heading![2]);
    expect(shown).toBeGreaterThan(40);
    expect(result.stdout).toMatch(new RegExp(`tools/list\\s+█{${shown}}\\s+120\\n`));
    // --full lists every day.
    const full = await runMagnt(["metrics", path, "--full"], { env: { COLUMNS: "80" } });
    expect(full.stdout.match(/│ 2026-\d\d-\d\d │/g)).toHaveLength(120);
  });
});

describe("the per-day series (UTC)", () => {
  it("adds up to the summary's counters on the fixtures", async () => {
    for (const set of FIXTURE_SETS) {
      const inputs = await Promise.all(set.map((name) => openFileInput(fixture(name), name)));
      const { summary, daily } = await count(inputs, NO_WINDOW);
      await Promise.all(inputs.map((input) => input.close()));
      const total = (step: (typeof DAILY_STEPS)[number]) => daily.days.reduce((sum, day) => sum + day[step], 0) + daily.undated[step];
      expect(total("tools_list")).toBe(summary.mcp.tools_list);
      expect(total("valid_searches")).toBe(summary.mcp.search.valid_calls);
      expect(total("no_match")).toBe(summary.mcp.search.no_relevant_experience);
      expect(total("contributions")).toBe(summary.mcp.contribute.accepted_signal_ids);
      expect(total("contacts_saved")).toBe(summary.mcp.contacts.saved_new);
      expect(daily.days.map((day) => day.date)).toEqual(["2026-05-01", "2026-05-02"]);
    }
  });

  it("counts by UTC day, keeps a quiet day between as zeros, and puts undated events in no day", async () => {
    const base = monolithEvents().find((event) => event.mcp_method === "tools/list")!;
    const at = (n: number, time: unknown): Event => ({ ...base, event_id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, time });
    const lines = [
      at(1, "2026-05-01T23:59:59.999Z"),
      at(2, "2026-05-02T01:30:00+03:00"), // 2026-05-01T22:30Z: still the 1st in UTC
      at(3, "2026-05-03T00:00:00.000Z"),
      at(4, "not a time"),
    ];
    const { summary, daily } = await count([stdinInput(Readable.from([Buffer.from(lines.map((line) => JSON.stringify(line)).join("\n"))]))], NO_WINDOW);
    expect(summary.mcp.tools_list).toBe(4);
    expect(daily.days.map((day) => [day.date, day.tools_list])).toEqual([
      ["2026-05-01", 2],
      ["2026-05-02", 0],
      ["2026-05-03", 1],
    ]);
    expect(daily.undated.tools_list).toBe(1);
  });

  it("keeps at most ten years: a stray old time is folded into `earlier`, not thousands of quiet days", async () => {
    const base = monolithEvents().find((event) => event.mcp_method === "tools/list")!;
    const at = (n: number, time: string): Event => ({ ...base, event_id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, time });
    const lines = [at(1, "1990-01-01T00:00:00Z"), at(2, "2026-05-01T00:00:00Z"), at(3, "2026-05-02T00:00:00Z"), at(4, "0001-01-01T00:00:00Z")];
    const bytes = Buffer.from(lines.map((line) => JSON.stringify(line)).join("\n"));
    const { daily } = await count([stdinInput(Readable.from([bytes]))], NO_WINDOW);
    expect(daily.days.map((day) => day.date)).toEqual(["2026-05-01", "2026-05-02"]);
    expect(daily.earlier.tools_list).toBe(2);
    const dir = tempDir();
    const path = join(dir, "stray.ndjson");
    writeFileSync(path, bytes);
    const result = await runMagnt(["metrics", path, "--full"]);
    expect(result.stdout).toContain("+ 2 step events over 3660 days before the last day");
    expect(result.stdout).toMatch(/│ earlier\s+│ 2\s+│/);
  });

  it("is the same when the file is counted in blocks (the parallel path)", async () => {
    const dir = tempDir();
    const path = join(dir, "big.ndjson");
    writeFileSync(path, readFileSync(fixture("monolith.ndjson")));
    const serial = await count([stdinInput(Readable.from([readFileSync(path)]))], NO_WINDOW);
    const input = await openFileInput(path, path);
    try {
      const blocks = { blocks: 0, helperBlocks: 0 };
      const parallel = await count([input], NO_WINDOW, () => undefined, { parallel: { helpers: () => [], minBytes: 0, blockBytes: 256, stats: blocks } });
      expect(blocks.blocks).toBeGreaterThan(1);
      expect(parallel.daily).toEqual(serial.daily);
      expect(parallel.summary).toEqual(serial.summary);
      expect(parallel.notExports).toEqual([]);
    } finally {
      await input.close();
    }
  });

  it("draws one mark per day, scaled to the busiest, a dot for a quiet day", () => {
    expect(sparkline([0, 1, 4, 8])).toBe("·▁▄█");
    expect(sparkline([0, 0])).toBe("··");
  });
});

describe("inputs in which no record could be read as an export (08 §5)", () => {
  const dir = tempDir();
  const good = fixture("monolith.ndjson");
  const noise = randomBytes(64 * 1024);
  // One line that is not JSON whatever the draw: no newline, and a first byte that starts no JSON value (nor gzip).
  const randomPath = join(dir, "noise.bin");
  writeFileSync(randomPath, noise.map((byte, index) => (index === 0 ? 0xff : byte === 0x0a ? 0x41 : byte)));
  const namedGz = join(dir, "noise.ndjson.gz");
  writeFileSync(namedGz, readFileSync(randomPath));
  const gz = gzipSync(readFileSync(good));
  const truncated = join(dir, "cut.ndjson.gz");
  writeFileSync(truncated, gz.subarray(0, Math.floor(gz.length / 2)));
  const gzNoise = join(dir, "zipped-noise.gz");
  writeFileSync(gzNoise, gzipSync(readFileSync(randomPath)));

  it.each([
    [randomPath, /noise\.bin is not a Workers Logs export: its one record is not JSON/],
    [namedGz, /noise\.ndjson\.gz is not a Workers Logs export: named \.gz but not gzip \(no gzip header\), and its one record is not JSON/],
    [gzNoise, /zipped-noise\.gz is not a Workers Logs export: decompressed as gzip, but its one record is not JSON/],
  ])("%s → a warning naming the file, exit 3, no report", async (path, warning) => {
    for (const args of [[path], [good, path]]) {
      const result = await runMagnt(["metrics", ...args]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(warning);
      expect(result.stderr).toContain(`magnt: nothing could be read as a Workers Logs export in ${path}; no report written`);
      expect(result.stdout).toBe("");
      const json = await runMagnt(["metrics", ...args, "--json"]);
      expect(json.code).toBe(3);
      expect(json.lines).toHaveLength(1);
      expect(json.lastJson()).toMatchObject({ error: { code: "environment" } });
    }
  });

  it("a truncated gzip says so in words, naming the file", async () => {
    const result = await runMagnt(["metrics", truncated]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(`magnt: cannot read ${truncated}: the gzip data ends early — the file is truncated (an interrupted download or copy?) (Z_BUF_ERROR)\n`);
  });

  it("counts records that are JSON but no event, and an empty file, as before (exit 0)", async () => {
    const foreign = join(dir, "foreign.ndjson");
    writeFileSync(foreign, '{"event_type":"http","status":200}\n[1,2]\n"text"\n');
    const empty = join(dir, "empty.ndjson");
    writeFileSync(empty, "");
    const result = await runMagnt(["metrics", foreign, empty, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.lines[0]!).inputs).toMatchObject({ files: 2, records: 3, counted_events: 0 });
  });
});
