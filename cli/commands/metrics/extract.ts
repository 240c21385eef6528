/**
 * The fast path of `magnt metrics` (08 §5.2): reads the counted fields of one
 * record straight from its bytes, without `JSON.parse` building the whole
 * wrapper (`$workers`, `$metadata`, the user agent, …) only to drop it.
 *
 * It is a complete, validating JSON reader over the record's bytes taken as
 * latin1 — the same text the fallback hands to `JSON.parse` — so it accepts
 * exactly what `JSON.parse` accepts: RFC 8259 grammar, the four whitespace
 * bytes only, no control byte inside a string, escapes `\" \\ \/ \b \f \n \r
 * \t \uXXXX` only, strict numbers, nothing after the value. On the way it
 * keeps the counted fields (`fields.ts`) of the top-level object and of its
 * last `source` member, last duplicate key winning as in `JSON.parse`, and
 * then picks the event the way 08 §5.1 does.
 *
 * It answers only when it is certain: `READ_EVENT` (the projection is filled,
 * equal to what `JSON.parse` + `projectParsed` would give) or `READ_NO_EVENT`
 * (valid JSON that carries no event). Anything else — invalid bytes, a top
 * level that is not an object, nesting deeper than it tracks — is `READ_UNSURE`
 * and the caller parses the record in full, so an oddity costs speed, never a
 * different count. Escaped strings are decoded by `JSON.parse` of the string
 * token alone (exact, and rare).
 *
 * Threat model: the bytes are an export of visitor-influenced logs. Nothing is
 * decoded except the counted fields; no input can make it loop, recurse or
 * allocate beyond the record (an explicit stack of `MAX_DEPTH` levels).
 */
import { FIELD_COUNT, FIELD_NAMES, F_EVENT_ID, OTHER, type EventFields, type FieldValue } from "./fields";

export const READ_EVENT = 0;
export const READ_NO_EVENT = 1;
export const READ_UNSURE = 2;
export type ReadResult = typeof READ_EVENT | typeof READ_NO_EVENT | typeof READ_UNSURE;

/** Deeper records are left to `JSON.parse` (they are never telemetry). */
const MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isDigit = (byte: number): boolean => byte >= ZERO && byte <= NINE;
const isHex = (byte: number): boolean => (byte >= ZERO && byte <= NINE) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66);

/** Bytes that stand for themselves inside a string: all but the quote, the backslash and control bytes. */
const PLAIN = new Uint8Array(256);
for (let byte = 0x20; byte < 256; byte += 1) if (byte !== QUOTE && byte !== BACKSLASH) PLAIN[byte] = 1;

/** Key bytes of each counted field, and of `source`. */
const FIELD_BYTES: readonly Buffer[] = FIELD_NAMES.map((name) => Buffer.from(name, "latin1"));
const SOURCE_BYTES = Buffer.from("source", "latin1");
const NO_FIELD = -1;
const SOURCE_KEY = -2;
/**
 * Key lookup by (first byte, length), which no two of these names share:
 * entry = field + 3 (`SOURCE_KEY` → 1), 0 for none; a hit is then compared in full.
 * The WebAssembly reader (wasm-reader.ts) is given this same table.
 */
const MAX_KEY_LENGTH = 31;
export const KEY_TABLE = new Uint8Array(256 * (MAX_KEY_LENGTH + 1));
for (const [field, bytes] of [[SOURCE_KEY, SOURCE_BYTES] as const, ...FIELD_BYTES.map((bytes, index) => [index, bytes] as const)]) {
  const slot = (bytes[0]! << 5) | bytes.length;
  if (KEY_TABLE[slot] !== 0 || bytes.length > MAX_KEY_LENGTH) throw new Error(`metrics key table: ${bytes.toString("latin1")} collides`);
  KEY_TABLE[slot] = field + 3;
}

/** Container kinds on the stack. */
const IN_OBJECT = 1;
const IN_ARRAY = 2;
/** Where the current object's members go: nowhere, the top level's fields, or the `source` object's. */
const COLLECT_NONE = 0;
const COLLECT_TOP = 1;
const COLLECT_SOURCE = 2;

/**
 * A reusable reader (one per aggregator): its scratch projections and stack
 * live across records, so the hot path allocates only the counted strings.
 */
export class RecordReader {
  private readonly top: EventFields = new Array<FieldValue>(FIELD_COUNT).fill(undefined);
  private readonly source: EventFields = new Array<FieldValue>(FIELD_COUNT).fill(undefined);
  private readonly kinds = new Uint8Array(MAX_DEPTH + 1);
  private readonly collects = new Uint8Array(MAX_DEPTH + 1);

  /**
   * Reads `bytes[start, end)`; on `READ_EVENT` the event's projection is
   * copied into `into`.
   *
   * One loop over the tokens, written out in full (no per-token calls but the
   * small helpers below) because it runs for every counted record: each pass
   * reads one value, then the commas and closes after it, then the next key.
   */
  read(bytes: Buffer, start: number, end: number, into: EventFields): ReadResult {
    const top = this.top;
    const source = this.source;
    const kinds = this.kinds;
    const collects = this.collects;
    for (let index = 0; index < FIELD_COUNT; index += 1) {
      top[index] = undefined;
      source[index] = undefined;
    }
    /** Whether the last `source` member of the top level is an object. */
    let sourceIsObject = false;
    let position = skipWhitespace(bytes, start, end);
    if (position >= end || bytes[position] !== OPEN_OBJECT) return READ_UNSURE;
    let depth = 0;
    /** The field the value at `position` fills (an index, SOURCE_KEY or NO_FIELD), and in which projection. */
    let field = NO_FIELD;
    let target = top;
    for (;;) {
      // ---- one value
      position = skipWhitespace(bytes, position, end);
      if (position >= end) return READ_UNSURE;
      const byte = bytes[position]!;
      let needKey = false;
      if (byte === QUOTE) {
        const close = stringClose(bytes, position, end);
        if (close === -1) return READ_UNSURE;
        if (close >= 0) {
          if (field >= 0) target[field] = latin1(bytes, position + 1, close);
          position = close + 1;
        } else {
          if (field >= 0) target[field] = JSON.parse(latin1(bytes, position, ~close + 1)) as string;
          position = ~close + 1;
        }
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (depth === MAX_DEPTH) return READ_UNSURE;
        depth += 1;
        let collect = COLLECT_NONE;
        if (byte === OPEN_OBJECT) {
          kinds[depth] = IN_OBJECT;
          if (depth === 1) collect = COLLECT_TOP;
          else if (field === SOURCE_KEY) {
            collect = COLLECT_SOURCE;
            sourceIsObject = true;
          }
        } else {
          kinds[depth] = IN_ARRAY;
        }
        if (field >= 0) target[field] = OTHER;
        collects[depth] = collect;
        field = NO_FIELD;
        position = skipWhitespace(bytes, position + 1, end);
        if (position >= end) return READ_UNSURE;
        if (byte === OPEN_OBJECT) {
          if (bytes[position] === CLOSE_OBJECT) {
            depth -= 1;
            position += 1;
          } else needKey = true;
        } else if (bytes[position] === CLOSE_ARRAY) {
          depth -= 1;
          position += 1;
        } else continue; // the first element
      } else if (byte === 0x74 /* t */) {
        if (position + 4 > end || bytes[position + 1] !== 0x72 || bytes[position + 2] !== 0x75 || bytes[position + 3] !== 0x65) return READ_UNSURE;
        if (field >= 0) target[field] = true;
        position += 4;
      } else if (byte === 0x66 /* f */) {
        if (position + 5 > end || bytes[position + 1] !== 0x61 || bytes[position + 2] !== 0x6c || bytes[position + 3] !== 0x73 || bytes[position + 4] !== 0x65) return READ_UNSURE;
        if (field >= 0) target[field] = false;
        position += 5;
      } else if (byte === 0x6e /* n */) {
        if (position + 4 > end || bytes[position + 1] !== 0x75 || bytes[position + 2] !== 0x6c || bytes[position + 3] !== 0x6c) return READ_UNSURE;
        if (field >= 0) target[field] = null;
        position += 4;
      } else {
        const after = numberEnd(bytes, position, end);
        if (after === -1) return READ_UNSURE;
        if (field >= 0) target[field] = OTHER;
        position = after;
      }

      // ---- what follows a value: closes, then a comma
      if (!needKey) {
        field = NO_FIELD;
        for (;;) {
          if (depth === 0) {
            if (skipWhitespace(bytes, position, end) !== end) return READ_UNSURE;
            let event: EventFields;
            if (typeof top[F_EVENT_ID] === "string") event = top;
            else if (sourceIsObject && typeof source[F_EVENT_ID] === "string") event = source;
            else return READ_NO_EVENT;
            for (let index = 0; index < FIELD_COUNT; index += 1) into[index] = event[index];
            return READ_EVENT;
          }
          position = skipWhitespace(bytes, position, end);
          if (position >= end) return READ_UNSURE;
          const next = bytes[position]!;
          if (next === COMMA) {
            position += 1;
            break;
          }
          if (next !== (kinds[depth] === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return READ_UNSURE;
          depth -= 1;
          position += 1;
        }
        if (kinds[depth] === IN_ARRAY) continue; // the next element
      }

      // ---- a key and its colon
      position = skipWhitespace(bytes, position, end);
      if (position >= end || bytes[position] !== QUOTE) return READ_UNSURE;
      const close = stringClose(bytes, position, end);
      if (close === -1) return READ_UNSURE;
      const keyEnd = close >= 0 ? close : ~close;
      const collect = collects[depth]!;
      if (collect !== COLLECT_NONE) {
        field = close >= 0 ? fieldOfKey(bytes, position + 1, keyEnd) : fieldOfName(JSON.parse(latin1(bytes, position, keyEnd + 1)) as string);
        if (field === SOURCE_KEY) {
          if (collect === COLLECT_TOP) {
            // A later `source` member replaces an earlier one, as in JSON.parse.
            for (let index = 0; index < FIELD_COUNT; index += 1) source[index] = undefined;
            sourceIsObject = false;
          } else field = NO_FIELD;
        }
        target = collect === COLLECT_TOP ? top : source;
      }
      position = skipWhitespace(bytes, keyEnd + 1, end);
      if (position >= end || bytes[position] !== COLON) return READ_UNSURE;
      position += 1;
    }
  }
}

function latin1(bytes: Buffer, start: number, end: number): string {
  return (bytes as Buffer & { latin1Slice(start: number, end: number): string }).latin1Slice(start, end);
}

function skipWhitespace(bytes: Buffer, position: number, end: number): number {
  while (position < end) {
    const byte = bytes[position]!;
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
    position += 1;
  }
  return position;
}

/**
 * The closing quote of the string token whose opening quote is at `position`:
 * its index when the string has no escape, its bitwise complement (≤ -2) when
 * it has one, -1 when the token is invalid (a control byte, a bad escape, no end).
 */
function stringClose(bytes: Buffer, position: number, end: number): number {
  let index = position + 1;
  let escaped = false;
  for (;;) {
    while (index < end && PLAIN[bytes[index]!] === 1) index += 1;
    if (index >= end) return -1;
    const byte = bytes[index]!;
    if (byte === QUOTE) {
      return escaped ? ~index : index;
    } else if (byte === BACKSLASH) {
      escaped = true;
      if (index + 1 >= end) return -1;
      const next = bytes[index + 1]!;
      if (next === 0x75 /* u */) {
        if (index + 6 > end || !isHex(bytes[index + 2]!) || !isHex(bytes[index + 3]!) || !isHex(bytes[index + 4]!) || !isHex(bytes[index + 5]!)) return -1;
        index += 6;
      } else if (next === QUOTE || next === BACKSLASH || next === 0x2f || next === 0x62 || next === 0x66 || next === 0x6e || next === 0x72 || next === 0x74) {
        index += 2;
      } else {
        return -1;
      }
    } else {
      return -1; // a control byte
    }
  }
}

/** The position after the JSON number starting at `position`, or -1. */
function numberEnd(bytes: Buffer, position: number, end: number): number {
  let index = position;
  if (bytes[index] === MINUS) index += 1;
  if (index >= end) return -1;
  if (bytes[index] === ZERO) index += 1;
  else if (isDigit(bytes[index]!)) {
    index += 1;
    while (index < end && isDigit(bytes[index]!)) index += 1;
  } else return -1;
  if (index < end && bytes[index] === DOT) {
    index += 1;
    if (index >= end || !isDigit(bytes[index]!)) return -1;
    while (index < end && isDigit(bytes[index]!)) index += 1;
  }
  if (index < end && (bytes[index]! | 0x20) === 0x65 /* e, E */) {
    index += 1;
    if (index < end && (bytes[index] === PLUS || bytes[index] === MINUS)) index += 1;
    if (index >= end || !isDigit(bytes[index]!)) return -1;
    while (index < end && isDigit(bytes[index]!)) index += 1;
  }
  return index;
}

/** The field an unescaped key `bytes[start, end)` names: an index, SOURCE_KEY or NO_FIELD. */
function fieldOfKey(bytes: Buffer, start: number, end: number): number {
  const length = end - start;
  if (length === 0 || length > MAX_KEY_LENGTH) return NO_FIELD;
  const entry = KEY_TABLE[(bytes[start]! << 5) | length]!;
  if (entry === 0) return NO_FIELD;
  const field = entry - 3;
  const name = field === SOURCE_KEY ? SOURCE_BYTES : FIELD_BYTES[field]!;
  for (let index = 1; index < length; index += 1) if (bytes[start + index] !== name[index]) return NO_FIELD;
  return field;
}

function fieldOfName(name: string): number {
  if (name === "source") return SOURCE_KEY;
  const index = (FIELD_NAMES as readonly string[]).indexOf(name);
  return index === -1 ? NO_FIELD : index;
}
