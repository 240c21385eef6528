/**
 * Compact id sets for `magnt metrics` (08 §5.2).
 *
 * Why not a `Set<string>`: at about a million event ids a string set pushes RSS
 * past 300 MB, and the command must stay within 150 MB for at least 5 million
 * distinct counted events. An id is therefore kept only as its 64-bit FNV-1a
 * fingerprint, in typed-array open-addressing tables: 8 bytes per slot, no
 * per-entry object. Two different ids collide with probability about n²/2⁶⁵
 * (≈ 7·10⁻⁷ for 5 million ids), which a count of requests can live with.
 *
 * Why 256 shards: a single table growing past a few million ids would briefly
 * hold both arrays (~100 MB); shards grow one at a time, so the transient cost of
 * a resize is 1/256 of the set.
 *
 * Why old arrays are released explicitly (`release`): a shard's array lives long
 * enough to reach V8's old generation, where a dropped array is freed only by a
 * full collection — and V8 runs one only after external memory has grown by
 * about 64 MB. Growth by 1.5× leaves about twice the live table size behind as
 * such garbage, which measured 163 MB peak RSS at 5 million ids. Detaching the
 * old buffer instead hands its memory to a throw-away young object, freed by the
 * next scavenge (a few ms later on this allocation-heavy path).
 */

/** FNV-1a 64 of a string's UTF-16 code units (ids are ASCII), as two unsigned 32-bit halves. */
export interface Fingerprint {
  hi: number;
  lo: number;
}

const FNV_OFFSET_HI = 0xcbf29ce4;
const FNV_OFFSET_LO = 0x84222325;
// FNV prime 2⁴⁰ + 0x1b3: a multiply is x·0x1b3 plus x shifted left by 40 bits.
const FNV_PRIME_LOW = 0x1b3;

/** Scratch result, so the hot path allocates nothing; copy the halves before hashing again. */
const scratch: Fingerprint = { hi: 0, lo: 0 };

/** Hashes `text` and returns the shared scratch fingerprint (valid until the next call). */
export function fnv1a64(text: string): Fingerprint {
  let hi = FNV_OFFSET_HI;
  let lo = FNV_OFFSET_LO;
  for (let index = 0; index < text.length; index += 1) {
    lo ^= text.charCodeAt(index);
    // (hi·2³² + lo) · (2⁴⁰ + 0x1b3) mod 2⁶⁴
    const loProduct = (lo >>> 0) * FNV_PRIME_LOW; // < 2⁴¹, exact in a double
    const carry = Math.floor(loProduct / 0x1_0000_0000);
    hi = (Math.imul(hi, FNV_PRIME_LOW) + carry + (lo << 8)) >>> 0;
    lo = loProduct >>> 0;
  }
  scratch.hi = hi >>> 0;
  scratch.lo = lo >>> 0;
  return scratch;
}

/** The 64-bit value as a bigint (tests and the reference implementation only). */
export function fingerprintToBigInt(fingerprint: Fingerprint): bigint {
  return (BigInt(fingerprint.hi) << 32n) | BigInt(fingerprint.lo);
}

const SHARD_BITS = 8;
const SHARDS = 1 << SHARD_BITS;
const INITIAL_SHARD_SLOTS = 64;
/**
 * A shard grows by half when it is 4/5 full, so its load stays in [0.53, 0.8]:
 * 10–15 bytes per id (the 16-byte budget of 08 §5.2 holds at every size, which
 * doubling — loads down to 0.4 — would not), and linear probes stay short.
 */
const MAX_LOAD_NUMERATOR = 4;
const MAX_LOAD_DENOMINATOR = 5;
const GROWTH_NUMERATOR = 3;
const GROWTH_DENOMINATOR = 2;
const TWO_TO_32 = 4294967296;

/**
 * Gives up `array`'s memory now rather than at V8's next full collection: the
 * transfer detaches it (its length becomes 0) and moves the memory to a buffer
 * nobody references, which the next young-generation collection frees.
 * The caller must not use `array` afterwards.
 */
export function release(array: ArrayBufferView): void {
  // Every table array is allocated here with its own (non-shared) ArrayBuffer.
  const buffer = array.buffer as ArrayBuffer;
  structuredClone(buffer, { transfer: [buffer] });
}

/** Maps a fingerprint to a home slot in [0, slots) by multiply-shift (slot counts need not be powers of two). */
const homeSlot = (hi: number, lo: number, slots: number): number => Math.floor((((lo ^ (hi << SHARD_BITS)) >>> 0) * slots) / TWO_TO_32);

interface Shard {
  /** Interleaved [hi, lo] per slot; the pair (0, 0) marks an empty slot. */
  keys: Uint32Array;
  /** Optional per-slot value (receipt times). */
  values: Float64Array | null;
  size: number;
  slots: number;
}

/**
 * A set of 64-bit fingerprints, optionally with one float value per entry
 * (`withValues`), in 256 open-addressing shards.
 */
export class FingerprintTable {
  private readonly shards: Shard[];
  private count = 0;
  private readonly withValues: boolean;
  /** Slot of the last successful `find` (for `valueAt`/`setValueAt`). */
  private lastShard: Shard | null = null;
  private lastSlot = -1;

  constructor(options: { withValues?: boolean } = {}) {
    this.withValues = options.withValues === true;
    this.shards = Array.from({ length: SHARDS }, () => this.newShard(INITIAL_SHARD_SLOTS));
  }

  /** Distinct fingerprints stored. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the typed arrays (for the bench's memory report). */
  get byteLength(): number {
    let bytes = 0;
    for (const shard of this.shards) bytes += shard.keys.byteLength + (shard.values?.byteLength ?? 0);
    return bytes;
  }

  /** Adds the fingerprint; true when it was new. `value` is stored for a new entry. */
  add(hi: number, lo: number, value = 0): boolean {
    if (hi === 0 && lo === 0) lo = 1; // (0, 0) is the empty marker
    const shard = this.shards[hi >>> (32 - SHARD_BITS)]!;
    const slots = shard.slots;
    let slot = homeSlot(hi, lo, slots);
    const keys = shard.keys;
    for (;;) {
      const h = keys[slot * 2]!;
      const l = keys[slot * 2 + 1]!;
      if (h === 0 && l === 0) break;
      if (h === hi && l === lo) {
        this.lastShard = shard;
        this.lastSlot = slot;
        return false;
      }
      slot = slot + 1 === slots ? 0 : slot + 1;
    }
    keys[slot * 2] = hi;
    keys[slot * 2 + 1] = lo;
    if (shard.values !== null) shard.values[slot] = value;
    shard.size += 1;
    this.count += 1;
    if (shard.size * MAX_LOAD_DENOMINATOR > shard.slots * MAX_LOAD_NUMERATOR) {
      this.grow(shard);
      this.lastShard = null;
    } else {
      this.lastShard = shard;
      this.lastSlot = slot;
    }
    return true;
  }

  /** Whether the fingerprint is stored; on true, `lastValue` reads its value. */
  has(hi: number, lo: number): boolean {
    if (hi === 0 && lo === 0) lo = 1;
    const shard = this.shards[hi >>> (32 - SHARD_BITS)]!;
    const slots = shard.slots;
    let slot = homeSlot(hi, lo, slots);
    const keys = shard.keys;
    for (;;) {
      const h = keys[slot * 2]!;
      const l = keys[slot * 2 + 1]!;
      if (h === 0 && l === 0) return false;
      if (h === hi && l === lo) {
        this.lastShard = shard;
        this.lastSlot = slot;
        return true;
      }
      slot = slot + 1 === slots ? 0 : slot + 1;
    }
  }

  /** The value of the entry last found by `has` or `add` (NaN when none or no values kept). */
  lastValue(): number {
    if (this.lastShard === null || this.lastShard.values === null) return Number.NaN;
    return this.lastShard.values[this.lastSlot]!;
  }

  /** Replaces the value of the entry last found by `has` or `add`. */
  setLastValue(value: number): void {
    if (this.lastShard !== null && this.lastShard.values !== null) this.lastShard.values[this.lastSlot] = value;
  }

  private newShard(slots: number): Shard {
    return {
      keys: new Uint32Array(slots * 2),
      values: this.withValues ? new Float64Array(slots) : null,
      size: 0,
      slots,
    };
  }

  private grow(shard: Shard): void {
    const oldKeys = shard.keys;
    const oldValues = shard.values;
    const oldSlots = shard.slots;
    const slots = Math.ceil((oldSlots * GROWTH_NUMERATOR) / GROWTH_DENOMINATOR);
    const keys = new Uint32Array(slots * 2);
    const values = oldValues === null ? null : new Float64Array(slots);
    for (let old = 0; old < oldSlots; old += 1) {
      const hi = oldKeys[old * 2]!;
      const lo = oldKeys[old * 2 + 1]!;
      if (hi === 0 && lo === 0) continue;
      let slot = homeSlot(hi, lo, slots);
      while (keys[slot * 2] !== 0 || keys[slot * 2 + 1] !== 0) slot = slot + 1 === slots ? 0 : slot + 1;
      keys[slot * 2] = hi;
      keys[slot * 2 + 1] = lo;
      if (values !== null) values[slot] = oldValues![old]!;
    }
    shard.keys = keys;
    shard.values = values;
    shard.slots = slots;
    release(oldKeys);
    if (oldValues !== null) release(oldValues);
  }
}

/**
 * A growable list of records of `width` float64 fields (the contributions that
 * carry a receipt: receipt fingerprint, signal fingerprint, time). Doubling a
 * Float64Array keeps it at 8 bytes per field with no per-record object.
 */
export class RecordList {
  private data: Float64Array;
  private length = 0;
  readonly width: number;

  constructor(width: number, initialRecords = 1024) {
    this.width = width;
    this.data = new Float64Array(width * initialRecords);
  }

  get size(): number {
    return this.length;
  }

  push(...fields: number[]): void {
    if ((this.length + 1) * this.width > this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      release(this.data);
      this.data = next;
    }
    const base = this.length * this.width;
    for (let index = 0; index < this.width; index += 1) this.data[base + index] = fields[index] ?? 0;
    this.length += 1;
  }

  /** Field `field` of record `index`. */
  get(index: number, field: number): number {
    return this.data[index * this.width + field]!;
  }
}
