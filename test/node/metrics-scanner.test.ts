/**
 * The record scanner of `magnt metrics` (08 §5.1, §5.2): every shape is cut
 * into the same records whatever the chunk boundaries (down to one byte), and
 * the shape detection picks the line splitter only when the first line is a
 * whole record.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { detectShape, InputSplitter, MAX_RECORD_BYTES, type RecordSink } from "../../cli/commands/metrics/scanner";

/** Collects records as strings ("<oversized>" for skipped ones). */
function collect(input: Buffer, chunkSizes: number[]): string[] {
  const records: string[] = [];
  const sink: RecordSink = {
    newChunk: () => undefined,
    record: (chunk, start, end) => records.push(chunk.toString("utf8", start, end)),
    isolatedRecord: (bytes) => records.push(bytes.toString("utf8")),
    oversized: () => records.push("<oversized>"),
  };
  const splitter = new InputSplitter(sink);
  let position = 0;
  let turn = 0;
  while (position < input.length) {
    const size = chunkSizes[turn % chunkSizes.length]!;
    // A reused buffer, as the file reader does: the scanner must copy what it keeps.
    const chunk = Buffer.from(input.subarray(position, position + size));
    splitter.push(chunk);
    chunk.fill(0x21);
    position += size;
    turn += 1;
  }
  splitter.end();
  return records;
}

const records = [
  { event_id: "a", text: 'quotes " and \\ backslashes, {braces} [brackets]', n: 1 },
  { source: { event_id: "b", nested: { result: { events: { events: [1, 2] } } } } },
  { event_id: "c", unicode: "Привет 👋 \u2028" },
];

describe("InputSplitter", () => {
  const shapes: Record<string, string> = {
    ndjson: records.map((record) => JSON.stringify(record)).join("\n") + "\n",
    "ndjson without final newline, CRLF": records.map((record) => JSON.stringify(record)).join("\r\n"),
    array: JSON.stringify(records, null, 2),
    "compact array": JSON.stringify(records),
    envelope: JSON.stringify({ success: true, errors: [{ result: 1 }], result: { statistics: {}, events: { count: 3, events: records } } }, null, 2),
    "compact envelope": JSON.stringify({ result: { events: { events: records } } }),
    "pretty single records": records.map((record) => JSON.stringify(record, null, 2)).join("\n"),
  };

  for (const [name, text] of Object.entries(shapes)) {
    it(`cuts the same records out of ${name} at any chunk boundaries`, () => {
      const expected = records.map((record) => JSON.stringify(record));
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }), (sizes) => {
          const cut = collect(Buffer.from(text), sizes).map((record) => JSON.stringify(JSON.parse(record)));
          expect(cut).toEqual(expected);
        }),
        { numRuns: 40 },
      );
      expect(collect(Buffer.from(text), [1]).map((record) => JSON.stringify(JSON.parse(record)))).toEqual(expected);
    });
  }

  it("skips a byte order mark", () => {
    expect(collect(Buffer.from(`\ufeff${JSON.stringify(records[0])}\n`), [3])).toEqual([JSON.stringify(records[0])]);
  });

  it("turns records over 1 MiB into oversized markers, in lines and in arrays, across chunks", () => {
    const big = JSON.stringify({ event_id: "x", pad: "y".repeat(MAX_RECORD_BYTES) });
    const small = JSON.stringify(records[0]);
    expect(collect(Buffer.from(`${small}\n${big}\n${small}\n`), [4096, 1 << 20])).toEqual([small, "<oversized>", small]);
    expect(collect(Buffer.from(`[${small},${big},${small}]`), [1 << 16])).toEqual([small, "<oversized>", small]);
    // Exactly 1 MiB is still read.
    const limit = `"${"z".repeat(MAX_RECORD_BYTES - 2)}"`;
    expect(collect(Buffer.from(`${small}\n${limit}\n`), [1 << 18])).toEqual([small, limit]);
  });

  it("keeps going after junk lines in NDJSON and at the top level of a scanned file", () => {
    const ndjson = `${JSON.stringify(records[0])}\nnot json\n{"broken":\n${JSON.stringify(records[2])}\n`;
    expect(collect(Buffer.from(ndjson), [5])).toEqual([JSON.stringify(records[0]), "not json", '{"broken":', JSON.stringify(records[2])]);
  });
});

describe("detectShape", () => {
  it.each([
    ['{"a":1}\n{"a":2}\n', "ndjson"],
    ['{"a":\n  1}\n', "structural"],
    ["[\n]", "structural"],
    ['{"result":{"events":{"events":[]}}}\n', "structural"],
    ['{"trunc\n{"a":2}\n', "ndjson"],
    ["garbage\n{}\n", "ndjson"],
    ["", "ndjson"],
  ])("%j → %s", (text, shape) => {
    expect(detectShape(Buffer.from(text))).toBe(shape);
  });
});
