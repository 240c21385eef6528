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
import { resolve } from "node:path";
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { UsageError } from "../../lib/errors";
import { MetricsAggregator, RecordCounter, type AggregatorOptions, type MetricsSummary, type TimeWindow } from "./aggregate";
import { BlockScanner } from "./blocks";
import { BlockReadError, chooseThreads, countBlocks, planBlocks, workerHelpers, type CountOptions, type HelperThread } from "./parallel";
import { Progress } from "./progress";
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
    .addHelpText(
      "after",
      examples([
        "magnt metrics observer.ndjson",
        "magnt metrics gateway.json core.ndjson.gz --since 2026-05-01 --until 2026-05-08",
        "zcat logs.ndjson.gz | magnt metrics - --json",
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
        let summary: MetricsSummary;
        const blocks = { blocks: 0, helperBlocks: 0 };
        try {
          const threads = chooseThreads(rt.ctx.env);
          summary = await summarise(inputs, window, (bytes) => progress.add(bytes), { parallel: { helpers: () => workerHelpers(threads), stats: blocks } });
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
        if (rt.out.json) rt.out.jsonLine(summary);
        else renderReport(rt.out, summary);
      }),
    );
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
        await countBlocks(tasks, scanner, parallel!.helpers, aggregator, onRawBytes, parallel);
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        // A failed read, on the main thread or in the worker, is the operator's problem (exit 3); anything else is a bug.
        throw error instanceof BlockReadError || typeof code === "string" ? unreadable(input.name, error) : error;
      }
      continue;
    }
    const splitter = new InputSplitter(counter);
    for await (const chunk of input.chunks(onRawBytes)) {
      splitter.push(chunk);
      counter.takeInto(aggregator);
    }
    splitter.end();
    counter.takeInto(aggregator);
  }
  return aggregator.finish();
}
