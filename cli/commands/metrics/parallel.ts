/**
 * The parallel path of `magnt metrics` (08 §5.2): a large uncompressed NDJSON
 * file is cut into blocks (`blocks.ts`); the main thread and one worker thread
 * count blocks, and the main thread applies the blocks' rows strictly in file
 * order. Everything that depends on order — dedupe (first occurrence wins),
 * the earliest receipt time, first and last event — is therefore decided on
 * one thread exactly as the serial path decides it; a worker only reads, and
 * hands back rows of numbers (`facts.ts`).
 *
 * Why the main thread counts too (two threads in all, as DuckDB is given in
 * the bench): a worker takes hundreds of milliseconds to start on a busy
 * machine, and the main thread would only wait meanwhile; blocks go to
 * whichever thread is free, so a starved worker just counts fewer of them.
 *
 * Memory (the 150 MB budget): rows arrays circulate — an applied block's
 * array goes back to the main thread's scanner or, with the next block, to the
 * worker — because arrays dropped at the rate blocks are counted wait for
 * V8's rare full collections (30 MB of peak RSS at 5 million ids). The worker
 * costs about 20 MB of RSS: it is not started when the first block's density of
 * counted events projects id tables past `RETIRE_TABLE_BYTES`, and once the id tables
 * pass `RETIRE_TABLE_BYTES` (about 2 million distinct ids) the worker gets no
 * more blocks and is stopped, and the main thread counts the rest alone — so
 * the peak is never the worker plus large tables. Results waiting for an
 * earlier block are capped at `MAX_WAITING` blocks.
 *
 * Taken only when it cannot change the result: a regular file (not stdin, not
 * gzip) of at least `PARALLEL_MIN_BYTES` whose first line is one whole object
 * (`certainlyNdjson`, so the serial path would split it into lines too). The
 * worker is used when the machine has a CPU to spare (`chooseThreads`) and the
 * worker bundle is beside the CLI's; without it the main thread counts every
 * block.
 */
import { existsSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { MetricsAggregator } from "./aggregate";
import type { BlockResult, BlockScanner, BlockTask } from "./blocks";
import { byteOrderMarkLength, certainlyNdjson, DETECTION_HEAD_MAX } from "./scanner";

/** Files below this size are streamed serially (a worker would start too late to help). */
export const PARALLEL_MIN_BYTES = 32 * 1024 * 1024;
/** Block size: counted in a few milliseconds, so two threads stay balanced and waiting rows stay small. */
export const BLOCK_BYTES = 512 * 1024;
/** Blocks a worker holds at once (one counted, one queued), so it never idles waiting for the main thread. */
const IN_FLIGHT_PER_HELPER = 2;
/** Counted blocks waiting for an earlier one, at most (then the main thread waits instead of counting). */
const MAX_WAITING = 4;
/** Id-table size at which the worker is stopped (08 §5.2: RSS ≤ 150 MB at 5 million distinct ids). */
export const RETIRE_TABLE_BYTES = 24 * 1024 * 1024;
/** What one distinct id costs in the tables, for the projection from the first block (fingerprint.ts: 10–15). */
const PROJECTED_BYTES_PER_ID = 12;

/** Another thread that counts blocks: a worker thread in the CLI, an in-thread stand-in in tests. */
export interface HelperThread {
  /** Resolves when the thread can take blocks (rejects if it cannot start: it is then not used). */
  readonly ready: Promise<void>;
  /**
   * Counts one block; a thread answers its blocks in the order it was given
   * them. `spare` is an applied block's rows array for the thread to reuse
   * (so rows arrays circulate instead of piling up as garbage).
   */
  count(task: BlockTask, spare?: Float64Array): Promise<BlockResult>;
  close(): Promise<void>;
}

/** A file the parallel path may read: its descriptor, size, and a positional read of its head. */
export interface ParallelFile {
  fd: number;
  size: number;
  readHead(length: number): Promise<Buffer>;
}

/** How the file is to be cut, or null when the serial path must count it. */
export async function planBlocks(file: ParallelFile, options: { minBytes?: number; blockBytes?: number } = {}): Promise<BlockTask[] | null> {
  if (file.size < (options.minBytes ?? PARALLEL_MIN_BYTES)) return null;
  const head = await file.readHead(Math.min(file.size, DETECTION_HEAD_MAX));
  if (head[0] === 0x1f && head[1] === 0x8b) return null; // gzip
  const firstLineStart = byteOrderMarkLength(head);
  if (!certainlyNdjson(head.subarray(firstLineStart))) return null;
  const blockBytes = options.blockBytes ?? BLOCK_BYTES;
  const tasks: BlockTask[] = [];
  for (let start = firstLineStart; start < file.size; start += blockBytes) {
    tasks.push({ index: tasks.length, fd: file.fd, firstLineStart, start, end: Math.min(file.size, start + blockBytes) });
  }
  return tasks;
}

export interface CountOptions {
  /** Id-table size at which helpers are stopped (tests lower it). */
  retireTableBytes?: number;
  /** Blocks counted, and how many of them by helpers (the bench and the e2e suite read it). */
  stats?: { blocks: number; helperBlocks: number };
}

/**
 * Counts the blocks — on the main thread (`scanner`) and on `helpers` — and
 * applies their results to `aggregator` in file order; `onBytes` reports each
 * applied block's length (progress). Closes the helpers before returning.
 */
export async function countBlocks(
  tasks: readonly BlockTask[],
  scanner: BlockScanner,
  startHelpers: () => HelperThread[],
  aggregator: MetricsAggregator,
  onBytes: (bytes: number) => void,
  options: CountOptions = {},
): Promise<void> {
  const retireAt = options.retireTableBytes ?? RETIRE_TABLE_BYTES;
  const helpers: HelperThread[] = [];
  const waiting = new Map<number, BlockResult>();
  let nextToCount = 0;
  let nextToApply = 0;
  let failure = null as { error: unknown } | null; // set by the helpers' callbacks
  let retired = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  const inFlight: number[] = [];
  const ready: boolean[] = [];
  const closing: Array<Promise<void>> = [];
  const closed: boolean[] = [];
  const closeHelper = (index: number) => {
    if (closed[index]) return;
    closed[index] = true;
    closing.push(helpers[index]!.close().catch(() => undefined));
  };

  const apply = () => {
    for (let result = waiting.get(nextToApply); result !== undefined; result = waiting.get(nextToApply)) {
      waiting.delete(nextToApply);
      aggregator.addBlock(result.records, result.unparseable, result.withoutEventId, result.rows, result.rowCount);
      scanner.recycle(result.rows);
      const task = tasks[nextToApply]!;
      onBytes(task.end - task.start + (nextToApply === 0 ? task.firstLineStart : 0));
      nextToApply += 1;
    }
    if (!retired && aggregator.tableBytes > retireAt) retired = true;
  };
  const feed = (index: number) => {
    while (failure === null && ready[index]! && !retired && inFlight[index]! < IN_FLIGHT_PER_HELPER && nextToCount < tasks.length && waiting.size < MAX_WAITING) {
      const task = tasks[nextToCount]!;
      nextToCount += 1;
      inFlight[index] = inFlight[index]! + 1;
      helpers[index]!.count(task, scanner.takeSpare()).then(
        (result) => {
          inFlight[index] = inFlight[index]! - 1;
          if (options.stats !== undefined) options.stats.helperBlocks += 1;
          waiting.set(result.index, result);
          apply();
          feed(index);
          notify();
        },
        (error: unknown) => {
          failure ??= { error };
          notify();
        },
      );
    }
    if ((retired || nextToCount === tasks.length) && inFlight[index] === 0) closeHelper(index);
  };
  /**
   * Starts the helpers once the first block is counted, unless that block's
   * density of counted events says the id tables will pass the retirement
   * size anyway: the helpers would then help only early on and leave their
   * memory behind for the peak, which comes at the end.
   */
  const maybeStart = (first: BlockResult, task: BlockTask) => {
    const projectedIds = (first.rowCount / Math.max(1, task.end - task.start)) * (tasks[tasks.length - 1]!.end - task.start);
    if (projectedIds * PROJECTED_BYTES_PER_ID > retireAt || tasks.length === 1) return;
    for (const helper of startHelpers()) {
      const index = helpers.push(helper) - 1;
      inFlight.push(0);
      ready.push(false);
      closed.push(false);
      helper.ready.then(
        () => {
          ready[index] = true;
          feed(index);
        },
        () => closeHelper(index), // a worker that cannot start is not used
      );
    }
  };

  if (options.stats !== undefined) options.stats.blocks += tasks.length;
  try {
    while (nextToApply < tasks.length) {
      if (failure !== null) throw failure.error;
      if (nextToCount < tasks.length && waiting.size < MAX_WAITING) {
        const task = tasks[nextToCount]!;
        nextToCount += 1;
        const result = scanner.scan(task);
        if (task.index === 0) maybeStart(result, task);
        waiting.set(task.index, result);
        apply();
        helpers.forEach((_, index) => feed(index));
        // Let the helpers' answers in between the main thread's own blocks.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        // Everything left is at a helper, or the waiting results are at their cap: wait for an answer.
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    }
  } finally {
    retired = true;
    helpers.forEach((_, index) => closeHelper(index));
    await Promise.all(closing);
  }
}

// ---------------------------------------------------------------- worker threads

/** The worker bundle, built beside the CLI's (`npm run build:cli`). */
const WORKER_URL = new URL("./metrics-worker.mjs", import.meta.url);

/** A read failure inside a worker, carried back as its system error code. */
export class BlockReadError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** A message to a worker: a block to count, with a rows array to reuse. */
export interface WorkerTask {
  task: BlockTask;
  spare?: Float64Array;
}

/** Messages from a worker: one "ready" when it has started, then one answer per block. */
export type WorkerMessage = { kind: "ready" } | { kind: "result"; result: BlockResult } | { kind: "read-error"; code: string };

/**
 * How many threads count blocks: `MAGNT_METRICS_THREADS` when it is "1" or
 * "2"; otherwise two when the machine has a CPU to spare — at least two CPUs
 * and a 1-minute load average below CPUs − 0.5 — else one. Why not always two:
 * on a machine whose CPUs are busy the worker only adds its start-up and the
 * rows' hand-over (≈ 15 % more CPU in all), and measured slower in the same run.
 */
export function chooseThreads(env: Readonly<Record<string, string | undefined>>, cpus = availableParallelism(), load = loadavg()[0]!): 1 | 2 {
  const forced = env.MAGNT_METRICS_THREADS;
  if (forced === "1" || forced === "2") return Number(forced) as 1 | 2;
  return cpus >= 2 && load < cpus - 0.5 ? 2 : 1;
}

/**
 * The worker threads to help the main thread for `threads` threads in all:
 * none for one, or when the worker bundle is not there (running from the
 * TypeScript sources, as the in-process tests do).
 */
export function workerHelpers(threads: 1 | 2): HelperThread[] {
  if (threads < 2) return [];
  const path = fileURLToPath(WORKER_URL);
  if (!existsSync(path)) return [];
  return [new WorkerHelper(path)];
}

class WorkerHelper implements HelperThread {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending: Array<{ resolve: (result: BlockResult) => void; reject: (error: unknown) => void }> = [];

  constructor(path: string) {
    // Small generations: a worker allocates little beyond the counted strings (RSS budget, 08 §5.2).
    this.worker = new Worker(path, { resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 } });
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on("message", (message: WorkerMessage) => {
        if (message.kind === "ready") {
          resolve();
          return;
        }
        const waiter = this.pending.shift();
        if (waiter === undefined) return;
        if (message.kind === "result") waiter.resolve(message.result);
        else waiter.reject(new BlockReadError(message.code));
      });
      const fail = (error: unknown) => {
        reject(error);
        for (const waiter of this.pending.splice(0)) waiter.reject(error);
      };
      this.worker.on("error", fail);
      this.worker.on("exit", (code) => fail(new Error(`metrics worker exited (${code})`)));
    });
    // Nothing awaits `ready` when the file is short; its failure is then of no interest.
    this.ready.catch(() => undefined);
  }

  count(task: BlockTask, spare?: Float64Array): Promise<BlockResult> {
    return new Promise<BlockResult>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      const message: WorkerTask = spare === undefined ? { task } : { task, spare };
      this.worker.postMessage(message, spare === undefined ? [] : [spare.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
