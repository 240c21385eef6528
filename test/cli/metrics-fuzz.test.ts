/**
 * `magnt metrics` on random and mutated bytes (issue 14, 10 §5, 08 §5): the
 * metrics command run in-process on generated files — random bytes, the
 * fixture exports with flipped, inserted, deleted, duplicated and truncated
 * bytes, and generated records of every shape (NDJSON, array, API envelope,
 * `source` wrappers, wrong types, broken times, test flags) with random
 * `--since`/`--until` values.
 *
 * Properties: never a crash (no "unexpected error"); the exit code is 0, 2
 * (an unparseable or inverted window only) or 3 (an unreadable input only: a
 * corrupt gzip stream, or an input of records none of which is JSON — named in
 * a stderr warning, and checked here to have no JSON line and not to be JSON
 * as a whole); exit 0 prints one JSON summary whose counts are
 * consistent (every record falls in at most one category, the per-type counts
 * add up to `counted_events`, every count a non-negative integer); and no
 * generated free text (a canary planted in every string) reaches stdout or
 * stderr.
 *
 * Runs per property: FUZZ_RUNS (default 200; `npm run test:fuzz` sets 2000);
 * seed from FC_SEED, printed by fast-check on failure.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runMagnt } from "./harness";

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 200) || 200;
const FUZZ_SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const parameters = () => (FUZZ_SEED === undefined ? { numRuns: FUZZ_RUNS } : { numRuns: FUZZ_RUNS, seed: FUZZ_SEED });
const TIMEOUT_MS = 300_000;

const MARKER = `CANARYmetricsfuzz${crypto.randomUUID().replaceAll("-", "")}`;
const FIXTURES = ["monolith.ndjson", "monolith-array.json", "monolith-envelope.json", "monolith-source.ndjson", "core.json", "gateway.ndjson"].map((name) => ({
  name,
  bytes: readFileSync(join(REPO_ROOT, "test/fixtures/metrics", name)),
}));

const dir = mkdtempSync(join(tmpdir(), "magnt-metrics-fuzz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;

function writeInput(extension: string, bytes: Uint8Array): string {
  fileCounter += 1;
  const path = join(dir, `input-${fileCounter}${extension}`);
  writeFileSync(path, bytes);
  return path;
}

// ---------------------------------------------------------------- generators

const text = fc.string({ maxLength: 12 }).map((value) => `${value}${MARKER}`);

/** Byte-level mutations of a valid export. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 24 }) }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 400 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("text" as const), at: fc.nat(), value: text }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(source: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let bytes = Buffer.from(source);
  for (const change of mutations) {
    const at = bytes.length === 0 ? 0 : change.at % bytes.length;
    switch (change.kind) {
      case "flip":
        if (bytes.length > 0) bytes[at] = change.byte;
        break;
      case "insert":
        bytes = Buffer.concat([bytes.subarray(0, at), change.bytes, bytes.subarray(at)]);
        break;
      case "text":
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(change.value), bytes.subarray(at)]);
        break;
      case "delete":
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + change.length)]);
        break;
      case "duplicate":
        bytes = Buffer.concat([bytes.subarray(0, at + change.length), bytes.subarray(at)]);
        break;
      case "truncate":
        bytes = bytes.subarray(0, at);
        break;
    }
  }
  return bytes;
}

const COUNTED = ["mcp_request", "mcp_card", "a2a_request", "a2a_card"] as const;
const isoTime = fc.date({ min: new Date("2025-01-01T00:00:00Z"), max: new Date("2027-01-01T00:00:00Z"), noInvalidDate: true }).map((date) => date.toISOString());
const anyValue = fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(text, { maxLength: 2 }), fc.dictionary(text, text, { maxKeys: 2 }));
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary }, { weight: 1, arbitrary: anyValue });

/** A telemetry-like event: mostly plausible fields, some of the wrong type, free text carrying the canary. */
const event = fc.record(
  {
    event_id: fc.oneof({ weight: 4, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom("dup-1", "dup-2") }, { weight: 1, arbitrary: anyValue }),
    time: fc.oneof({ weight: 4, arbitrary: isoTime }, { weight: 1, arbitrary: anyValue }),
    event_type: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...COUNTED, "http", "scheduled", "owner_mcp_request") }, { weight: 1, arbitrary: anyValue }),
    controlled_test: sometimes(fc.boolean()),
    self_reported_test: sometimes(fc.boolean()),
    mcp_method: sometimes(fc.constantFrom("tools/list", "tools/call", "initialize", "resources/read")),
    tool_name: sometimes(fc.constantFrom("propose_contact", "search_shared_experience", "contribute_task_signal", "about_magnt", "fetch_contact_reply")),
    tool_result: sometimes(fc.constantFrom("accepted", "duplicate", "accepted_for_human_review", "no_relevant_experience", "matches_found", "storage_error", "not_saved", "rate_limited")),
    validation_status: sometimes(fc.constantFrom("valid", "invalid")),
    duplicate: sometimes(fc.boolean()),
    observed_task_saved: sometimes(fc.boolean()),
    rate_limited: sometimes(fc.boolean()),
    signal_id: sometimes(fc.uuid().map((id) => `ts_${id}`)),
    search_receipt: sometimes(fc.uuid().map((id) => `sr_${id}`)),
    a2a_method: sometimes(fc.constantFrom("SendMessage", "message/send", "GetTask")),
    a2a_version: sometimes(fc.constantFrom("1.0", "0.3", "9.9")),
    outcome: sometimes(fc.constantFrom("success", "tool_error", "protocol_error", "bad_request")),
    client_name: text,
    user_agent: text,
  },
  { requiredKeys: [] },
);

/** A record: the event itself, a `source` wrapper (API export), or something else entirely. */
const record = fc.oneof(
  { weight: 5, arbitrary: event },
  { weight: 2, arbitrary: event.map((source) => ({ source, $workers: { scriptName: "magnt-observer" }, $metadata: { id: MARKER } })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const generatedExport = fc.tuple(fc.array(record, { maxLength: 30 }), fc.constantFrom("ndjson", "array", "envelope"), fc.boolean()).map(([records, shape, blankLines]) => {
  const body =
    shape === "ndjson"
      ? records.map((item) => JSON.stringify(item)).join(blankLines ? "\n\n" : "\n")
      : shape === "array"
        ? JSON.stringify(records)
        : JSON.stringify({ success: true, result: { events: { events: records, count: records.length } } });
  return { extension: shape === "ndjson" ? ".ndjson" : ".json", bytes: Buffer.from(body) };
});

const input = fc.oneof(
  { weight: 2, arbitrary: fc.record({ extension: fc.constantFrom(".ndjson", ".json", ""), bytes: fc.uint8Array({ maxLength: 2048 }) }) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom(...FIXTURES), fc.array(mutation, { minLength: 1, maxLength: 6 }))
      .map(([fixture, mutations]) => ({ extension: fixture.name.endsWith(".json") ? ".json" : ".ndjson", bytes: mutate(fixture.bytes, mutations) })),
  },
  { weight: 4, arbitrary: generatedExport },
);

/** Optional gzip: a valid stream of the input, or a gzip stream with mutated bytes. */
const packaging = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "plain" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "gzip" as const }) },
  { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((mutations) => ({ kind: "corrupt-gzip" as const, mutations })) },
);

const windowValue = fc.oneof(isoTime, fc.constantFrom("2026-05-01", "2026-05-01T12:00:00+03:00", "not-a-date", "", "2026-13-45", " 2026-01-01 "), text);
const window = fc.record({ since: fc.option(windowValue, { nil: undefined }), until: fc.option(windowValue, { nil: undefined }) });

// ---------------------------------------------------------------- properties

/**
 * The oracle for "no record is JSON": the whole (decompressed) file does not
 * parse, nor, when it is read line by line, any of its lines. Null when a
 * gzip file cannot be decompressed.
 */
function hasJsonText(path: string): boolean | null {
  let bytes = readFileSync(path);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch {
      return null;
    }
  }
  const parses = (text: string) => {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  };
  const text = bytes.toString("latin1");
  if (parses(text)) return true;
  // Lines are the records only of a file read as NDJSON; one starting with `[` or `{` may be
  // scanned as an array or envelope, whose records this oracle does not cut.
  const first = text.trimStart()[0];
  return first !== "[" && first !== "{" && text.split("\n").some((line) => line.trim() !== "" && parses(line));
}

const INPUT_CATEGORIES = [
  "unparseable_records",
  "records_without_event_id",
  "duplicates_removed",
  "outside_time_window",
  "excluded_controlled_test",
  "excluded_self_reported_test",
  "counted_events",
] as const;

/** Every number in the summary, with its path. */
function numbersOf(value: unknown, path = ""): [string, number][] {
  if (typeof value === "number") return [[path, value]];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => numbersOf(item, `${path}.${key}`));
}

describe("magnt metrics on random and mutated bytes (10 §5, 08 §5)", () => {
  it("never crashes, exits only 0/2/3 as specified, keeps its counts consistent and prints no input text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(input, packaging), { minLength: 1, maxLength: 3 }), window, fc.boolean(), async (files, range, json) => {
        let corrupt = false;
        const paths = files.map(([generated, pack]) => {
          if (pack.kind === "plain") return writeInput(generated.extension, generated.bytes);
          const gz = gzipSync(generated.bytes);
          if (pack.kind === "gzip") return writeInput(`${generated.extension}.gz`, gz);
          corrupt = true;
          return writeInput(`${generated.extension}.gz`, mutate(gz, pack.mutations));
        });
        const args = ["metrics", ...paths];
        if (range.since !== undefined) args.push("--since", range.since);
        if (range.until !== undefined) args.push("--until", range.until);
        if (json) args.push("--json");

        const result = await runMagnt(args);
        expect(result.stderr).not.toContain("unexpected error");
        expect([0, 2, 3]).toContain(result.code);
        // 08 §5: an input none of whose records is JSON is named in a warning and fails the run (exit 3).
        const notExports = [...result.stderr.matchAll(/warning: (\S+) is not a Workers Logs export/g)].map((match) => match[1]!);
        for (const path of notExports) {
          expect(paths).toContain(path);
          expect(hasJsonText(path), path).not.toBe(true);
        }
        if (notExports.length > 0) expect(result.code).toBe(3);
        if (!corrupt && notExports.length === 0) expect(result.code, result.stderr).not.toBe(3);
        if (range.since === undefined && range.until === undefined) expect(result.code).not.toBe(2);
        const output = `${result.stdout}\n${result.stderr}`;
        expect(output).not.toContain(MARKER);

        if (json && result.code !== 0) {
          expect(result.lastJson()).toMatchObject({ error: { code: result.code === 2 ? "usage" : "environment" } });
        }
        if (json && result.code === 0) {
          expect(result.lines).toHaveLength(1);
          const summary = JSON.parse(result.lines[0]!) as Record<string, any>;
          for (const [path, value] of numbersOf(summary.inputs).concat(numbersOf(summary.by_event_type), numbersOf(summary.mcp), numbersOf(summary.a2a))) {
            expect(Number.isInteger(value) && value >= 0, `${path} = ${value}`).toBe(true);
          }
          const inputs = summary.inputs as Record<string, number>;
          expect(inputs.files).toBe(paths.length);
          const categorised = INPUT_CATEGORIES.reduce((sum, key) => sum + inputs[key]!, 0);
          expect(categorised).toBeLessThanOrEqual(inputs.records!);
          const byType = Object.values(summary.by_event_type as Record<string, number>).reduce((sum, value) => sum + value, 0);
          expect(byType).toBe(inputs.counted_events);
          if (range.since === undefined && range.until === undefined) expect(inputs.outside_time_window).toBe(0);
        }
      }),
      parameters(),
    );
  }, TIMEOUT_MS);
});
