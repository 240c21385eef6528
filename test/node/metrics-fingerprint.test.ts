/**
 * The compact id sets of `magnt metrics` (08 §5.2): FNV-1a 64 against published
 * vectors, and the open-addressing table against a plain `Set` on random ids
 * (a property test), including growth across many shard resizes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FingerprintTable, fingerprintToBigInt, fnv1a64, RecordList, release } from "../../cli/commands/metrics/fingerprint";

describe("fnv1a64", () => {
  it.each([
    ["", 0xcbf29ce484222325n],
    ["a", 0xaf63dc4c8601ec8cn],
    ["foobar", 0x85944171f73967e8n],
  ])("hashes %j like the reference", (text, expected) => {
    expect(fingerprintToBigInt(fnv1a64(text))).toBe(expected);
  });

  it("agrees with a BigInt implementation on random strings", () => {
    const reference = (text: string): bigint => {
      let hash = 0xcbf29ce484222325n;
      for (let index = 0; index < text.length; index += 1) {
        hash ^= BigInt(text.charCodeAt(index));
        hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
      }
      return hash;
    };
    fc.assert(fc.property(fc.string({ maxLength: 64 }), (text) => fingerprintToBigInt(fnv1a64(text)) === reference(text)));
  });
});

describe("FingerprintTable", () => {
  it("agrees with a Set on random ids (adds, repeats, lookups)", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.uuid(), fc.string({ maxLength: 12 })), { maxLength: 3000 }), fc.array(fc.uuid(), { maxLength: 200 }), (ids, probes) => {
        const table = new FingerprintTable();
        const set = new Set<string>();
        for (const id of ids) {
          const { hi, lo } = fnv1a64(id);
          expect(table.add(hi, lo)).toBe(!set.has(id));
          set.add(id);
        }
        expect(table.size).toBe(set.size);
        for (const id of [...ids, ...probes]) {
          const { hi, lo } = fnv1a64(id);
          expect(table.has(hi, lo)).toBe(set.has(id));
        }
      }),
      { numRuns: 60 },
    );
  });

  it("keeps its values through growth and handles the (0, 0) fingerprint", () => {
    const table = new FingerprintTable({ withValues: true });
    for (let index = 1; index <= 200_000; index += 1) table.add((index * 2654435761) >>> 0, index, index);
    expect(table.size).toBe(200_000);
    for (let index = 1; index <= 200_000; index += 997) {
      expect(table.has((index * 2654435761) >>> 0, index)).toBe(true);
      expect(table.lastValue()).toBe(index);
    }
    expect(table.add(0, 0, 5)).toBe(true);
    expect(table.add(0, 0, 6)).toBe(false);
    expect(table.has(0, 0)).toBe(true);
    // ≤ 16 bytes per id for the key table at this size (08 §5.2).
    const keysOnly = new FingerprintTable();
    for (let index = 1; index <= 200_000; index += 1) keysOnly.add((index * 2654435761) >>> 0, index);
    expect(keysOnly.byteLength / 200_000).toBeLessThanOrEqual(16);
  });
});

describe("release", () => {
  it("detaches the array, so its memory does not wait for a full collection", () => {
    const keys = new Uint32Array(1024);
    const values = new Float64Array(16);
    release(keys);
    release(values);
    expect(keys.buffer.byteLength).toBe(0);
    expect(keys.length).toBe(0);
    expect(values.length).toBe(0);
  });
});

describe("RecordList", () => {
  it("stores records across growth", () => {
    const list = new RecordList(3, 2);
    for (let index = 0; index < 1000; index += 1) list.push(index, index * 2, -index);
    expect(list.size).toBe(1000);
    expect([list.get(999, 0), list.get(999, 1), list.get(999, 2)]).toEqual([999, 1998, -999]);
  });
});
