/**
 * The byte-level readers of `magnt metrics` (cli/commands/metrics/extract.ts,
 * and the same reader as WebAssembly, wasm-reader.ts)
 * against `JSON.parse` (08 §5.2, issue 21): on generated records — plain
 * telemetry wrappers, bare events, escaped keys and values, duplicate keys, a
 * repeated or nested `source`, every number form, odd whitespace, bytes above
 * 0x7f — and on the same records with bytes flipped, inserted or deleted, the
 * reader must either say it is unsure (the caller then parses in full) or give
 * exactly what `JSON.parse` + `projectParsed` give: the same event or the same
 * "no event", never a record `JSON.parse` rejects. And whole summaries
 * counted through the fast path must equal those of the full parse.
 *
 * Without the first property a reader that always said "unsure" would pass,
 * so the plain generated records must be read with certainty.
 *
 * Runs per property: FUZZ_RUNS (default 200; `npm run test:fuzz` sets 2000).
 */
import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { READ_EVENT, READ_NO_EVENT, READ_UNSURE, RecordReader, type ReadResult } from "../../cli/commands/metrics/extract";
import { FIELD_NAMES, newFields, projectParsed, type EventFields } from "../../cli/commands/metrics/fields";
import { summarise } from "../../cli/commands/metrics/index";
import { stdinInput } from "../../cli/commands/metrics/sources";
import { WasmRecordReader } from "../../cli/commands/metrics/wasm-reader";

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 200) || 200;
const FUZZ_SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const parameters = (scale = 1) => ({ numRuns: FUZZ_RUNS * scale, ...(FUZZ_SEED === undefined ? {} : { seed: FUZZ_SEED }) });

// ---------------------------------------------------------------- a JSON writer with the freedoms JSON allows

/** A JSON value whose objects are member lists, so a key may repeat. */
type Tree = { string: string } | { raw: string } | { array: Tree[] } | { members: Array<[string, Tree]> };

const WHITESPACE = [" ", "\t", "\r", "\n"] as const;

/** Writes a string token, escaping some characters that need no escape. */
function stringToken(text: string, escapes: boolean[]): string {
  let out = '"';
  let index = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const escape = escapes[index++ % Math.max(1, escapes.length)] === true;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else if (escape && code <= 0xffff) out += char === "/" ? "\\/" : `\\u${code.toString(16).padStart(4, "0")}`;
    else out += char;
  }
  return `${out}"`;
}

function write(tree: Tree, style: Style, counter = { n: 0 }): string {
  const ws = () => {
    const pick = style.space[counter.n++ % Math.max(1, style.space.length)]!;
    return pick < WHITESPACE.length ? WHITESPACE[pick]! : "";
  };
  if ("string" in tree) return stringToken(tree.string, style.escapes);
  if ("raw" in tree) return tree.raw;
  if ("array" in tree) return `[${ws()}${tree.array.map((item) => `${write(item, style, counter)}${ws()}`).join(`,${ws()}`)}]`;
  return `{${ws()}${tree.members.map(([key, value]) => `${stringToken(key, style.escapes)}${ws()}:${ws()}${write(value, style, counter)}${ws()}`).join(`,${ws()}`)}}`;
}

const NUMBERS = ["0", "-0", "12", "-7", "3.25", "1e5", "2E-3", "-0.5e+10", "123456789012345678901234567890"];
const COUNTED = ["mcp_request", "mcp_card", "a2a_request", "a2a_card"];

const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom("tools/list", "tools/call", "valid", "accepted", "no_relevant_experience", "é☃", "\u0000\u001f", "a\\b\"c") },
);
const scalar: fc.Arbitrary<Tree> = fc.oneof(
  text.map((value) => ({ string: value })),
  fc.constantFrom(...NUMBERS, "true", "false", "null").map((raw) => ({ raw })),
);
const anyTree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("tree"), { maxLength: 3 }).map((array) => ({ array })),
    fc.array(fc.tuple(fc.oneof(text, fc.constantFrom(...FIELD_NAMES, "source")), tie("tree")), { maxLength: 3 }).map((members) => ({ members })),
  ),
})).tree;

/** A field value: mostly what telemetry writes, sometimes anything. */
function fieldValue(name: string): fc.Arbitrary<Tree> {
  const typical: Record<string, fc.Arbitrary<Tree>> = {
    event_id: fc.uuid().map((id) => ({ string: id })),
    event_type: fc.constantFrom(...COUNTED, "http", "scheduled").map((value) => ({ string: value })),
    time: fc.date({ min: new Date("2026-01-01T00:00:00Z"), max: new Date("2026-12-31T00:00:00Z"), noInvalidDate: true }).map((date) => ({ string: date.toISOString() })),
  };
  return fc.oneof({ weight: 3, arbitrary: typical[name] ?? scalar }, { weight: 1, arbitrary: anyTree });
}

/** An event: the counted fields (some missing, some repeated) among other members. */
const eventTree: fc.Arbitrary<Tree> = fc
  .tuple(
    fc.subarray([...FIELD_NAMES], { minLength: 0 }),
    fc.array(fc.constantFrom(...FIELD_NAMES), { maxLength: 2 }),
    fc.array(fc.tuple(text, anyTree), { maxLength: 3 }),
  )
  .chain(([names, repeated, others]) =>
    fc.tuple(...[...names, ...repeated].map((name) => fieldValue(name).map((value) => [name, value] as [string, Tree]))).chain((fields) =>
      fc.shuffledSubarray([...fields, ...others], { minLength: fields.length + others.length }).map((members) => ({ members })),
    ),
  );

/** A record: a wrapper with the event under `source`, a bare event, or something else. */
const recordTree: fc.Arbitrary<Tree> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(eventTree, fc.array(fc.tuple(text, anyTree), { maxLength: 2 })).map(([event, siblings]) => ({ members: [["source", event], ["$workers", { members: [["scriptName", { string: "magnt-observer" }]] }], ...siblings] as Array<[string, Tree]> })) },
  { weight: 2, arbitrary: eventTree },
  { weight: 1, arbitrary: fc.tuple(eventTree, eventTree).map(([first, second]) => ({ members: [["source", first], ["source", second]] as Array<[string, Tree]> })) },
  { weight: 1, arbitrary: fc.tuple(eventTree, fc.oneof(anyTree, eventTree)).map(([event, source]) => ({ members: [...(event as { members: Array<[string, Tree]> }).members, ["source", source]] as Array<[string, Tree]> })) },
  { weight: 1, arbitrary: anyTree },
);

/** How a tree is written: whitespace picks (≥ 4: none) and which characters to escape needlessly. */
interface Style {
  space: number[];
  escapes: boolean[];
}
const style: fc.Arbitrary<Style> = fc.record({
  space: fc.oneof({ weight: 3, arbitrary: fc.constant<number[]>([9]) }, { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 8 }) }),
  escapes: fc.oneof({ weight: 3, arbitrary: fc.constant<boolean[]>([false]) }, { weight: 1, arbitrary: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }) }),
});

const mutation = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), byte: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x22, 0x5c, 0x2c, 0x3a, 0x7b, 0x7d, 0x5b, 0x5d, 0x30, 0x2e, 0x65, 0x2d, 0x09, 0x0a, 0x00, 0xa0)) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 3 }) }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(source: Buffer, mutations: readonly Mutation[]): Buffer {
  let bytes = Buffer.from(source);
  for (const change of mutations) {
    const at = bytes.length === 0 ? 0 : change.at % bytes.length;
    if (change.kind === "flip") {
      if (bytes.length > 0) bytes[at] = change.byte;
    } else if (change.kind === "insert") bytes = Buffer.concat([bytes.subarray(0, at), change.bytes, bytes.subarray(at)]);
    else bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + change.length)]);
  }
  return bytes;
}

// ---------------------------------------------------------------- the comparison

type Verdict = "event" | "no-event" | "unsure";

/** Either reader: the JS one (extract.ts) and the WebAssembly one (wasm-reader.ts) make the same promise. */
interface ByteReader {
  read(bytes: Buffer, start: number, end: number, into: EventFields): ReadResult;
}

/** Reads `bytes` both ways (from an offset inside a larger buffer, as chunks are) and checks they agree. */
function compare(reader: ByteReader, bytes: Buffer): Verdict {
  const padded = Buffer.concat([Buffer.from("xx\n"), bytes, Buffer.from('\n{"')]);
  const fast = newFields();
  const result = reader.read(padded, 3, 3 + bytes.length, fast);
  if (result === READ_UNSURE) return "unsure";
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("latin1"));
  } catch {
    throw new Error(`the reader accepted what JSON.parse rejects: ${JSON.stringify(bytes.toString("latin1"))}`);
  }
  const full = newFields();
  const hasEvent = projectParsed(parsed, full);
  expect(result, bytes.toString("latin1")).toBe(hasEvent ? READ_EVENT : READ_NO_EVENT);
  if (hasEvent) {
    for (let index = 0; index < full.length; index += 1) expect(fast[index], `${FIELD_NAMES[index]} of ${bytes.toString("latin1")}`).toBe(full[index]);
  }
  return hasEvent ? "event" : "no-event";
}

const READERS: ReadonlyArray<[string, () => ByteReader]> = [
  ["the JS reader", () => new RecordReader()],
  ["the WebAssembly reader", () => new WasmRecordReader()],
];

describe.each(READERS)("%s equals JSON.parse (08 §5.2)", (_name, newReader) => {
  it("reads plain records with certainty and exactly as JSON.parse", () => {
    const reader = newReader();
    const verdicts = { event: 0, "no-event": 0, unsure: 0 };
    fc.assert(
      fc.property(recordTree, style, (tree, how) => {
        const bytes = Buffer.from(write(tree, how), "utf8");
        const verdict = compare(reader, bytes);
        verdicts[verdict] += 1;
        // Valid JSON whose top level is an object and not deeper than the reader tracks: never unsure.
        if ("members" in tree) expect(verdict, bytes.toString("latin1")).not.toBe("unsure");
      }),
      parameters(5),
    );
    expect(verdicts.event).toBeGreaterThan(0);
    expect(verdicts["no-event"]).toBeGreaterThan(0);
  });

  it("never accepts what JSON.parse rejects, and agrees on whatever it accepts, after byte mutations", () => {
    const reader = newReader();
    const verdicts = { event: 0, "no-event": 0, unsure: 0 };
    fc.assert(
      fc.property(recordTree, style, fc.array(mutation, { minLength: 1, maxLength: 3 }), (tree, how, mutations) => {
        verdicts[compare(reader, mutate(Buffer.from(write(tree, how), "utf8"), mutations))] += 1;
      }),
      parameters(10),
    );
    expect(verdicts.unsure).toBeGreaterThan(0);
    expect(verdicts.event).toBeGreaterThan(0);
  });

  it("handles the cases chosen by hand", () => {
    const reader = newReader();
    const cases: Array<[string, Verdict]> = [
      ['{"source":{"event_id":"a","event_type":"mcp_card"}}', "event"],
      ['{"event_id":"top","source":{"event_id":"inner"}}', "event"],
      ['{"event_id":5,"source":{"event_id":"inner"}}', "event"],
      ['{"source":{"event_id":"a"},"source":7}', "no-event"],
      ['{"source":7,"source":{"event_id":"b"}}', "event"],
      ['{"source":{"event_id":"a"},"source":{"event_type":"mcp_card"}}', "no-event"],
      ['{"source":{"source":{"event_id":"deep"}}}', "no-event"],
      ['{"source":[{"event_id":"a"}]}', "no-event"],
      ['{"sourc\\u0065":{"event_id":"escaped key"}}', "event"],
      ['{"source":{"event\\u005fid":"x","tool_name":"tools\\/list"}}', "event"],
      ['{"event_id":"a","event_id":"b"}', "event"],
      ['{"status":{"event_id":"not source"}}', "no-event"],
      [' \t{"event_id":"ws"} \r', "event"],
      ["{}", "no-event"],
      ['{"event_id":"a",}', "unsure"],
      ['{"event_id":"a"}x', "unsure"],
      ['{"event_id":"a\u0001"}', "unsure"],
      ['{"event_id":"a","n":01}', "unsure"],
      ['{"event_id":"a","n":1.}', "unsure"],
      ['{"event_id":"a","n":-}', "unsure"],
      ['{"event_id":"a","n":tru}', "unsure"],
      ['{"event_id":"\\x"}', "unsure"],
      ['{"event_id":"\\u12g4"}', "unsure"],
      ['{"event_id":"a"\u00a0}', "unsure"],
      ['[{"event_id":"a"}]', "unsure"],
      [`${"[".repeat(100)}${"]".repeat(100)}`, "unsure"],
      [`{"event_id":"deep","x":${"[".repeat(100)}${"]".repeat(100)}}`, "unsure"],
      [`{"event_id":"deep ok","x":${"[".repeat(40)}${"]".repeat(40)}}`, "event"],
    ];
    for (const [record, verdict] of cases) expect(compare(reader, Buffer.from(record, "latin1")), record).toBe(verdict);
  });
});

describe("the WebAssembly reader does the reading itself", () => {
  it("answers every plain record without handing it to the JS reader, and hands over an escaped key and a long record", () => {
    const reader = new WasmRecordReader();
    const plain = [
      '{"source":{"event_id":"a","event_type":"mcp_request","mcp_method":"tools/call","tool_name":"about_magnt","time":"2026-05-01T00:00:00.000Z","controlled_test":false,"duplicate":null,"n":-1.5e3,"x":[{"y":true}]},"dataset":"cloudflare-workers","timestamp":1777593601254,"$workers":{"truncated":false}}',
      '{"event_id":"top","source":{"event_id":"inner"}}',
      '{"source":{"event_id":"escaped value \\u00e9 \\"q\\""}}',
      '{"source":{"event_id":"a"},"source":7}',
      "{}",
    ];
    for (const record of plain) compare(reader, Buffer.from(record, "latin1"));
    expect(reader.counts).toEqual({ module: plain.length, fallback: 0 });
    expect(compare(reader, Buffer.from('{"sourc\\u0065":{"event_id":"escaped key"}}', "latin1"))).toBe("event");
    expect(compare(reader, Buffer.from(`{"event_id":"long","pad":"${"x".repeat(2 * 1024 * 1024)}"}`, "latin1"))).toBe("event");
    expect(reader.counts).toEqual({ module: plain.length, fallback: 2 });
  });
});

// ---------------------------------------------------------------- whole summaries

async function summaryOf(files: Buffer[], fullParse: boolean, since: number | null, until: number | null) {
  return summarise(
    files.map((bytes) => stdinInput(Readable.from([bytes]))),
    { since, until },
    () => undefined,
    { fullParse },
  );
}

describe("summaries through the fast path equal the full parse (08 §5.3)", () => {
  it("on generated and mutated NDJSON and arrays, with and without a window", async () => {
    const line = fc.tuple(recordTree, style, fc.option(fc.array(mutation, { minLength: 1, maxLength: 2 }), { freq: 4 })).map(([tree, how, mutations]) => {
      const bytes = Buffer.from(write(tree, { ...how, space: how.space.map((pick) => (pick === 3 ? 9 : pick)) }), "utf8");
      return mutations === null ? bytes : mutate(bytes, mutations);
    });
    const file = fc.tuple(fc.array(line, { maxLength: 25 }), fc.boolean()).map(([lines, array]) =>
      array ? Buffer.concat([Buffer.from("["), Buffer.concat(lines.flatMap((bytes, index) => (index === 0 ? [bytes] : [Buffer.from(","), bytes]))), Buffer.from("]")]) : Buffer.concat(lines.flatMap((bytes) => [bytes, Buffer.from("\n")])),
    );
    const window = fc.option(fc.tuple(fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 11, 1) }), fc.integer({ min: 1, max: 200 * 86_400_000 })), { freq: 2 });
    await fc.assert(
      fc.asyncProperty(fc.array(file, { minLength: 1, maxLength: 3 }), window, async (files, range) => {
        const since = range === null ? null : range[0];
        const until = range === null ? null : range[0] + range[1];
        const fast = await summaryOf(files, false, since, until);
        const full = await summaryOf(files, true, since, until);
        expect(fast).toEqual(full);
      }),
      parameters(),
    );
  }, 300_000);
});
