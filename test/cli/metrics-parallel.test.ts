/**
 * The parallel path of `magnt metrics` (cli/commands/metrics/parallel.ts,
 * blocks.ts; 08 §5.2, issue 21) must give exactly the serial path's summary:
 * - on one file cut into two blocks at every record boundary, on either
 *   side of it and inside records, where the order-sensitive results
 *   (dedupe of differing duplicates, the earliest receipt time, correlation
 *   across the cut, first and last event) depend on applying the blocks in
 *   file order;
 * - on generated files cut into blocks of random sizes, counted by helper
 *   threads (in-thread stand-ins) that answer after random delays, so blocks
 *   finish out of order, with and without a window, and when the helpers are
 *   retired part-way (the id-table limit);
 * - with CRLF lines, blank lines, a byte order mark, a line longer than a
 *   block, an oversized (> 1 MiB) line across blocks, and no final newline.
 * Also: a helper's failed read ends the run as an unreadable file (exit 3),
 * gzip over 4 MiB reads as its plain text, and a block with more counted
 * events than one batch of rows counts like the full parse.
 *
 * The serial path is itself proven equal to the independent reference
 * summariser (metrics-reference.test.ts). The real worker threads run in the
 * e2e suite (test/e2e/metrics.test.ts), against the built CLI.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MetricsAggregator, type MetricsSummary, type TimeWindow } from "../../cli/commands/metrics/aggregate";
import { BlockScanner, type BlockResult, type BlockTask } from "../../cli/commands/metrics/blocks";
import { summarise } from "../../cli/commands/metrics/index";
import { BlockReadError, chooseThreads, countBlocks, planBlocks, type HelperThread } from "../../cli/commands/metrics/parallel";
import { openFileInput, stdinInput } from "../../cli/commands/metrics/sources";
import { EnvironmentError } from "../../cli/lib/errors";

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 200) || 200;
const FUZZ_SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const parameters = (runs: number) => ({ numRuns: runs, ...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }) });

const dir = mkdtempSync(join(tmpdir(), "magnt-metrics-parallel-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;
function writeInput(bytes: Buffer): string {
  fileCounter += 1;
  const path = join(dir, `input-${fileCounter}.ndjson`);
  writeFileSync(path, bytes);
  return path;
}

const NO_WINDOW: TimeWindow = { since: null, until: null };
/** Just below what three empty id tables hold (fingerprint.ts: 256 shards of 64 slots), so passed after the first block. */
const RETIRE_AT_ONCE = 3 * 256 * 64 * 8 + 256 * 64 * 8 - 1;
const T0 = Date.UTC(2026, 4, 1, 10);
const HOUR = 3_600_000;
const iso = (offset: number) => new Date(T0 + offset).toISOString();
const wrap = (event: Record<string, unknown>) => JSON.stringify({ source: event, $workers: { scriptName: "magnt-observer" }, $metadata: { level: "log" } });
const search = (id: string, time: number, receipt: string, extra: Record<string, unknown> = {}) =>
  wrap({ event_id: id, time: iso(time), event_type: "mcp_request", mcp_method: "tools/call", tool_name: "search_shared_experience", validation_status: "valid", tool_result: "no_relevant_experience", search_receipt: receipt, observed_task_saved: true, ...extra });
const contribution = (id: string, time: number, receipt: string, signal: string) =>
  wrap({ event_id: id, time: iso(time), event_type: "mcp_request", mcp_method: "tools/call", tool_name: "contribute_task_signal", validation_status: "valid", tool_result: "accepted", search_receipt: receipt, signal_id: signal });

/**
 * A small export whose summary depends on order: a contribution before its
 * search; the same receipt searched twice (the earliest time counts) on both
 * sides of the file; duplicates whose first occurrence is a test (excluded)
 * and whose second is not; the first and last events away from the ends; and
 * foreign, blank, CRLF and malformed lines.
 */
const ORDERED_LINES = [
  wrap({ event_id: "e-card-1", time: iso(5 * HOUR), event_type: "mcp_card" }),
  contribution("c-1", 2 * HOUR, "sr_a", "ts_1"),
  '{"message":"plain log line without a counted type"}',
  search("s-1", 3 * HOUR, "sr_b"),
  wrap({ event_id: "dup-1", time: iso(HOUR), event_type: "a2a_card", controlled_test: true }),
  "",
  search("s-2", HOUR, "sr_a"),
  `${wrap({ event_id: "e-crlf", time: iso(4 * HOUR), event_type: "a2a_request", a2a_method: "SendMessage", outcome: "success", a2a_protocol_version: "1.0" })}\r`,
  "{not json but mcp_ inside",
  contribution("c-2", 30 * HOUR, "sr_b", "ts_2"),
  wrap({ event_id: "dup-1", time: iso(-HOUR), event_type: "a2a_card" }),
  "   ",
  wrap({ event_id: "first", time: iso(-2 * HOUR), event_type: "mcp_card" }),
  search("s-3", 26 * HOUR, "sr_a", { rate_limited: true }),
  contribution("c-3", 27 * HOUR, "sr_a", "ts_3"),
  '{"source":{"no_id":true,"event_type":"mcp_request"}}',
  wrap({ event_id: "last", time: iso(40 * HOUR), event_type: "a2a_card" }),
  contribution("c-4", 41 * HOUR, "sr_never", "ts_4"),
  wrap({ event_id: "dup-2", time: iso(6 * HOUR), event_type: "mcp_request", mcp_method: "tools/list" }),
  wrap({ event_id: "dup-2", time: iso(7 * HOUR), event_type: "mcp_request", mcp_method: "ping", self_reported_test: true }),
];

async function serialSummary(bytes: Buffer, window: TimeWindow = NO_WINDOW): Promise<MetricsSummary> {
  return summarise([stdinInput(Readable.from([bytes]))], window);
}

/** Counts `tasks` of the file at `path` on the main thread and `helpers`, as the CLI does. */
async function blockSummary(path: string, tasks: (fd: number, size: number) => BlockTask[], helpers: HelperThread[] = [], window: TimeWindow = NO_WINDOW, retireTableBytes?: number): Promise<MetricsSummary> {
  const input = await openFileInput(path, path);
  try {
    const aggregator = new MetricsAggregator(window);
    aggregator.files = 1;
    await countBlocks(tasks(input.file!.fd, input.file!.size), new BlockScanner(), () => helpers, aggregator, () => undefined, retireTableBytes === undefined ? {} : { retireTableBytes });
    return aggregator.finish();
  } finally {
    await input.close();
  }
}

/** An in-thread helper: counts with its own scanner, answers in order after a delay. */
function slowHelper(delays: readonly number[]): HelperThread & { counted: number; closed: boolean } {
  const scanner = new BlockScanner();
  let previous: Promise<unknown> = Promise.resolve();
  let call = 0;
  const helper = {
    counted: 0,
    closed: false,
    ready: Promise.resolve(),
    count(task: BlockTask, spare?: Float64Array): Promise<BlockResult> {
      if (spare !== undefined) scanner.recycle(spare);
      const delay = delays[call++ % Math.max(1, delays.length)] ?? 0;
      const result = previous.then(
        () =>
          new Promise<BlockResult>((resolve) =>
            setTimeout(() => {
              helper.counted += 1;
              resolve(scanner.scan(task));
            }, delay),
          ),
      );
      previous = result;
      return result;
    },
    close: async () => {
      helper.closed = true;
    },
  };
  return helper;
}

describe("the parallel path equals the serial path (08 §5.2)", () => {
  it("on a file cut into two blocks at every record boundary and next to it", async () => {
    const bytes = Buffer.from(`${ORDERED_LINES.join("\n")}\n`);
    const path = writeInput(bytes);
    const expected = await serialSummary(bytes);
    // The export exercises what order decides.
    expect(expected.inputs.duplicates_removed).toBe(2);
    expect(expected.inputs.excluded_controlled_test).toBe(1);
    expect(expected.mcp.receipt_correlation).toEqual({ contributions_with_receipt: 4, correlated_signal_ids: 1, receipt_not_seen: 1, outside_24h: 2 });
    expect(expected.window.first_event).toBe(iso(-2 * HOUR));
    // Every record boundary, the bytes on either side of it, and every 13th byte.
    const cuts = new Set<number>();
    for (let index = 0; index < bytes.length; index += 1) {
      if (bytes[index] === 0x0a) for (const cut of [index, index + 1, index + 2]) cuts.add(cut);
      if (index % 13 === 0) cuts.add(index);
    }
    cuts.delete(0);
    for (const cut of [...cuts].filter((position) => position < bytes.length).sort((a, b) => a - b)) {
      const summary = await blockSummary(path, (fd, size) => [
        { index: 0, fd, firstLineStart: 0, start: 0, end: cut },
        { index: 1, fd, firstLineStart: 0, start: cut, end: size },
      ]);
      expect(summary, `cut at byte ${cut}`).toEqual(expected);
    }
  }, 300_000);

  it("on a file cut into blocks of every size from 1 to 24 bytes and larger, counted by two slow helpers and the main thread", async () => {
    const text = `\uFEFF${ORDERED_LINES.join("\r\n")}`; // a byte order mark, CRLF lines, no final newline
    const bytes = Buffer.from(text);
    const path = writeInput(bytes);
    const expected = await serialSummary(bytes);
    for (const blockBytes of [...Array.from({ length: 24 }, (_, index) => index + 1), 31, 47, 64, 97, 256]) {
      const input = await openFileInput(path, path);
      const tasks = await planBlocks(input.file!, { minBytes: 0, blockBytes });
      await input.close();
      expect(tasks, "a file whose first line is one whole record is cut").not.toBeNull();
      expect(tasks![0]!.start).toBe(3);
      const helpers = [slowHelper([3, 0, 1]), slowHelper([0, 2])];
      const summary = await blockSummary(path, (fd) => tasks!.map((task) => ({ ...task, fd })), helpers);
      expect(summary, `blocks of ${blockBytes} bytes`).toEqual(expected);
      expect(helpers.every((helper) => helper.closed)).toBe(true);
    }
  }, 120_000);

  it("with a line longer than a block, an oversized line across blocks, and blank lines at block edges", async () => {
    const long = wrap({ event_id: "long", time: iso(0), event_type: "mcp_card", padding: "x".repeat(300_000) });
    const oversized = wrap({ event_id: "huge", time: iso(0), event_type: "mcp_card", padding: "y".repeat(1024 * 1024) });
    const bytes = Buffer.from([ORDERED_LINES[0], long, "", "", oversized, ...ORDERED_LINES.slice(1), long, oversized].join("\n"));
    const path = writeInput(bytes);
    const expected = await serialSummary(bytes);
    expect(expected.inputs.unparseable_records).toBe(3);
    for (const blockBytes of [4096, 65_536, 100_000, 1 << 20, 3_000_000]) {
      const input = await openFileInput(path, path);
      const tasks = (await planBlocks(input.file!, { minBytes: 0, blockBytes }))!;
      await input.close();
      expect(await blockSummary(path, (fd) => tasks.map((task) => ({ ...task, fd })), [slowHelper([1, 0])]), `blocks of ${blockBytes} bytes`).toEqual(expected);
    }
  }, 120_000);

  it("on generated files, random block sizes, out-of-order helpers, windows and retired helpers", async () => {
    const event = fc.record({
      id: fc.integer({ min: 0, max: 40 }),
      type: fc.constantFrom("mcp_request", "mcp_card", "a2a_request", "a2a_card", "http"),
      hours: fc.integer({ min: -30, max: 60 }),
      tool: fc.constantFrom("search_shared_experience", "contribute_task_signal", "propose_contact", "about_magnt"),
      result: fc.constantFrom("no_relevant_experience", "matches_found", "accepted", "duplicate", "accepted_for_human_review", "storage_error"),
      receipt: fc.constantFrom("sr_a", "sr_b", "sr_c", undefined),
      signal: fc.constantFrom("ts_1", "ts_2", "ts_3", undefined),
      test: fc.constantFrom(undefined, "controlled_test", "self_reported_test"),
      bare: fc.boolean(),
    });
    const line = fc.oneof(
      { weight: 8, arbitrary: event.map((e) => {
        const body: Record<string, unknown> = { event_id: `id-${e.id}`, time: iso(e.hours * HOUR), event_type: e.type, mcp_method: "tools/call", tool_name: e.tool, tool_result: e.result, validation_status: "valid" };
        if (e.receipt !== undefined) body.search_receipt = e.receipt;
        if (e.signal !== undefined) body.signal_id = e.signal;
        if (e.test !== undefined) body[e.test] = true;
        return e.bare ? JSON.stringify(body) : wrap(body);
      }) },
      { weight: 1, arbitrary: fc.constantFrom("", "  ", "{broken mcp_", '{"a2a_":1}', "[1,2]") },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 60 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 400 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.tuple(fc.integer({ min: -20, max: 30 }), fc.integer({ min: 1, max: 40 }))),
        fc.constantFrom(undefined, 0, RETIRE_AT_ONCE),
        async (lines, finalNewline, blockBytes, delays, range, retireTableBytes) => {
          // The first line must be one whole record for the file to be cut at all.
          const bytes = Buffer.from(`${[wrap({ event_id: "head", time: iso(0), event_type: "mcp_card" }), ...lines].join("\n")}${finalNewline ? "\n" : ""}`);
          const path = writeInput(bytes);
          const window = range === null ? NO_WINDOW : { since: T0 + range[0] * HOUR, until: T0 + (range[0] + range[1]) * HOUR };
          const input = await openFileInput(path, path);
          const tasks = (await planBlocks(input.file!, { minBytes: 0, blockBytes }))!;
          await input.close();
          const summary = await blockSummary(path, (fd) => tasks.map((task) => ({ ...task, fd })), [slowHelper(delays)], window, retireTableBytes);
          expect(summary).toEqual(await serialSummary(bytes, window));
        },
      ),
      parameters(Math.max(50, FUZZ_RUNS / 2)),
    );
  }, 300_000);

  it("stops giving blocks to helpers once the id tables pass the limit, and starts none when the first block projects past it", async () => {
    const bytes = Buffer.from(`${ORDERED_LINES.join("\n")}\n`);
    const path = writeInput(bytes);
    const input = await openFileInput(path, path);
    const tasks = (await planBlocks(input.file!, { minBytes: 0, blockBytes: 16 }))!;
    await input.close();
    const expected = await serialSummary(bytes);
    // The empty tables already hold 512 KiB; a limit just below it retires the helper after the first block applied.
    const retired = slowHelper([0]);
    expect(await blockSummary(path, (fd) => tasks.map((task) => ({ ...task, fd })), [retired], NO_WINDOW, RETIRE_AT_ONCE)).toEqual(expected);
    expect(retired.counted).toBeLessThanOrEqual(2);
    expect(retired.closed).toBe(true);
    // A limit of 0 is passed by any projection: the helper is never used.
    const unused = slowHelper([0]);
    expect(await blockSummary(path, (fd) => tasks.map((task) => ({ ...task, fd })), [unused], NO_WINDOW, 0)).toEqual(expected);
    expect(unused.counted).toBe(0);
  });

  it("a helper's failed read is an unreadable file (exit 3), naming the file and the code only", async () => {
    const bytes = Buffer.from(`${ORDERED_LINES.join("\n")}\n`);
    const path = writeInput(bytes);
    const failing: HelperThread = { ready: Promise.resolve(), count: () => Promise.reject(new BlockReadError("EIO")), close: async () => undefined };
    const input = await openFileInput(path, "export.ndjson");
    try {
      const run = summarise([input], NO_WINDOW, () => undefined, { parallel: { helpers: () => [failing], minBytes: 0, blockBytes: 8 } });
      await expect(run).rejects.toThrow(EnvironmentError);
      await expect(run).rejects.toThrow("cannot read export.ndjson: EIO");
    } finally {
      await input.close();
    }
  });

  it("uses a second thread only when a CPU is free, unless MAGNT_METRICS_THREADS says", () => {
    expect(chooseThreads({}, 2, 0.3)).toBe(2);
    expect(chooseThreads({}, 2, 1.5)).toBe(1);
    expect(chooseThreads({}, 1, 0)).toBe(1);
    expect(chooseThreads({}, 8, 6.9)).toBe(2);
    expect(chooseThreads({ MAGNT_METRICS_THREADS: "2" }, 2, 9)).toBe(2);
    expect(chooseThreads({ MAGNT_METRICS_THREADS: "1" }, 8, 0)).toBe(1);
    expect(chooseThreads({ MAGNT_METRICS_THREADS: "4" }, 2, 0)).toBe(2);
  });

  it("takes the parallel path only for a file whose first line is one whole record, and not for gzip", async () => {
    const plan = async (bytes: Buffer) => {
      const input = await openFileInput(writeInput(bytes), "x");
      try {
        return await planBlocks(input.file!, { minBytes: 0 });
      } finally {
        await input.close();
      }
    };
    const ndjson = Buffer.from(`${ORDERED_LINES.join("\n")}\n`);
    expect(await plan(ndjson)).not.toBeNull();
    expect(await plan(gzipSync(ndjson))).toBeNull();
    expect(await plan(Buffer.from(`[${ORDERED_LINES.slice(0, 2).join(",")}]`))).toBeNull();
    expect(await plan(Buffer.from(JSON.stringify({ result: { events: { events: [] } } }) + "\n"))).toBeNull();
    expect(await plan(Buffer.from(`{"truncated":\n${ORDERED_LINES.join("\n")}`))).toBeNull();
    expect(await plan(Buffer.from(JSON.stringify({ source: { event_id: "a" } }, null, 2)))).toBeNull();
  });
});

describe("large inputs (08 §5.2)", () => {
  /** An export of `events` counted events (no duplicates), about 300 bytes a line. */
  const bigExport = (events: number) =>
    Buffer.from(
      Array.from({ length: events }, (_, index) =>
        index % 3 === 0 ? search(`s-${index}`, index * 1000, `sr_${index % 97}`) : index % 3 === 1 ? contribution(`c-${index}`, index * 1000 + HOUR, `sr_${(index - 1) % 97}`, `ts_${index % 50}`) : wrap({ event_id: `h-${index}`, time: iso(index), event_type: "http" }),
      ).join("\n") + "\n",
    );

  it("gzip over 4 MiB reads exactly as its plain text (the read buffers are never overwritten under zlib)", async () => {
    const plain = bigExport(60_000);
    const gzip = gzipSync(plain, { level: 0 });
    expect(gzip.length).toBeGreaterThan(3 * 4 * 1024 * 1024);
    const path = writeInput(gzip);
    const input = await openFileInput(path, path);
    try {
      expect(await summarise([input], NO_WINDOW)).toEqual(await serialSummary(plain));
    } finally {
      await input.close();
    }
  }, 120_000);

  it("blocks and chunks with thousands of counted events count like the full parse", async () => {
    const bytes = bigExport(60_000);
    const full = await summarise([stdinInput(Readable.from([bytes]))], NO_WINDOW, () => undefined, { fullParse: true });
    expect(full.inputs.counted_events).toBe(40_000);
    expect(await serialSummary(bytes)).toEqual(full);
    const path = writeInput(bytes);
    const input = await openFileInput(path, path);
    try {
      expect(await summarise([input], NO_WINDOW, () => undefined, { parallel: { helpers: () => [slowHelper([0, 1])], minBytes: 0 } })).toEqual(full);
    } finally {
      await input.close();
    }
  }, 120_000);
});
