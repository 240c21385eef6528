/**
 * Property tests for `POST /a2a` (10 §5): arbitrary bytes, arbitrary JSON and
 * JSON-RPC envelopes with allow-listed and random methods, random
 * `Content-Type` and `A2A-Version` headers, bodies near 24 KiB. Properties:
 * no 5xx, exactly one schema-valid event, every JSON answer parses, and no
 * fuzzed string (each embeds a canary) reaches the logs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { A2A_V03_METHODS, A2A_V1_METHODS, MAX_POST_BODY_BYTES } from "../../worker/contracts/index";
import { callDoor, captureConsole, ORIGIN } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { Canaries } from "../helpers/privacy";
import { FUZZ_TIMEOUT_MS, fuzzParameters } from "./knobs";

const encoder = new TextEncoder();
const canaries = new Canaries();
const marker = canaries.make("fuzz");

/** A fuzzed string that always carries the run's canary. */
const text = fc.string({ unit: "binary", maxLength: 40 }).map((value) => `${value}${marker}`);
/** Header-safe fuzz (printable ASCII), with the canary more often than not. */
const headerValue = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 24 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 8 }).map((value) => `${value}${marker}`),
);

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom("application/json", "application/json; charset=utf-8", "application/a2a+json", "text/plain", ""),
    headerValue,
  ),
  { nil: undefined },
);
const a2aVersion = fc.option(
  fc.oneof(fc.constantFrom("1.0", "1.0.3", "0.3", "", "1.1", "99.0"), headerValue),
  { nil: undefined },
);
const method = fc.oneof(fc.constantFrom(...A2A_V1_METHODS, ...A2A_V03_METHODS), text);
const id = fc.oneof(fc.integer(), text, fc.constant(null), fc.double(), fc.boolean(), fc.constant(undefined));
const fuzzedJson = fc.jsonValue({ maxDepth: 4 }).map((value) => [value, marker]);
const message = fc.record(
  {
    messageId: fc.oneof(text, fc.integer()),
    contextId: fc.oneof(text, fc.string({ maxLength: 300 }).map((value) => `${marker}${value}`)),
    taskId: fc.oneof(text, fc.constant("")),
    role: fc.oneof(fc.constantFrom("ROLE_USER", "ROLE_AGENT"), text),
    parts: fc.array(fc.oneof(fc.record({ text }), fc.record({ data: fuzzedJson })), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const envelope = fc
  .record(
    {
      jsonrpc: fc.oneof(fc.constant("2.0"), text),
      id,
      method,
      params: fc.oneof(fc.record({ message, id: text }, { requiredKeys: [] }), fuzzedJson),
    },
    { requiredKeys: ["jsonrpc", "method"] },
  )
  .map((value) => encoder.encode(JSON.stringify(value)));

/** A body just under, at or just over the limit: padding after a valid request. */
const nearLimit = fc.integer({ min: -64, max: 64 }).map((delta) => {
  const json = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { note: marker } });
  return encoder.encode(json + " ".repeat(MAX_POST_BODY_BYTES + delta - json.length));
});

const body = fc.oneof(
  fc.uint8Array({ maxLength: 256 }),
  fc.jsonValue({ maxDepth: 5 }).map((value) => encoder.encode(JSON.stringify([value, marker]).slice(1, -1))),
  envelope,
  fc.array(envelope, { maxLength: 2 }).map((items) => encoder.encode(`[${items.map((item) => new TextDecoder().decode(item)).join(",")}]`)),
  nearLimit,
);

async function send(payload: Uint8Array, type: string | undefined, version: string | undefined, path: string) {
  const headers = new Headers();
  if (type !== undefined) headers.set("Content-Type", type);
  if (version !== undefined) headers.set("A2A-Version", version);
  const logs = captureConsole();
  const response = await callDoor(new Request(`${ORIGIN}${path}`, { method: "POST", headers, body: payload }));
  const answer = await response.text();
  return { response, answer, logs };
}

describe("POST /a2a fuzzing (10 §5)", () => {
  it("answers every input with a designed status, one valid event and no leak", async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        contentType,
        a2aVersion,
        fc.constantFrom("/a2a", "/a2a/", `/a2a?A2A-Version=1.0&q=${marker}`),
        async (payload, type, version, path) => {
          const { response, answer, logs } = await send(payload, type, version, path);
          expect([200, 204, 413, 415]).toContain(response.status);
          const events = logs.events();
          expect(events).toHaveLength(1);
          assertValidEvent(events[0]);
          expect(events[0]!.event_type).toBe("a2a_request");
          if (response.status === 204) expect(answer).toBe("");
          else expect((JSON.parse(answer) as { jsonrpc: string }).jsonrpc).toBe("2.0");
          await canaries.assertAbsentFrom(logs.lines());
        },
      ),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);
});
