/**
 * `magnt metrics` end to end in-process (08 §5): the four input shapes, the
 * split pair, every counter of the scenario, the 24-hour boundary cases, the
 * window, exclusions, malformed and oversized records, gzip, stdin, empty
 * input, exit codes and the canary test (no value from an event's free text
 * reaches stdout or stderr in either mode).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { CliContext } from "../../cli/lib/context";
import { runCli } from "../../cli/program";
import {
  apiRecord,
  expectedMonolithSummary,
  fixtureFiles,
  FOREIGN_NDJSON_LINES,
  monolithEvents,
  type Event,
} from "../fixtures/metrics/scenario";
import { assertValidTelemetryEvent } from "../helpers/event-schema";
import { REPO_ROOT, runMagnt } from "./harness";

const FIXTURES = join(REPO_ROOT, "test/fixtures/metrics");
const fixture = (name: string) => join(FIXTURES, name);
const tempDir = () => mkdtempSync(join(tmpdir(), "magnt-metrics-test-"));

async function metricsJson(args: string[]): Promise<ReturnType<typeof expectedMonolithSummary>> {
  const result = await runMagnt(["metrics", ...args, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  expect(result.lines).toHaveLength(1);
  return JSON.parse(result.lines[0]!) as ReturnType<typeof expectedMonolithSummary>;
}

function writeNdjson(dir: string, name: string, records: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, records.map((record) => (typeof record === "string" ? record : JSON.stringify(record))).join("\n") + "\n");
  return path;
}

/** Runs with `-` reading the given bytes as stdin. */
async function runWithStdin(argv: string[], input: Buffer | string) {
  let stdout = "";
  let stderr = "";
  const ctx: CliContext = {
    stdout: { write: (chunk: string) => (stdout += chunk), isTTY: false },
    stderr: { write: (chunk: string) => (stderr += chunk), isTTY: false },
    // `magnt metrics -` reads the context's stdin when it is a stream.
    stdin: Object.assign(Readable.from([typeof input === "string" ? Buffer.from(input) : input]), { isTTY: false }),
    env: {},
    cwd: REPO_ROOT,
    wranglerTimeoutMs: { local: 1000, remote: 1000 },
    signals: { on: () => undefined, off: () => undefined },
  };
  const code = await runCli(argv, ctx);
  return { code, stdout, stderr };
}

describe("fixtures", () => {
  it("are the scenario written in each shape, and every event is schema-valid", () => {
    for (const [name, text] of Object.entries(fixtureFiles())) expect(readFileSync(fixture(name), "utf8"), name).toBe(text);
    for (const event of monolithEvents()) assertValidTelemetryEvent(event);
  });
});

describe("input shapes (08 §5.1)", () => {
  it.each(["monolith.ndjson", "monolith-source.ndjson", "monolith-array.json", "monolith-envelope.json", "monolith.ndjson.gz"])(
    "%s gives the hand-derived summary",
    async (name) => {
      expect(await metricsJson([fixture(name)])).toEqual(expectedMonolithSummary());
    },
  );

  it("dedupes across files and shapes (first occurrence wins)", async () => {
    const once = expectedMonolithSummary();
    const summary = await metricsJson([fixture("monolith.ndjson"), fixture("monolith-array.json"), fixture("monolith-envelope.json")]);
    expect(summary.inputs).toEqual({
      ...once.inputs,
      files: 3,
      records: 3 * 55,
      // Every counted-type record of the second and third file is a duplicate (51 per file).
      duplicates_removed: 1 + 2 * 51,
    });
    expect({ ...summary, inputs: undefined }).toEqual({ ...once, inputs: undefined });
  });

  it("counts a split deployment's gateway + core exports exactly once", async () => {
    const summary = await metricsJson([fixture("gateway.ndjson"), fixture("core.json")]);
    const expected = expectedMonolithSummary();
    // The gateway adds one uncounted `http` forwarding event per /mcp call (44 mcp_request records).
    expect(summary).toEqual({ ...expected, inputs: { ...expected.inputs, files: 2, records: 55 + 44 } });
  });

  it("counts malformed, foreign and blank lines without failing", async () => {
    const dir = tempDir();
    const text = readFileSync(fixture("monolith.ndjson"), "utf8") + FOREIGN_NDJSON_LINES.join("\n") + "\n";
    writeFileSync(join(dir, "mixed.ndjson"), text);
    expect(await metricsJson([join(dir, "mixed.ndjson")])).toEqual(expectedMonolithSummary({ records: 4, unparseable: 1, withoutId: 2 }));
  });

  it("skips a record over 1 MiB as unparseable, in NDJSON and in an array", async () => {
    const dir = tempDir();
    const events = monolithEvents();
    const huge = { ...events[1], event_id: "ffffffff-0000-4000-8000-000000000000", userAgent: "x".repeat(1024 * 1024) };
    const ndjson = writeNdjson(dir, "huge.ndjson", [...events, huge]);
    expect(await metricsJson([ndjson])).toEqual(expectedMonolithSummary({ records: 1, unparseable: 1, withoutId: 0 }));
    const array = join(dir, "huge.json");
    writeFileSync(array, JSON.stringify([...events, huge].map(apiRecord)));
    expect(await metricsJson([array])).toEqual(expectedMonolithSummary({ records: 1, unparseable: 1, withoutId: 0 }));
  });

  it("reads a truncated array's complete records and counts the cut one", async () => {
    const dir = tempDir();
    const text = JSON.stringify(monolithEvents());
    const path = join(dir, "cut.json");
    writeFileSync(path, text.slice(0, text.length - 40));
    const summary = await metricsJson([path]);
    expect(summary.inputs.records).toBe(55);
    expect(summary.inputs.unparseable_records).toBe(1);
  });

  it("reads stdin (-), plain and gzip", async () => {
    const bytes = readFileSync(fixture("monolith.ndjson"));
    for (const input of [bytes, gzipSync(bytes)]) {
      const result = await runWithStdin(["metrics", "-", "--json"], input);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(expectedMonolithSummary());
    }
  });

  it("gives an all-zero summary for empty input", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "empty.ndjson"), "");
    writeFileSync(join(dir, "blank.ndjson"), "\n\n  \n");
    writeFileSync(join(dir, "empty-array.json"), "[]");
    const summary = await metricsJson([join(dir, "empty.ndjson"), join(dir, "blank.ndjson"), join(dir, "empty-array.json")]);
    expect(summary.inputs).toEqual({
      files: 3,
      records: 0,
      unparseable_records: 0,
      records_without_event_id: 0,
      duplicates_removed: 0,
      outside_time_window: 0,
      excluded_controlled_test: 0,
      excluded_self_reported_test: 0,
      counted_events: 0,
    });
    expect(summary.window).toEqual({ since: null, until: null, first_event: null, last_event: null });
    expect(summary.mcp.by_method).toEqual({});
  });
});

describe("window (--since inclusive, --until exclusive)", () => {
  const at = (iso: string, n: number): Event => ({ ...monolithEvents()[1], event_id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, time: iso });

  it("keeps an event exactly at --since and drops one exactly at --until", async () => {
    const dir = tempDir();
    const path = writeNdjson(dir, "edges.ndjson", [
      at("2026-05-01T00:00:00.000Z", 1), // = since → in
      at("2026-04-30T23:59:59.999Z", 2), // before since → out
      at("2026-05-02T00:00:00.000Z", 3), // = until → out
      at("2026-05-01T23:59:59.999Z", 4), // in
      { ...at("x", 5), time: "yesterday" }, // unparseable time with a window → out
      { ...at("x", 6), time: undefined }, // no time → out
    ]);
    const summary = await metricsJson([path, "--since", "2026-05-01", "--until", "2026-05-02T00:00:00Z"]);
    expect(summary.inputs.counted_events).toBe(2);
    expect(summary.inputs.outside_time_window).toBe(4);
    expect(summary.window).toEqual({
      since: "2026-05-01T00:00:00.000Z",
      until: "2026-05-02T00:00:00.000Z",
      first_event: "2026-05-01T00:00:00.000Z",
      last_event: "2026-05-01T23:59:59.999Z",
    });
    // Without a window, events without a parseable time are counted (they only miss first/last).
    const unbounded = await metricsJson([path]);
    expect(unbounded.inputs.counted_events).toBe(6);
    expect(unbounded.window.first_event).toBe("2026-04-30T23:59:59.999Z");
  });

  it("applies the window before the receipt correlation (a search outside it is not seen)", async () => {
    const summary = await metricsJson([fixture("monolith.ndjson"), "--since", "2026-05-01T10:00:00.001Z"]);
    // R1 and R2 searches (T0) fall outside, so S1's and S2's contributions lose their receipts.
    expect(summary.mcp.receipt_correlation).toEqual({ contributions_with_receipt: 8, correlated_signal_ids: 1, receipt_not_seen: 6, outside_24h: 1 });
  });

  it("reads an offset and treats a date-time without one as UTC", async () => {
    const a = await metricsJson([fixture("monolith.ndjson"), "--since", "2026-05-01T12:00:00+02:00"]);
    const b = await metricsJson([fixture("monolith.ndjson"), "--since", "2026-05-01T10:00:00"]);
    expect(a.window.since).toBe("2026-05-01T10:00:00.000Z");
    expect(b).toEqual(a);
  });
});

describe("exclusions", () => {
  it("counts each exclusion apart and never in the counters", async () => {
    const dir = tempDir();
    const base = monolithEvents()[1]!;
    const path = writeNdjson(dir, "tests.ndjson", [
      { ...base, event_id: "00000000-0000-4000-8000-000000000001", controlled_test: true },
      { ...base, event_id: "00000000-0000-4000-8000-000000000002", self_reported_test: true },
      { ...base, event_id: "00000000-0000-4000-8000-000000000003", controlled_test: true, self_reported_test: true },
      { ...base, event_id: "00000000-0000-4000-8000-000000000004", controlled_test: "true" }, // only the boolean counts
    ]);
    const summary = await metricsJson([path]);
    expect(summary.inputs).toMatchObject({ excluded_controlled_test: 2, excluded_self_reported_test: 1, counted_events: 1 });
    expect(summary.mcp.tools_list).toBe(1);
  });
});

describe("exit codes and --json failures", () => {
  it.each([["--since", "yesterday"], ["--until", "2026-02-30"], ["--since", "2026-05-01T25:00:00Z"]])(
    "%s %s → exit 2 with a JSON error last",
    async (option, value) => {
      const result = await runMagnt(["metrics", fixture("monolith.ndjson"), option, value, "--json"]);
      expect(result.code).toBe(2);
      expect(result.lastJson()).toMatchObject({ error: { code: "usage" } });
      expect(result.lines).toHaveLength(1);
    },
  );

  it("--since not before --until → exit 2", async () => {
    const result = await runMagnt(["metrics", fixture("monolith.ndjson"), "--since", "2026-05-02", "--until", "2026-05-01"]);
    expect(result.code).toBe(2);
  });

  it("an unreadable file → exit 3, before any output, even next to a good one", async () => {
    for (const bad of [join(tempDir(), "missing.ndjson"), tempDir()]) {
      const result = await runMagnt(["metrics", fixture("monolith.ndjson"), bad, "--json"]);
      expect(result.code).toBe(3);
      expect(result.lines).toHaveLength(1);
      expect(result.lastJson()).toMatchObject({ error: { code: "environment" } });
    }
  });

  it("a corrupt gzip file → exit 3", async () => {
    const dir = tempDir();
    const gz = gzipSync(readFileSync(fixture("monolith.ndjson")));
    writeFileSync(join(dir, "bad.ndjson.gz"), gz.subarray(0, gz.length - 200));
    const result = await runMagnt(["metrics", join(dir, "bad.ndjson.gz"), "--json"]);
    expect(result.code).toBe(3);
    expect(result.lastJson()).toMatchObject({ error: { code: "environment" } });
  });

  it("no file argument → exit 2", async () => {
    expect((await runMagnt(["metrics"])).code).toBe(2);
  });
});

describe("human report", () => {
  it("leads with the funnel (bars and step percentages), then the per-day series, the counts block and the details", async () => {
    const result = await runMagnt(["metrics", fixture("monolith.ndjson")]);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out.split("\n")[0]).toMatch(/^Funnel\b/);
    expect(out.indexOf("Funnel")).toBeLessThan(out.indexOf("Per day (UTC)"));
    expect(out.indexOf("Per day (UTC)")).toBeLessThan(out.indexOf("Counts"));
    expect(out.indexOf("Counts")).toBeLessThan(out.indexOf("Details"));
    // One compact block: label and count on one line, no table borders or row separators.
    expect(out).not.toMatch(/[│├┼─]/);
    expect(out).toMatch(/records read\s+55\b/);
    expect(out).toMatch(/not counted \(other types\)\s+4\b/);
    expect(out).toMatch(/counted events\s+47\b/);
    expect(out).toContain("Counts — all events, 2026-05-01T09:00:00.000Z … 2026-05-02T10:00:00.001Z");
    // Funnel: tools/list 3 → valid searches 8 → no match 5 → signals 8 → correlated 2; contacts 2. Largest (8) = full bar.
    expect(out).toMatch(/tools\/list requests\s+█{12}\s+3\s*\n/);
    expect(out).toMatch(/valid searches\s+█{32}\s+8\s+267%/);
    expect(out).toMatch(/searches with no match\s+█{20}\s+5\s+63%/);
    expect(out).toMatch(/contributions \(signals accepted\)\s+█{32}\s+8\s+160%/);
    expect(out).toMatch(/correlated within 24 h\s+█{8}\s+2\s+25%/);
    expect(out).toMatch(/contacts saved \(new\)\s+█{8}\s+2/);
    expect(out).toMatch(/correlation: contributions with receipt 8 · correlated signal ids 2/);
    expect(out).toContain("A2A versions: 1.0 1 · 0.3 1 · unsupported 1 · (none) 1");
    expect(out).not.toMatch(/\u001b\[/); // not a TTY: no colour
  });

  it("--full adds every counter as a table and every day as a row", async () => {
    const result = await runMagnt(["metrics", fixture("monolith.ndjson"), "--full"]);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/records read\s*│\s*55/);
    expect(out).toMatch(/not counted \(other types\)\s*│\s*4/);
    expect(out).toMatch(/first counted event\s*│\s*2026-05-01T09:00:00.000Z/);
    for (const title of ["event type", "MCP method", "tool called", "propose_contact", "search_shared_experience", "contribute_task_signal", "search receipt correlation", "A2A method", "A2A outcome", "A2A protocol version"]) {
      expect(out).toMatch(new RegExp(`│ ${title}\\s+│ count │`));
    }
    expect(out).toMatch(/│ 2026-05-01 │ 3\s+│ 8\s+│ 5\s+│ 6\s+│ 2\s+│/);
    expect(out).toMatch(/│ 2026-05-02 │ 0\s+│ 0\s+│ 0\s+│ 2\s+│ 0\s+│/);
  });

  it("colours only on a TTY without NO_COLOR", async () => {
    expect((await runMagnt(["metrics", fixture("monolith.ndjson")], { tty: true })).stdout).toMatch(/\u001b\[/);
    expect((await runMagnt(["metrics", fixture("monolith.ndjson")], { tty: true, env: { NO_COLOR: "1" } })).stdout).not.toMatch(/\u001b\[/);
  });

  it("prints no progress line for small inputs, and none when stderr is not a TTY", async () => {
    expect((await runMagnt(["metrics", fixture("monolith.ndjson")], { tty: true })).stderr).toBe("");
    expect((await runMagnt(["metrics", fixture("monolith.ndjson")])).stderr).toBe("");
  });
});

describe("only counts reach the output (canaries)", () => {
  const CANARY = "CANARY7f3a";
  /** Every string field of every event type carries a canary; ids and receipts too. */
  function canaryEvents(): Event[] {
    return monolithEvents().map((event, index) => {
      const copy: Event = {};
      for (const [key, value] of Object.entries(event)) {
        if (key === "event_type" || key === "time") copy[key] = value;
        else if (typeof value === "string") copy[key] = `${CANARY}-${key}-${index}`;
        else copy[key] = value;
      }
      // Free-text fields the door never logs, should a bad export carry them.
      copy.goal = `${CANARY}-goal`;
      copy.message = `${CANARY}-message`;
      return copy;
    });
  }

  it("never prints a canary in either mode, and still counts by event type", async () => {
    const dir = tempDir();
    const events = canaryEvents();
    const ndjson = writeNdjson(dir, "canary.ndjson", events);
    const envelope = join(dir, "canary.json");
    writeFileSync(envelope, JSON.stringify({ result: { events: { events: events.map(apiRecord) } } }));
    for (const args of [[ndjson], [ndjson, "--json"], [envelope, "--json"], [envelope]]) {
      const result = await runMagnt(["metrics", ...args], { tty: true });
      expect(result.code).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(CANARY);
    }
    const summary = await metricsJson([ndjson]);
    // The scenario's duplicate line got its own canary id here, so it counts.
    expect(summary.by_event_type).toEqual({ mcp_request: 41, mcp_card: 2, a2a_request: 4, a2a_card: 1 });
    // Canary-valued methods and names fall under `unknown`, never under their own text.
    expect(Object.keys(summary.mcp.by_method)).toEqual(["unknown", "(none)"]);
    expect(Object.keys(summary.a2a.by_method)).toEqual(["unknown", "(none)"]);
  });
});
