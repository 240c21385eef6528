/**
 * The byte-level reader of `magnt metrics` run as WebAssembly (decision 223):
 * `wasm/reader.ts` is `extract.ts`'s `RecordReader` in AssemblyScript with
 * the string runs scanned 16 bytes at a time. It reports where the counted
 * fields lie; the strings are made here, from the caller's buffer, exactly
 * as the JS reader makes them (latin1, or `JSON.parse` of an escaped token).
 *
 * The contract is the JS reader's (`read`, `READ_EVENT` / `READ_NO_EVENT` /
 * `READ_UNSURE`), and so is every answer: what the module is not certain of
 * (an escaped key in a collected object, anything invalid) and every record
 * too long for its memory is handed to the JS reader, which reads it or is
 * unsure itself, and then the caller parses it in full. The property tests
 * of the JS reader run against this one too.
 *
 * Why: the record reader was about half of the CPU time of `magnt metrics`,
 * most of it in the bytes of strings; the module reads counted records about
 * 2.5 times as fast. Each reader has its own instance (192 KiB of memory),
 * so the main thread and the worker never share one.
 */
import { KEY_TABLE, READ_EVENT, READ_NO_EVENT, RecordReader, type ReadResult } from "./extract";
import { FIELD_COUNT, FIELD_NAMES, OTHER, type EventFields, type FieldValue } from "./fields";
import { READER_WASM_BASE64 } from "./wasm/reader.generated";

/** The module's memory layout (wasm/reader.ts). */
const KEY_TABLE_AT = 0;
const NAMES_TABLE = 8192;
const NAME_BYTES = 8448;
const TOP = 9216;
const SOURCE = 9472;
const INPUT = 16384;
/** Bytes after a record that the module's 16-byte string scan may read. */
const SCAN_PADDING = 16;

/** The module's answers beyond the JS reader's three: the event is the `source` object's. */
const READ_EVENT_SOURCE = 3;

/** Entry kinds (wasm/reader.ts). */
const K_STRING = 1;
const K_ESCAPED = 2;
const K_OTHER = 3;
const K_TRUE = 4;
const K_FALSE = 5;
const K_NULL = 6;

interface ReaderExports {
  readonly memory: { readonly buffer: ArrayBuffer };
  read(length: number): number;
  fieldCount(): number;
}

/** The part of the WebAssembly JS API used here: Node has it, the CLI's type libraries do not declare it. */
interface WebAssemblyApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

let compiled: object | undefined;

/** Compiled once per thread, on first use (about 3 KB). */
function readerModule(): object {
  compiled ??= new wasm.Module(Buffer.from(READER_WASM_BASE64, "base64"));
  return compiled;
}

type Latin1Buffer = Buffer & { latin1Slice(start: number, end: number): string };

export class WasmRecordReader {
  private readonly exports: ReaderExports;
  /** The module's memory as bytes and as entries (fixed size: the module never grows it). */
  private readonly memory: Buffer;
  private readonly entries: Int32Array;
  /** Records longer than this go to the JS reader. */
  private readonly capacity: number;
  private readonly fallback = new RecordReader();
  /** Records the module answered, and records handed to the JS reader (tests show the module does the work). */
  readonly counts = { module: 0, fallback: 0 };

  constructor() {
    const instance = new wasm.Instance(readerModule(), {
      env: {
        abort: () => {
          throw new Error("metrics: the WebAssembly reader aborted");
        },
      },
    });
    this.exports = instance.exports as unknown as ReaderExports;
    if (this.exports.fieldCount() !== FIELD_COUNT) {
      throw new Error(`metrics: the WebAssembly reader reads ${this.exports.fieldCount()} fields, fields.ts has ${FIELD_COUNT}; update wasm/reader.ts and run npm run build:metrics-wasm`);
    }
    const buffer = this.exports.memory.buffer;
    this.memory = Buffer.from(buffer);
    this.entries = new Int32Array(buffer);
    this.capacity = buffer.byteLength - INPUT - SCAN_PADDING;
    this.writeKeyTables();
  }

  /**
   * The key lookup the module matches keys with: extract.ts's table as it is (built, and checked for
   * collisions, there), and each name's bytes for the full comparison, from `fields.ts`.
   */
  private writeKeyTables(): void {
    if (KEY_TABLE.length !== NAMES_TABLE - KEY_TABLE_AT) throw new Error("metrics: the WebAssembly reader's key table has another size than extract.ts's");
    this.memory.set(KEY_TABLE, KEY_TABLE_AT);
    const view = new DataView(this.memory.buffer);
    let at = NAME_BYTES;
    [...FIELD_NAMES, "source"].forEach((name, index) => {
      const written = this.memory.write(name, at, "latin1");
      view.setUint32(NAMES_TABLE + index * 8, at, true);
      view.setUint32(NAMES_TABLE + index * 8 + 4, written, true);
      at += written;
    });
  }

  /** As `RecordReader.read`: reads `bytes[start, end)`; on `READ_EVENT` the event's projection is in `into`. */
  read(bytes: Buffer, start: number, end: number, into: EventFields): ReadResult {
    const length = end - start;
    if (length > this.capacity) return this.handOver(bytes, start, end, into);
    bytes.copy(this.memory, INPUT, start, end);
    const result = this.exports.read(length);
    if (result !== READ_EVENT && result !== READ_EVENT_SOURCE && result !== READ_NO_EVENT) return this.handOver(bytes, start, end, into);
    this.counts.module += 1;
    if (result === READ_NO_EVENT) return READ_NO_EVENT;
    const entries = this.entries;
    let entry = (result === READ_EVENT ? TOP : SOURCE) >> 2;
    for (let field = 0; field < FIELD_COUNT; field += 1, entry += 3) {
      into[field] = fieldValue(bytes as Latin1Buffer, entries[entry]!, start + entries[entry + 1]!, start + entries[entry + 2]!);
    }
    return READ_EVENT;
  }

  private handOver(bytes: Buffer, start: number, end: number, into: EventFields): ReadResult {
    this.counts.fallback += 1;
    return this.fallback.read(bytes, start, end, into);
  }
}

/** One entry's value, made from the caller's bytes `[from, to)` as the JS reader makes it. */
function fieldValue(bytes: Latin1Buffer, kind: number, from: number, to: number): FieldValue {
  switch (kind) {
    case K_STRING:
      return bytes.latin1Slice(from, to);
    case K_ESCAPED:
      return JSON.parse(bytes.latin1Slice(from, to)) as string;
    case K_OTHER:
      return OTHER;
    case K_TRUE:
      return true;
    case K_FALSE:
      return false;
    case K_NULL:
      return null;
    default:
      return undefined;
  }
}
