/**
 * `magnt metrics <files…>` (08 §5): the door's funnel from Workers Logs
 * exports — counts only, in one streaming pass and constant memory.
 *
 * Flow: validate the window options (exit 2), open every file (exit 3 before
 * any output), stream each input through the shape-detecting scanner into one
 * aggregator, resolve the receipt correlation, then print the summary as JSON
 * or as the human report. Failures are typed errors; `runCli` maps them to the
 * exit code and the final `--json` error object.
 */
import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { EnvironmentError, UsageError } from "../../lib/errors";
import { MetricsAggregator, RecordCounter, type AggregatorOptions, type DailySeries, type MetricsSummary, type TimeWindow } from "./aggregate";
import { BlockScanner } from "./blocks";
import { BlockReadError, chooseThreads, countBlocks, planBlocks, workerHelpers, type CountOptions, type HelperThread } from "./parallel";
import { Progress } from "./progress";
import { renderHtml } from "./html";
import { renderReport } from "./report";
import { InputSplitter } from "./scanner";
import { openFileInput, stdinInput, unreadable, type MetricsInput, type StdinSource } from "./sources";
import { parseInstant } from "./time";

export function registerMetrics(program: ParentCommand, ctx: CliContext): void {
  program
    .command("metrics")
    .description("count the door's requests from exported Workers Logs (NDJSON, JSON array or query API envelope; .gz ok)")
    .argument("<files...>", "exported log files; - reads stdin")
    .option("--since <ISO>", "count events at or after this instant (UTC unless an offset is given)")
    .option("--until <ISO>", "count events before this instant")
    .option("--full", "show every counter as its own table, and every day of the series")
    .option("--html <file>", "also write the report as one self-contained HTML page (charts and tables)")
    .addHelpText(
      "after",
      examples([
        "magnt metrics observer.ndjson",
        "magnt metrics gateway.json core.json --since 2026-05-01 --until 2026-05-08",
        "zcat logs.ndjson.gz | magnt metrics - --json",
        "magnt metrics core.ndjson --html metrics.html",
      ]),
    )
    .action(
      withRuntime(ctx, async (rt, files, options) => {
        const window = parseWindow(options);
        const started = performance.now();
        const inputs = await openInputs(rt.ctx, files);
        const totalBytes = inputs.reduce((sum, input) => sum + (input.size ?? 0), 0);
        const progress = new Progress(rt.ctx.stderr, {
          enabled: rt.ctx.stderr.isTTY === true && !rt.out.quiet && !rt.out.json,
          totalBytes,
        });
        let counted: Counted;
        const blocks = { blocks: 0, helperBlocks: 0 };
        try {
          const threads = chooseThreads(rt.ctx.env);
          counted = await count(inputs, window, (bytes) => progress.add(bytes), { parallel: { helpers: () => workerHelpers(threads), stats: blocks } });
        } finally {
          progress.stop();
          await Promise.allSettled(inputs.map((input) => input.close()));
        }
        if (rt.ctx.env.MAGNT_BENCH_STATS === "1") {
          // Hidden, for `npm run bench` (10 §6): sizes and timings only.
          const memory = process.memoryUsage();
          const stats = {
            bytes: progress.bytes,
            seconds: (performance.now() - started) / 1000,
            max_rss_bytes: process.resourceUsage().maxRSS * 1024,
            heap_total_bytes: memory.heapTotal,
            array_buffers_bytes: memory.arrayBuffers,
            // The parallel path: blocks counted, and how many by the worker thread.
            blocks: blocks.blocks,
            worker_blocks: blocks.helperBlocks,
          };
          rt.ctx.stderr.write(`magnt-bench-stats ${JSON.stringify(stats)}\n`);
        }
        if (counted.notExports.length > 0) {
          // Never an all-zero report for a file that is no export: say which and why (08 §5).
          for (const input of counted.notExports) rt.ctx.stderr.write(`${rt.out.paint.warn("warning:")} ${notAnExportMessage(input)}\n`);
          const names = counted.notExports.map((input) => input.name).join(", ");
          throw new EnvironmentError(`nothing could be read as a Workers Logs export in ${names}; no report written`);
        }
        const { summary, daily } = counted;
        if (options.html !== undefined) await writeHtml(resolve(rt.ctx.cwd, options.html), options.html, renderHtml(summary, daily));
        if (rt.out.json) rt.out.jsonLine(summary);
        else renderReport(rt.out, summary, daily, { full: options.full === true });
        if (options.html !== undefined) rt.out.info(`wrote ${options.html}`);
      }),
    );
}

/** Writes the `--html` page; a failure is the operator's (exit 3), named by the path typed. */
async function writeHtml(path: string, name: string, page: string): Promise<void> {
  try {
    await writeFile(path, page, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    throw new EnvironmentError(`cannot write ${name}: ${typeof code === "string" ? code : String(error)}`);
  }
}

/** Parses `--since`/`--until`; an unparseable value is a usage error (exit 2). */
export function parseWindow(options: { since?: string | undefined; until?: string | undefined }): TimeWindow {
  const parse = (name: string, raw: string | undefined): number | null => {
    if (raw === undefined) return null;
    const value = parseInstant(raw.trim(), true);
    if (!Number.isFinite(value)) {
      throw new UsageError(`${name} must be an ISO 8601 date or date-time, such as 2026-05-01 or 2026-05-01T12:00:00Z`);
    }
    return value;
  };
  const window = { since: parse("--since", options.since), until: parse("--until", options.until) };
  if (window.since !== null && window.until !== null && window.since >= window.until) {
    throw new UsageError("--since must be earlier than --until");
  }
  return window;
}

/** Where `-` reads from: the context's stdin when it is a stream (tests), else the process's. */
function stdinOf(ctx: CliContext): StdinSource {
  const candidate = ctx.stdin as Partial<AsyncIterable<Buffer>>;
  return typeof candidate[Symbol.asyncIterator] === "function" ? (candidate as StdinSource) : process.stdin;
}

/** Opens every input before reading any, so an unreadable file fails before output. */
async function openInputs(ctx: CliContext, files: readonly string[]): Promise<MetricsInput[]> {
  const inputs: MetricsInput[] = [];
  try {
    for (const file of files) {
      inputs.push(file === "-" ? stdinInput(stdinOf(ctx)) : await openFileInput(resolve(ctx.cwd, file), file));
    }
  } catch (error) {
    await Promise.allSettled(inputs.map((input) => input.close()));
    throw error;
  }
  return inputs;
}

export interface SummariseOptions extends AggregatorOptions {
  /** The parallel path: where its helper threads come from, and its sizes (tests make them small). */
  parallel?: { helpers: () => HelperThread[]; minBytes?: number; blockBytes?: number } & CountOptions;
}

/**
 * Counts every input, in order, into one aggregator and returns the summary:
 * a large NDJSON file through the parallel path when it is available, every
 * other input streamed through the serial one. Both hand the aggregator the
 * same rows in the same order.
 */
export async function summarise(
  inputs: readonly MetricsInput[],
  window: TimeWindow,
  onRawBytes: (bytes: number) => void = () => undefined,
  options: SummariseOptions = {},
): Promise<MetricsSummary> {
  return (await count(inputs, window, onRawBytes, options)).summary;
}

/** An input none of whose records is JSON: named, with what was read. */
export interface NotAnExport {
  name: string;
  records: number;
  gzip: boolean;
}

/** What one run counted: the `--json` summary, the per-day series and the inputs that were no export. */
export interface Counted {
  summary: MetricsSummary;
  daily: DailySeries;
  notExports: NotAnExport[];
}

/** `summarise`, plus the per-day series and the inputs in which no record was JSON. */
export async function count(
  inputs: readonly MetricsInput[],
  window: TimeWindow,
  onRawBytes: (bytes: number) => void = () => undefined,
  options: SummariseOptions = {},
): Promise<Counted> {
  const notExports: NotAnExport[] = [];
  const aggregator = new MetricsAggregator(window);
  aggregator.files = inputs.length;
  const counter = new RecordCounter(options, aggregator);
  let scanner: BlockScanner | undefined;
  for (const input of inputs) {
    const parallel = options.parallel;
    const tasks = parallel === undefined || input.file === undefined ? null : await planBlocks(input.file, parallel);
    if (tasks !== null) {
      scanner ??= new BlockScanner(options);
      try {
        // Only a file whose first line is one whole JSON object is cut into blocks, so it is an export.
        await countBlocks(tasks, scanner, parallel!.helpers, aggregator, onRawBytes, parallel);
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        // A failed read, on the main thread or in the worker, is the operator's problem (exit 3); anything else is a bug.
        throw error instanceof BlockReadError || typeof code === "string" ? unreadable(input.name, error) : error;
      }
      continue;
    }
    const splitter = new InputSplitter(counter);
    counter.readable = false;
    const recordsBefore = aggregator.recordCount + counter.records;
    for await (const chunk of input.chunks(onRawBytes)) {
      splitter.push(chunk);
      counter.takeInto(aggregator);
    }
    splitter.end();
    counter.takeInto(aggregator);
    const records = aggregator.recordCount - recordsBefore;
    // An empty input is an empty export; records of which none is JSON are no export (08 §5).
    if (records > 0 && !counter.readable) notExports.push({ name: input.name, records, gzip: input.gzip });
  }
  return { summary: aggregator.finish(), daily: aggregator.daily(), notExports };
}

/** What is wrong with an input that is no export, in one line naming it (08 §5). */
export function notAnExportMessage(input: NotAnExport): string {
  const read = input.records === 1 ? "its one record is not JSON" : `none of its ${input.records} records is JSON`;
  const gzip = input.gzip
    ? "decompressed as gzip, but "
    : /\.gz$/i.test(input.name)
      ? "named .gz but not gzip (no gzip header), and "
      : "";
  return `${input.name} is not a Workers Logs export: ${gzip}${read} (expected NDJSON, a JSON array or the query API envelope, optionally gzip)`;
}
