/**
 * One block of an NDJSON file, counted on its own (the parallel path,
 * `parallel.ts`): a byte range [start, end) owns exactly the lines that start
 * inside it, so consecutive blocks together own every line once.
 *
 * A block reads from one byte before its start (to see whether a line starts
 * at `start`), skips the tail of the line it begins in (the previous block's
 * last line), and reads past its end only to finish its own last line — at
 * most MAX_RECORD_BYTES + 1 bytes, after which that line is known to be
 * oversized. Its lines go through the same `LineSplitter` and `RecordCounter`
 * as the serial path, so a block's counts and rows are exactly the serial
 * path's for those lines, in the same order.
 *
 * Reads are positional (`pread`) on a descriptor the main thread opened, so
 * any number of threads can read one file at once without sharing an offset.
 */
import { readSync } from "node:fs";
import { RecordCounter, type AggregatorOptions } from "./aggregate";
import { FACT_WIDTH } from "./facts";
import { LineSplitter, MAX_RECORD_BYTES } from "./scanner";

const NEWLINE = 0x0a;
/** Reads past a block's end come in pieces of this size (a line is ≈ 1 KB). */
const TAIL_PIECE_BYTES = 64 * 1024;

/** A block to count: which one (for ordering), the descriptor and the byte range. */
export interface BlockTask {
  index: number;
  fd: number;
  /** Where the file's first line starts: 0, or 3 after a byte order mark. */
  firstLineStart: number;
  start: number;
  end: number;
}

/** What one block counted: the record counts and the rows of its counted-type events, in file order. */
export interface BlockResult {
  index: number;
  records: number;
  unparseable: number;
  withoutEventId: number;
  rows: Float64Array;
  rowCount: number;
}

/** Rows arrays kept for reuse, at most (each one block's worth). */
const SPARE_ROWS = 3;
const MIN_ROWS = 1024;

/**
 * Counts blocks; one per thread, reusing its read buffers and, on the main
 * thread, the rows arrays of applied blocks (`recycle`). Why recycle: a block
 * of short counted lines has thousands of rows, and arrays dropped at that rate
 * wait for V8's rare full collections (external memory), which measured 20 MB
 * of peak RSS at 5 million ids.
 */
export class BlockScanner {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly tail = Buffer.allocUnsafe(TAIL_PIECE_BYTES);
  private readonly counter: RecordCounter;
  private readonly spare: Float64Array[] = [];
  /** Rows of the last block: a new array starts a quarter larger, so it rarely grows. */
  private lastRowCount = 0;

  constructor(options: AggregatorOptions = {}) {
    this.counter = new RecordCounter(options);
  }

  /** Gives back the rows array of a block that has been applied. */
  recycle(rows: Float64Array): void {
    if (this.spare.length < SPARE_ROWS) this.spare.push(rows);
  }

  /** A spare rows array to hand to another thread (which then recycles it there). */
  takeSpare(): Float64Array | undefined {
    return this.spare.pop();
  }

  scan(task: BlockTask): BlockResult {
    const counter = this.counter;
    const wanted = Math.max(MIN_ROWS, Math.ceil(this.lastRowCount * 1.25)) * FACT_WIDTH;
    const spare = this.spare.pop();
    counter.startBlock(spare !== undefined && spare.length >= wanted ? spare : new Float64Array(wanted));
    const splitter = new LineSplitter(counter);
    const { fd, start, end } = task;
    // One byte before `start` tells whether a line starts at `start`.
    const from = start > task.firstLineStart ? start - 1 : start;
    const length = end - from;
    if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(length);
    const bytes = this.buffer.subarray(0, readFully(fd, this.buffer, length, from));
    let first = 0;
    if (from < start) {
      const newline = bytes.indexOf(NEWLINE);
      first = newline === -1 ? bytes.length : newline + 1;
    }
    if (first < bytes.length) {
      splitter.push(bytes.subarray(first));
      if (bytes[bytes.length - 1] !== NEWLINE && bytes.length === length) this.finishLastLine(splitter, fd, end);
      splitter.end();
    }
    this.lastRowCount = counter.facts.count;
    return { index: task.index, records: counter.records, unparseable: counter.unparseable, withoutEventId: counter.withoutEventId, rows: counter.facts.rows, rowCount: counter.facts.count };
  }

  /** Feeds the rest of the block's last line (up to its newline, the end of the file, or past the size limit). */
  private finishLastLine(splitter: LineSplitter, fd: number, end: number): void {
    let position = end;
    let read = 0;
    while (read <= MAX_RECORD_BYTES + 1) {
      const got = readFully(fd, this.tail, TAIL_PIECE_BYTES, position);
      if (got === 0) return;
      const newline = this.tail.indexOf(NEWLINE);
      if (newline !== -1 && newline < got) {
        splitter.push(this.tail.subarray(0, newline + 1));
        return;
      }
      splitter.push(this.tail.subarray(0, got));
      read += got;
      position += got;
    }
  }
}

/** Reads up to `length` bytes at `position` (fewer only at the end of the file). */
function readFully(fd: number, buffer: Buffer, length: number, position: number): number {
  let total = 0;
  while (total < length) {
    const got = readSync(fd, buffer, total, length - total, position + total);
    if (got === 0) break;
    total += got;
  }
  return total;
}
