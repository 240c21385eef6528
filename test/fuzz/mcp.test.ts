/**
 * Property tests for `POST /mcp` (10 §5): arbitrary bytes and JSON, JSON-RPC
 * envelopes with allow-listed and random methods, schema-aware tool arguments
 * (valid, at and over each limit, wrong types, unknown keys, Unicode-heavy
 * text with NUL, RTL marks, lone surrogates, quotes and SQL keywords) and
 * random transport headers. Properties: no 5xx; exactly one schema-valid
 * event; every JSON answer parses; no fuzzed string reaches the logs; no row
 * unless the answer is an accepted receipt or a valid search.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MCP_METHOD_ALLOWLIST, MAX_POST_BODY_BYTES, PUBLIC_TOOL_NAMES } from "../../worker/contracts/index";
import { callDoor, captureConsole, ORIGIN } from "../helpers/door";
import { countRows } from "../helpers/db";
import { assertValidEvent } from "../helpers/event-schema";
import { modernMeta } from "../helpers/mcp";
import { Canaries } from "../helpers/privacy";
import { FUZZ_TIMEOUT_MS, fuzzParameters } from "./knobs";

const encoder = new TextEncoder();
const canaries = new Canaries();
const marker = canaries.make("fuzz");

/** Hostile text: Unicode-heavy, with the canary always inside. */
const nasty = fc.constantFrom("\u0000", "\u202e", "\u200f", "\ud800", "\udfff", "'", '"', "\\", "'; DROP TABLE contacts;--", "SELECT * FROM task_signals", "😀", "ё", "\r\n");
const text = fc
  .tuple(fc.string({ unit: "binary", maxLength: 30 }), fc.array(nasty, { maxLength: 3 }))
  .map(([value, extras]) => `${extras.join("")}${value}${marker}`);

/** A string exactly at, or one over, a limit (with the canary at the start). */
const boundary = (max: number) => fc.constantFrom(max, max + 1).map((length) => (marker + "x".repeat(Math.max(0, length - marker.length))).slice(0, length));

const fieldValue = (max: number) =>
  fc.oneof(text, boundary(max), fc.constant(""), fc.constant("   "), fc.integer(), fc.boolean(), fc.constant(null), fc.array(text, { maxLength: 2 }));
const maybeTest = fc.oneof(fc.boolean(), fc.constant("true"), fc.constant(1));
const maybeUuid = fc.oneof(fc.uuid().map((value) => value), text, fc.constant("00000000-0000-0000-0000-000000000000"));

const contactArgs = fc.record(
  {
    summary: fieldValue(4000),
    intent: fieldValue(160),
    reply_to: fieldValue(500),
    operator: fieldValue(200),
    previous_contact_id: fc.oneof(text, fc.uuid().map((value) => `mc_${value}`)),
    submission_id: maybeUuid,
    is_test: maybeTest,
  },
  { requiredKeys: [] },
);
const taskArgs = fc.record(
  { goal: fieldValue(1000), blocker: fieldValue(1000), tried: fieldValue(2000), learned: fieldValue(2000), is_test: maybeTest, search_receipt: text, submission_id: maybeUuid },
  { requiredKeys: [] },
);
const withUnknownKey = <T extends object>(args: fc.Arbitrary<T>) =>
  fc.tuple(args, fc.option(text, { nil: undefined })).map(([value, unknown]) => (unknown === undefined ? value : { ...value, [unknown]: unknown }));

const toolCall = fc.oneof(
  fc.record({ name: fc.constant("propose_contact"), arguments: withUnknownKey(contactArgs) }),
  fc.record({ name: fc.constantFrom("search_shared_experience", "contribute_task_signal"), arguments: withUnknownKey(taskArgs) }),
  fc.record({ name: fc.constantFrom(...PUBLIC_TOOL_NAMES, "owner_list_contacts"), arguments: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)) }),
  fc.record({ name: text, arguments: fc.dictionary(text, text, { maxKeys: 2 }) }),
);

const method = fc.oneof(fc.constantFrom(...MCP_METHOD_ALLOWLIST), text);
const modernEnvelope = fc.boolean();
const envelope = fc.oneof(
  fc.record({ kind: fc.constant("call" as const), params: toolCall, modern: modernEnvelope }),
  fc.record({ kind: fc.constant("method" as const), method, params: fc.oneof(fc.dictionary(text, text, { maxKeys: 2 }), fc.constant(undefined)), modern: modernEnvelope }),
);

const header = fc.option(fc.string({ unit: "grapheme-ascii", maxLength: 20 }), { nil: undefined });
const headers = fc.record({
  contentType: fc.option(fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "", "application/x-www-form-urlencoded"), { nil: "application/json" }),
  accept: fc.option(fc.constantFrom("application/json, text/event-stream", "application/json", "text/event-stream", "*/*", ""), { nil: "application/json, text/event-stream" }),
  protocolVersion: fc.option(fc.constantFrom("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2099-01-01", "x"), { nil: undefined }),
  mcpMethod: header,
  mcpName: header,
  origin: fc.option(fc.constantFrom("https://magnt.ru", "http://localhost:5173", "null", "https://evil.example"), { nil: undefined }),
});

interface Built {
  body: Uint8Array;
}

type Envelope = typeof envelope extends fc.Arbitrary<infer T> ? T : never;

function buildEnvelope(value: Envelope): Built {
  if (value.kind === "call") {
    const params: Record<string, unknown> = { name: value.params.name };
    if (value.params.arguments !== undefined) params.arguments = value.params.arguments;
    if (value.modern) params._meta = modernMeta();
    return { body: encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params })) };
  }
  const params = value.params === undefined ? (value.modern ? { _meta: modernMeta() } : undefined) : { ...value.params, ...(value.modern ? { _meta: modernMeta() } : {}) };
  return { body: encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: 1, method: value.method, ...(params ? { params } : {}) })) };
}

const payload: fc.Arbitrary<Built> = fc.oneof(
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((body) => ({ body })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => ({ body: encoder.encode(JSON.stringify([value, marker])) })) },
  { weight: 6, arbitrary: envelope.map(buildEnvelope) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: -32, max: 32 }).map((delta) => {
      const json = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { note: marker } });
      return { body: encoder.encode(json + " ".repeat(MAX_POST_BODY_BYTES + delta - json.length)) };
    }),
  },
);

async function rowCounts() {
  return {
    contacts: await countRows("contacts"),
    signals: await countRows("task_signals"),
    observed: await countRows("observed_task_signals"),
  };
}

describe("POST /mcp fuzzing (10 §5)", () => {
  it("answers every input without 5xx, with one valid event, no leak and no unearned row", async () => {
    await fc.assert(
      fc.asyncProperty(payload, headers, async (built, header) => {
        const requestHeaders = new Headers({ "content-type": header.contentType, accept: header.accept });
        if (header.protocolVersion !== undefined) requestHeaders.set("mcp-protocol-version", header.protocolVersion);
        if (header.mcpMethod !== undefined) requestHeaders.set("mcp-method", header.mcpMethod);
        if (header.mcpName !== undefined) requestHeaders.set("mcp-name", header.mcpName);
        if (header.origin !== undefined) requestHeaders.set("origin", header.origin);

        const before = await rowCounts();
        const logs = captureConsole();
        const response = await callDoor(new Request(`${ORIGIN}/mcp`, { method: "POST", headers: requestHeaders, body: built.body }));
        const answer = await response.text();
        const after = await rowCounts();

        expect(response.status).toBeLessThan(500);
        const events = logs.events();
        expect(events).toHaveLength(1);
        assertValidEvent(events[0]);
        const event = events[0]!;
        expect(event.event_type).toBe("mcp_request");
        const type = response.headers.get("content-type") ?? "";
        if (type.includes("application/json") && answer !== "") JSON.parse(answer);

        const earnedContact = event.tool_result === "accepted_for_human_review" && event.duplicate === false ? 1 : 0;
        const earnedSignal = event.tool_result === "accepted" ? 1 : 0;
        const earnedObservation = event.observed_task_saved === true ? 1 : 0;
        expect(after.contacts - before.contacts).toBe(earnedContact);
        expect(after.signals - before.signals).toBe(earnedSignal);
        expect(after.observed - before.observed).toBe(earnedObservation);
        if (event.validation_status === "invalid") expect(after).toEqual(before);

        await canaries.assertAbsentFrom(logs.lines());
      }),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);
});
