/**
 * Cuts the records out of one input's bytes (08 §5.1, §5.2), without ever
 * holding the input whole and without decoding anything but the records.
 *
 * Shapes, detected per input from its first lines:
 * - NDJSON: one record per line, split on newline bytes (the fast path);
 * - a JSON array of records;
 * - the Workers Logs query API envelope `{"result":{"events":{"events":[…]}}}`
 *   (other keys ignored), compact or pretty-printed;
 * - a pretty-printed record, or several concatenated.
 * The last three go through a byte-level structural scanner that tracks
 * strings, escapes and nesting, and that also handles NDJSON; detection only
 * picks the faster path when the first line is a whole record.
 *
 * Threat model: the input is an export of logs whose strings came from
 * anonymous visitors. Nothing here decodes or prints text; a record over
 * 1 MiB is skipped unread (counted as unparseable) so a hostile line cannot
 * make the process hold it; malformed bytes never throw — they become records
 * that fail to parse, or are skipped.
 */

/** Records over this many bytes are skipped and counted as unparseable (08 §5.2). */
export const MAX_RECORD_BYTES = 1024 * 1024;

/** Where the scanner delivers records. */
export interface RecordSink {
  /** A new chunk starts; records of `record` come from it in increasing offsets. */
  newChunk(): void;
  /** A complete record: bytes [start, end) of the current chunk. */
  record(chunk: Buffer, start: number, end: number): void;
  /** A complete record assembled across chunks (a private buffer). */
  isolatedRecord(bytes: Buffer): void;
  /** A record over MAX_RECORD_BYTES, skipped unread. */
  oversized(): void;
}

/** Input shape as detected (reported by tests only; the output never says which). */
export type InputShape = "ndjson" | "structural";

const NEWLINE = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isWhitespace = (byte: number): boolean => byte === SPACE || byte === NEWLINE || byte === CR || byte === TAB;

/**
 * Collects the bytes of a record that spans chunks, giving up (and remembering
 * that it did) once the record is over the limit.
 */
class PartialRecord {
  private parts: Buffer[] = [];
  private bytes = 0;
  tooLarge = false;

  get empty(): boolean {
    return this.bytes === 0 && !this.tooLarge;
  }

  /** Keeps a copy of `chunk[start, end)`: the chunk's memory may be reused. */
  add(chunk: Buffer, start: number, end: number): void {
    if (this.tooLarge || end <= start) return;
    this.bytes += end - start;
    if (this.bytes > MAX_RECORD_BYTES) {
      this.tooLarge = true;
      this.parts = [];
      return;
    }
    this.parts.push(Buffer.from(chunk.subarray(start, end)));
  }

  /** Completes the record with `chunk[0, end)`: its bytes, "oversized", or null when nothing was collected. */
  take(chunk: Buffer | null, end: number): Buffer | "oversized" | null {
    if (!this.tooLarge && chunk !== null) this.add(chunk, 0, end);
    const result = this.tooLarge
      ? "oversized"
      : this.bytes === 0
        ? null
        : this.parts.length === 1
          ? this.parts[0]!
          : Buffer.concat(this.parts, this.bytes);
    this.reset();
    return result;
  }

  /** Completes the record with `chunk[0, end)` and hands it to the sink. */
  finish(sink: RecordSink, chunk: Buffer | null, end: number): void {
    const taken = this.take(chunk, end);
    if (taken === "oversized") sink.oversized();
    else if (taken !== null) sink.isolatedRecord(taken);
  }

  reset(): void {
    this.parts = [];
    this.bytes = 0;
    this.tooLarge = false;
  }
}

/** True when `chunk[start, end)` holds only whitespace. */
function blank(chunk: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index += 1) if (!isWhitespace(chunk[index]!)) return false;
  return true;
}

/** NDJSON: each non-blank line is a record. */
export class LineSplitter {
  private readonly partial = new PartialRecord();

  constructor(private readonly sink: RecordSink) {}

  push(chunk: Buffer): void {
    const sink = this.sink;
    sink.newChunk();
    let position = 0;
    if (!this.partial.empty) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline === -1) {
        this.partial.add(chunk, 0, chunk.length);
        return;
      }
      this.deliver(this.partial.take(chunk, newline));
      position = newline + 1;
    }
    for (;;) {
      const newline = chunk.indexOf(NEWLINE, position);
      if (newline === -1) break;
      if (newline - position > MAX_RECORD_BYTES) sink.oversized();
      else if (!blank(chunk, position, newline)) sink.record(chunk, position, newline);
      position = newline + 1;
    }
    if (position < chunk.length) this.partial.add(chunk, position, chunk.length);
  }

  end(): void {
    this.deliver(this.partial.take(null, 0));
  }

  /** A line assembled across chunks (or the last line without a newline). */
  private deliver(taken: Buffer | "oversized" | null): void {
    if (taken === "oversized") this.sink.oversized();
    else if (taken !== null && !blank(taken, 0, taken.length)) this.sink.isolatedRecord(taken);
  }
}

/** Container kinds on the structural scanner's stack. */
const OBJECT = 1;
const ARRAY = 2;
/** Keys remembered on the path to the envelope's array. */
const KEY_OTHER = 0;
const KEY_RESULT = 1;
const KEY_EVENTS = 2;
/** Depth of the envelope's record array: {result:{events:{events:[ … ]}}}. */
const ENVELOPE_DEPTH = 4;
const TRACKED_DEPTH = 8;
const KEY_CAPTURE_MAX = 8;

/**
 * A byte-level JSON structure scanner. Records are: each element of a
 * top-level array; each element of `result.events.events` inside a top-level
 * object (the query API envelope); otherwise each top-level object itself.
 * Bytes at the top level that start no object or array are taken as one
 * record up to the end of their line (they fail to parse and are counted).
 */
export class StructuralScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private readonly kinds = new Uint8Array(TRACKED_DEPTH + 1);
  private readonly keys = new Uint8Array(TRACKED_DEPTH + 1);
  private readonly expectKey = new Uint8Array(TRACKED_DEPTH + 1);
  /** Key being read: only at depth ≤ 3 in key position. */
  private capturing = false;
  private captureLength = 0;
  private readonly capture = new Uint8Array(KEY_CAPTURE_MAX);
  /** The open record: the depth its value started at, or -1. */
  private recordDepth = -1;
  private recordStart = 0;
  /** A scalar record (number, literal) or top-level junk line in progress. */
  private scalarRecord = false;
  private junkLine = false;
  private readonly partial = new PartialRecord();
  /** Whether the current top-level object turned out to be an envelope. */
  sawEnvelope = false;
  /** Top-level values completed so far (for shape detection). */
  topLevelValues = 0;

  constructor(private readonly sink: RecordSink) {}

  /** True when no value, string or record is open. */
  get idle(): boolean {
    return this.depth === 0 && !this.inString && this.recordDepth === -1;
  }

  push(chunk: Buffer): void {
    const sink = this.sink;
    sink.newChunk();
    if (this.recordDepth !== -1) this.recordStart = 0;
    const length = chunk.length;
    let index = 0;
    while (index < length) {
      const byte = chunk[index]!;
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          if (this.capturing) this.captureLength = KEY_CAPTURE_MAX + 1; // an escaped key is never ours
        } else if (byte === BACKSLASH) {
          this.escaped = true;
        } else if (byte === QUOTE) {
          this.inString = false;
          if (this.capturing) this.endKey();
          if (this.recordDepth === this.depth && !this.scalarRecord) this.closeRecord(chunk, index + 1);
        } else if (this.capturing) {
          if (this.captureLength < KEY_CAPTURE_MAX) this.capture[this.captureLength] = byte;
          this.captureLength += 1;
        } else {
          // Fast-forward through the string body to the next quote or backslash.
          let next = index + 1;
          while (next < length) {
            const b = chunk[next]!;
            if (b === QUOTE || b === BACKSLASH) break;
            next += 1;
          }
          index = next;
          continue;
        }
        index += 1;
        continue;
      }
      if (this.junkLine) {
        if (byte === NEWLINE) {
          this.junkLine = false;
          this.closeRecord(chunk, index);
        }
        index += 1;
        continue;
      }
      if (this.scalarRecord) {
        if (byte === COMMA || byte === CLOSE_ARRAY || byte === CLOSE_OBJECT || isWhitespace(byte)) {
          this.scalarRecord = false;
          this.closeRecord(chunk, index);
          continue; // the delimiter is handled below
        }
        index += 1;
        continue;
      }
      if (isWhitespace(byte)) {
        index += 1;
        continue;
      }
      const depth = this.depth;
      // A value may start here: does it open a record?
      if (this.recordDepth === -1 && byte !== COMMA && byte !== COLON && byte !== CLOSE_ARRAY && byte !== CLOSE_OBJECT) {
        if (depth === 0) {
          if (byte === OPEN_OBJECT) this.openRecord(index, false);
          else if (byte !== OPEN_ARRAY) {
            this.openRecord(index, false);
            this.junkLine = true;
            index += 1;
            continue;
          }
        } else if (this.isRecordArray(depth)) {
          this.openRecord(index, byte !== OPEN_OBJECT && byte !== OPEN_ARRAY && byte !== QUOTE);
          if (this.scalarRecord) {
            index += 1;
            continue;
          }
        }
      }
      if (byte === QUOTE) {
        this.inString = true;
        if (depth >= 1 && depth <= 3 && this.kinds[depth] === OBJECT && this.expectKey[depth] === 1) {
          this.capturing = true;
          this.captureLength = 0;
        }
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        this.depth = depth + 1;
        if (this.depth <= TRACKED_DEPTH) {
          this.kinds[this.depth] = byte === OPEN_OBJECT ? OBJECT : ARRAY;
          this.keys[this.depth] = KEY_OTHER;
          this.expectKey[this.depth] = byte === OPEN_OBJECT ? 1 : 0;
        }
        if (byte === OPEN_ARRAY && this.depth === ENVELOPE_DEPTH && this.isEnvelopePath()) {
          // The top-level object is an envelope: its elements are the records, not the object.
          this.sawEnvelope = true;
          if (this.recordDepth === 0) {
            this.recordDepth = -1;
            this.partial.reset();
          }
        }
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        if (depth > 0) {
          this.depth = depth - 1;
          if (this.depth === 0) this.topLevelValues += 1;
          if (this.recordDepth === this.depth) this.closeRecord(chunk, index + 1);
        } else {
          // An unbalanced closing byte at the top level: junk up to the end of its line.
          this.openRecord(index, false);
          this.junkLine = true;
        }
      } else if (byte === COMMA) {
        if (depth >= 1 && depth <= TRACKED_DEPTH && this.kinds[depth] === OBJECT) this.expectKey[depth] = 1;
      } else if (byte === COLON) {
        if (depth >= 1 && depth <= TRACKED_DEPTH) this.expectKey[depth] = 0;
      }
      index += 1;
    }
    if (this.recordDepth !== -1) this.partial.add(chunk, this.recordStart, length);
  }

  /** End of input: a record still open is handed over as it is (it will fail to parse). */
  end(): void {
    if (this.recordDepth === -1) return;
    this.recordDepth = -1;
    this.scalarRecord = false;
    this.junkLine = false;
    this.partial.finish(this.sink, null, 0);
  }

  private isRecordArray(depth: number): boolean {
    if (depth > TRACKED_DEPTH || this.kinds[depth] !== ARRAY) return false;
    return depth === 1 || (depth === ENVELOPE_DEPTH && this.isEnvelopePath());
  }

  private isEnvelopePath(): boolean {
    return (
      this.kinds[1] === OBJECT &&
      this.keys[1] === KEY_RESULT &&
      this.kinds[2] === OBJECT &&
      this.keys[2] === KEY_EVENTS &&
      this.kinds[3] === OBJECT &&
      this.keys[3] === KEY_EVENTS &&
      this.kinds[4] === ARRAY
    );
  }

  private openRecord(index: number, scalar: boolean): void {
    this.recordDepth = this.depth;
    this.recordStart = index;
    this.scalarRecord = scalar;
    this.partial.reset();
  }

  private closeRecord(chunk: Buffer, end: number): void {
    const start = this.recordStart;
    this.recordDepth = -1;
    if (this.partial.empty) {
      if (end - start > MAX_RECORD_BYTES) this.sink.oversized();
      else this.sink.record(chunk, start, end);
    } else {
      this.partial.finish(this.sink, chunk, end);
    }
  }

  private endKey(): void {
    this.capturing = false;
    const depth = this.depth;
    let key = KEY_OTHER;
    if (this.captureLength === 6) {
      const c = this.capture;
      if (c[0] === 0x72 && c[1] === 0x65 && c[2] === 0x73 && c[3] === 0x75 && c[4] === 0x6c && c[5] === 0x74) key = KEY_RESULT;
      else if (c[0] === 0x65 && c[1] === 0x76 && c[2] === 0x65 && c[3] === 0x6e && c[4] === 0x74 && c[5] === 0x73) key = KEY_EVENTS;
    }
    this.keys[depth] = key;
  }
}

/** A sink that only counts, for shape detection. */
class CountingSink implements RecordSink {
  records = 0;
  newChunk(): void {}
  record(): void {
    this.records += 1;
  }
  isolatedRecord(): void {
    this.records += 1;
  }
  oversized(): void {
    this.records += 1;
  }
}

/** Whether `line` is exactly one complete JSON object or array and not an envelope. */
function wholeValueLine(line: Buffer): { whole: boolean; envelope: boolean } {
  const sink = new CountingSink();
  const scanner = new StructuralScanner(sink);
  scanner.push(line);
  return { whole: scanner.idle && scanner.topLevelValues === 1 && line[firstNonBlank(line)] === OPEN_OBJECT, envelope: scanner.sawEnvelope };
}

function firstNonBlank(bytes: Buffer, from = 0): number {
  let index = from;
  while (index < bytes.length && isWhitespace(bytes[index]!)) index += 1;
  return index;
}

/**
 * Chooses the splitter from the head of an input (its first lines).
 * NDJSON when the first line is a whole object that is not an envelope, or
 * when it is broken but the second line is a whole object (a truncated first
 * record); the structural scanner otherwise, which handles every shape.
 */
export function detectShape(head: Buffer): InputShape {
  const start = firstNonBlank(head);
  if (start >= head.length) return "ndjson";
  const first = head[start]!;
  if (first === OPEN_ARRAY) return "structural";
  if (first !== OPEN_OBJECT) return "ndjson";
  const firstEnd = head.indexOf(NEWLINE, start);
  const line1 = head.subarray(start, firstEnd === -1 ? head.length : firstEnd);
  const probe1 = wholeValueLine(line1);
  if (probe1.whole) return probe1.envelope ? "structural" : "ndjson";
  if (firstEnd === -1) return "structural";
  const secondStart = firstNonBlank(head, firstEnd + 1);
  const secondEnd = head.indexOf(NEWLINE, secondStart);
  if (secondStart >= head.length) return "structural";
  const probe2 = wholeValueLine(head.subarray(secondStart, secondEnd === -1 ? head.length : secondEnd));
  return probe2.whole && !probe2.envelope ? "ndjson" : "structural";
}

/**
 * Whether `head` (the first bytes of an input, after any byte order mark)
 * certainly makes `detectShape` choose NDJSON whatever follows it: its first
 * line is complete and is one whole object that is not an envelope. The
 * parallel path (`parallel.ts`) is taken only then, so it splits exactly the
 * inputs the serial path would split into lines.
 */
export function certainlyNdjson(head: Buffer): boolean {
  const start = firstNonBlank(head);
  if (start >= head.length || head[start] !== OPEN_OBJECT) return false;
  const firstEnd = head.indexOf(NEWLINE, start);
  if (firstEnd === -1) return false;
  const probe = wholeValueLine(head.subarray(start, firstEnd));
  return probe.whole && !probe.envelope;
}

/** A UTF-8 byte order mark's length at the start of `bytes` (3), or 0. */
export function byteOrderMarkLength(bytes: Buffer): number {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
}

/** How many head bytes detection wants before it decides (two lines, at most this). */
export const DETECTION_HEAD_MAX = MAX_RECORD_BYTES + 2;

/**
 * One input's record splitter: buffers the head until the shape is known, then
 * feeds every chunk to the chosen splitter.
 */
export class InputSplitter {
  private head: Buffer[] = [];
  private headBytes = 0;
  private splitter: LineSplitter | StructuralScanner | null = null;
  shape: InputShape | null = null;

  constructor(private readonly sink: RecordSink) {}

  push(chunk: Buffer): void {
    if (this.splitter !== null) {
      this.splitter.push(chunk);
      return;
    }
    this.head.push(Buffer.from(chunk));
    this.headBytes += chunk.length;
    const joined = this.head.length === 1 ? this.head[0]! : Buffer.concat(this.head, this.headBytes);
    this.head = [joined];
    if (this.headBytes >= DETECTION_HEAD_MAX || countLines(joined) >= 2) this.decide();
  }

  end(): void {
    if (this.splitter === null) this.decide();
    this.splitter!.end();
  }

  private decide(): void {
    let head = this.head.length === 0 ? Buffer.alloc(0) : this.head[0]!;
    // A UTF-8 byte order mark at the very start is not part of the first record.
    head = head.subarray(byteOrderMarkLength(head));
    this.shape = detectShape(head);
    this.splitter = this.shape === "ndjson" ? new LineSplitter(this.sink) : new StructuralScanner(this.sink);
    this.head = [];
    if (head.length > 0) this.splitter.push(head);
  }
}

/** Newlines after the first non-blank byte (detection needs two lines). */
function countLines(bytes: Buffer): number {
  let count = 0;
  let position = firstNonBlank(bytes);
  for (;;) {
    const newline = bytes.indexOf(NEWLINE, position);
    if (newline === -1) return count;
    count += 1;
    if (count >= 2) return count;
    position = newline + 1;
  }
}
