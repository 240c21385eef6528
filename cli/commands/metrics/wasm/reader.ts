/**
 * The byte-level reader of `magnt metrics` in AssemblyScript (compiled to
 * WebAssembly by `npm run build:metrics-wasm` into `reader.generated.ts`; a
 * test compiles it again and compares). It is `extract.ts`'s `RecordReader`,
 * statement for statement, with one difference that makes it faster: the
 * bytes of a string are scanned 16 at a time (SIMD) for the quote, backslash
 * or control byte that ends the run. It never decodes anything: it reports,
 * for the top-level object and its last `source` object, where each counted
 * field's value lies and what it is, and the caller (`wasm-reader.ts`) makes
 * the strings from its own buffer.
 *
 * It answers READ_UNSURE for everything it does not read with certainty,
 * including an escaped key in a collected object (`extract.ts` decodes those;
 * the caller then asks it), so it is never more permissive than the JS reader.
 *
 * Memory (bytes): [0, 8192) the key table (first byte << 5 | length → field +
 * 3, 1 for `source`, 0 for none); [8192, 8336) the names table (u32 address,
 * u32 length per field, `source` last); [8448, 9216) the name bytes, all
 * written by the caller from `fields.ts`; [9216, 9420) the top-level object's
 * entries and [9472, 9676) the source object's (per field: kind, start, end as
 * i32); [9728, 9793) and [9856, 9921) the container stack; the record from
 * INPUT on, followed by at least 16 bytes the string scan may read.
 */

const KEY_TABLE: usize = 0;
const NAMES_TABLE: usize = 8192;
const TOP: usize = 9216;
const SOURCE: usize = 9472;
const KINDS: usize = 9728;
const COLLECTS: usize = 9856;
export const INPUT: usize = 16384;

/** fields.ts's FIELD_COUNT: the caller refuses a module built for another count (`fieldCount`). */
const FIELD_COUNT: i32 = 17;
const SOURCE_INDEX: i32 = FIELD_COUNT; // names table slot of "source"
const MAX_KEY_LENGTH: i32 = 31;
const MAX_DEPTH: i32 = 64;

const READ_EVENT_TOP: i32 = 0;
const READ_NO_EVENT: i32 = 1;
const READ_UNSURE: i32 = 2;
const READ_EVENT_SOURCE: i32 = 3;

const K_ABSENT: i32 = 0;
const K_STRING: i32 = 1;
const K_ESCAPED: i32 = 2;
const K_OTHER: i32 = 3;
const K_TRUE: i32 = 4;
const K_FALSE: i32 = 5;
const K_NULL: i32 = 6;

const NO_FIELD: i32 = -1;
const SOURCE_KEY: i32 = -2;

const IN_OBJECT: u8 = 1;
const IN_ARRAY: u8 = 2;
const COLLECT_NONE: u8 = 0;
const COLLECT_TOP: u8 = 1;
const COLLECT_SOURCE: u8 = 2;

@inline function at(position: i32): i32 {
  return <i32>load<u8>(INPUT + <usize>position);
}

@inline function skipWhitespace(position: i32, end: i32): i32 {
  while (position < end) {
    const byte = at(position);
    if (byte != 0x20 && byte != 0x0a && byte != 0x0d && byte != 0x09) break;
    position += 1;
  }
  return position;
}

@inline function isHex(byte: i32): bool {
  return (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66);
}

// Result of stringClose: the closing quote's index (≥ 0), its complement when escaped (≤ -2), -1 invalid.
function stringClose(position: i32, end: i32): i32 {
  let index = position + 1;
  let escaped = false;
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  for (;;) {
    // 16 bytes at a time: the first quote, backslash or control byte (the input has 16 bytes of padding).
    for (;;) {
      if (index >= end) return -1;
      const chunk = v128.load(INPUT + <usize>index);
      const special = v128.or(v128.or(i8x16.eq(chunk, quote), i8x16.eq(chunk, backslash)), i8x16.lt_u(chunk, space));
      const mask = i8x16.bitmask(special);
      if (mask == 0) {
        index += 16;
        continue;
      }
      index += ctz<i32>(mask);
      break;
    }
    if (index >= end) return -1;
    const byte = at(index);
    if (byte == 0x22) return escaped ? ~index : index;
    if (byte == 0x5c) {
      escaped = true;
      if (index + 1 >= end) return -1;
      const next = at(index + 1);
      if (next == 0x75) {
        if (index + 6 > end || !isHex(at(index + 2)) || !isHex(at(index + 3)) || !isHex(at(index + 4)) || !isHex(at(index + 5))) return -1;
        index += 6;
      } else if (next == 0x22 || next == 0x5c || next == 0x2f || next == 0x62 || next == 0x66 || next == 0x6e || next == 0x72 || next == 0x74) {
        index += 2;
      } else return -1;
    } else return -1; // a control byte
  }
  return -1;
}

function numberEnd(position: i32, end: i32): i32 {
  let index = position;
  if (at(index) == 0x2d) index += 1;
  if (index >= end) return -1;
  let byte = at(index);
  if (byte == 0x30) index += 1;
  else if (byte >= 0x31 && byte <= 0x39) {
    index += 1;
    while (index < end && at(index) >= 0x30 && at(index) <= 0x39) index += 1;
  } else return -1;
  if (index < end && at(index) == 0x2e) {
    index += 1;
    if (index >= end || at(index) < 0x30 || at(index) > 0x39) return -1;
    while (index < end && at(index) >= 0x30 && at(index) <= 0x39) index += 1;
  }
  if (index < end && (at(index) | 0x20) == 0x65) {
    index += 1;
    if (index < end && (at(index) == 0x2b || at(index) == 0x2d)) index += 1;
    if (index >= end || at(index) < 0x30 || at(index) > 0x39) return -1;
    while (index < end && at(index) >= 0x30 && at(index) <= 0x39) index += 1;
  }
  return index;
}

function fieldOfKey(start: i32, end: i32): i32 {
  const length = end - start;
  if (length == 0 || length > MAX_KEY_LENGTH) return NO_FIELD;
  const entry = <i32>load<u8>(KEY_TABLE + <usize>((at(start) << 5) | length));
  if (entry == 0) return NO_FIELD;
  const field = entry - 3;
  const slot = field == SOURCE_KEY ? SOURCE_INDEX : field;
  const name = <usize>load<u32>(NAMES_TABLE + <usize>slot * 8);
  for (let index = 1; index < length; index += 1) if (at(start + index) != <i32>load<u8>(name + <usize>index)) return NO_FIELD;
  return field;
}

@inline function setEntry(target: usize, field: i32, kind: i32, start: i32, end: i32): void {
  const slot = target + <usize>field * 12;
  store<i32>(slot, kind);
  store<i32>(slot, start, 4);
  store<i32>(slot, end, 8);
}

function clear(target: usize): void {
  memory.fill(target, 0, <usize>FIELD_COUNT * 12);
}

export function fieldCount(): i32 {
  return FIELD_COUNT;
}

/** Reads the record in [INPUT, INPUT + length). */
export function read(length: i32): i32 {
  const end = length;
  clear(TOP);
  clear(SOURCE);
  let sourceIsObject = false;
  let position = skipWhitespace(0, end);
  if (position >= end || at(position) != 0x7b) return READ_UNSURE;
  let depth = 0;
  let field = NO_FIELD;
  let target = TOP;
  for (;;) {
    // ---- one value
    position = skipWhitespace(position, end);
    if (position >= end) return READ_UNSURE;
    const byte = at(position);
    let needKey = false;
    if (byte == 0x22) {
      const close = stringClose(position, end);
      if (close == -1) return READ_UNSURE;
      if (close >= 0) {
        if (field >= 0) setEntry(target, field, K_STRING, position + 1, close);
        position = close + 1;
      } else {
        if (field >= 0) setEntry(target, field, K_ESCAPED, position, ~close + 1);
        position = ~close + 1;
      }
    } else if (byte == 0x7b || byte == 0x5b) {
      if (depth == MAX_DEPTH) return READ_UNSURE;
      depth += 1;
      let collect = COLLECT_NONE;
      if (byte == 0x7b) {
        store<u8>(KINDS + <usize>depth, IN_OBJECT);
        if (depth == 1) collect = COLLECT_TOP;
        else if (field == SOURCE_KEY) {
          collect = COLLECT_SOURCE;
          sourceIsObject = true;
        }
      } else {
        store<u8>(KINDS + <usize>depth, IN_ARRAY);
      }
      if (field >= 0) setEntry(target, field, K_OTHER, 0, 0);
      store<u8>(COLLECTS + <usize>depth, collect);
      field = NO_FIELD;
      position = skipWhitespace(position + 1, end);
      if (position >= end) return READ_UNSURE;
      if (byte == 0x7b) {
        if (at(position) == 0x7d) {
          depth -= 1;
          position += 1;
        } else needKey = true;
      } else if (at(position) == 0x5d) {
        depth -= 1;
        position += 1;
      } else continue; // the first element
    } else if (byte == 0x74) {
      if (position + 4 > end || at(position + 1) != 0x72 || at(position + 2) != 0x75 || at(position + 3) != 0x65) return READ_UNSURE;
      if (field >= 0) setEntry(target, field, K_TRUE, 0, 0);
      position += 4;
    } else if (byte == 0x66) {
      if (position + 5 > end || at(position + 1) != 0x61 || at(position + 2) != 0x6c || at(position + 3) != 0x73 || at(position + 4) != 0x65) return READ_UNSURE;
      if (field >= 0) setEntry(target, field, K_FALSE, 0, 0);
      position += 5;
    } else if (byte == 0x6e) {
      if (position + 4 > end || at(position + 1) != 0x75 || at(position + 2) != 0x6c || at(position + 3) != 0x6c) return READ_UNSURE;
      if (field >= 0) setEntry(target, field, K_NULL, 0, 0);
      position += 4;
    } else {
      const after = numberEnd(position, end);
      if (after == -1) return READ_UNSURE;
      if (field >= 0) setEntry(target, field, K_OTHER, 0, 0);
      position = after;
    }

    // ---- what follows a value: closes, then a comma
    if (!needKey) {
      field = NO_FIELD;
      for (;;) {
        if (depth == 0) {
          if (skipWhitespace(position, end) != end) return READ_UNSURE;
          // event_id (field 0) a string: top wins, then the last source object's.
          const topId = load<i32>(TOP);
          if (topId == K_STRING || topId == K_ESCAPED) return READ_EVENT_TOP;
          const sourceId = load<i32>(SOURCE);
          if (sourceIsObject && (sourceId == K_STRING || sourceId == K_ESCAPED)) return READ_EVENT_SOURCE;
          return READ_NO_EVENT;
        }
        position = skipWhitespace(position, end);
        if (position >= end) return READ_UNSURE;
        const next = at(position);
        if (next == 0x2c) {
          position += 1;
          break;
        }
        if (next != (load<u8>(KINDS + <usize>depth) == IN_OBJECT ? 0x7d : 0x5d)) return READ_UNSURE;
        depth -= 1;
        position += 1;
      }
      if (load<u8>(KINDS + <usize>depth) == IN_ARRAY) continue; // the next element
    }

    // ---- a key and its colon
    position = skipWhitespace(position, end);
    if (position >= end || at(position) != 0x22) return READ_UNSURE;
    const close = stringClose(position, end);
    if (close == -1) return READ_UNSURE;
    const keyEnd = close >= 0 ? close : ~close;
    const collect = load<u8>(COLLECTS + <usize>depth);
    if (collect != COLLECT_NONE) {
      // An escaped key in a collected object is left to JSON.parse (the caller parses the record).
      if (close < 0) return READ_UNSURE;
      field = fieldOfKey(position + 1, keyEnd);
      if (field == SOURCE_KEY) {
        if (collect == COLLECT_TOP) {
          clear(SOURCE);
          sourceIsObject = false;
        } else field = NO_FIELD;
      }
      target = collect == COLLECT_TOP ? TOP : SOURCE;
    }
    position = skipWhitespace(keyEnd + 1, end);
    if (position >= end || at(position) != 0x3a) return READ_UNSURE;
    position += 1;
  }
  return READ_UNSURE;
}
