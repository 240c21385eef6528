/**
 * The byte reader of JSON answers (worker/mcp/json-outcome.ts) against its
 * reference: `JSON.parse` of the body as `TextDecoder` decodes it, each
 * message's members taken as `readMcpResponse` takes them (`messageFacts`).
 * The reader may give up (`unread`, then the door parses), but whatever it
 * reads must be what parsing gives, on answers, on broken answers and on
 * any bytes at all.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageFacts, readJsonOutcome } from "../../worker/mcp/json-outcome";

const encoder = new TextEncoder();

/** What parsing gives, or "invalid" when the body is not JSON. */
function reference(bytes: Uint8Array) {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return "invalid" as const;
  }
  return (Array.isArray(value) ? value : [value]).map(messageFacts);
}

/** Checks one body; returns whether the reader read it (so a property can show it is not vacuous). */
function agrees(bytes: Uint8Array): boolean {
  const read = readJsonOutcome(bytes);
  const expected = reference(bytes);
  if (expected === "invalid") {
    expect(read.kind).toBe("unread");
    return false;
  }
  if (read.kind === "unread") return false;
  expect(read.messages).toEqual(expected);
  return true;
}

/** JSON.stringify writes `value` with an escape. */
const escaped = (value: string) => JSON.stringify(value).includes("\\");

/**
 * Whether a body JSON.stringify wrote has an escape in a name the reader
 * compares (a message's, its result's or its error's) or in a result's string
 * `protocolVersion`: the one place, besides broken JSON, it leaves to parsing.
 */
function escapedWhereRead(value: unknown): boolean {
  const isObject = (item: unknown): item is Record<string, unknown> => typeof item === "object" && item !== null && !Array.isArray(item);
  return (Array.isArray(value) ? value : [value]).some((message) => {
    if (!isObject(message)) return false;
    if (Object.keys(message).some(escaped)) return true;
    return [message.result, message.error].some(
      (member) => isObject(member) && (Object.keys(member).some(escaped) || (member === message.result && typeof member.protocolVersion === "string" && escaped(member.protocolVersion))),
    );
  });
}

const text = fc.oneof(fc.string(), fc.string({ unit: "binary", maxLength: 12 }), fc.constantFrom("\uFEFF2026-07-28", "ё", "\u2028", "\\", '"'));
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), text);
const error = fc.oneof(
  fc.record({ code: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), text, fc.constant(null)), message: text }, { requiredKeys: [] }),
  anyValue,
);
const result = fc.oneof(
  fc.record(
    {
      content: fc.array(fc.record({ type: fc.constant("text"), text })),
      isError: fc.oneof(fc.boolean(), anyValue),
      protocolVersion: fc.oneof(text, anyValue),
      structuredContent: fc.dictionary(fc.string(), anyValue, { maxKeys: 4 }),
    },
    { requiredKeys: [] },
  ),
  anyValue,
);
const message = fc.oneof(
  fc.record({ jsonrpc: fc.constant("2.0"), id: fc.oneof(fc.integer(), text), result, error, extra: anyValue }, { requiredKeys: [] }),
  anyValue,
);
/** A body as a server might write it: one message or a batch, any indentation, maybe a byte-order mark. */
const body = fc.tuple(fc.oneof(message, fc.array(message, { maxLength: 4 })), fc.constantFrom(undefined, 0, 2, "\t"), fc.boolean()).map(([value, indent, bom]) =>
  encoder.encode(`${bom ? "\uFEFF" : ""}${JSON.stringify(value, null, indent) ?? "null"}`),
);

describe("reading a JSON answer from its bytes (01 §9.2)", () => {
  it("reads what parsing gives, on answers of every shape", () => {
    fc.assert(
      fc.property(body, (bytes) => {
        // Written by JSON.stringify: what the reader leaves to parsing is exactly what has an escape where it reads.
        expect(agrees(bytes)).toBe(!escapedWhereRead(JSON.parse(new TextDecoder().decode(bytes))));
      }),
      { numRuns: 3000 },
    );
  });

  it("never reads a broken answer differently from parsing it", () => {
    const edit = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom("replace", "insert", "delete"));
    fc.assert(
      fc.property(body, fc.array(edit, { minLength: 1, maxLength: 3 }), (bytes, edits) => {
        let edited = [...bytes];
        for (const [position, byte, how] of edits) {
          const at = edited.length === 0 ? 0 : position % edited.length;
          if (how === "replace" && edited.length > 0) edited[at] = byte;
          else if (how === "insert") edited.splice(at, 0, byte);
          else edited.splice(at, 1);
        }
        agrees(Uint8Array.from(edited));
      }),
      { numRuns: 3000 },
    );
  });

  it("never reads arbitrary bytes differently from parsing them", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        agrees(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ["the last of a repeated member", '{"result":{"isError":true},"result":{"isError":false}}'],
    ["an error after a result", '{"result":{},"error":{"code":-32602},"error":{"code":"x"}}'],
    ["numeric codes in every form", '[{"error":{"code":-0}},{"error":{"code":1.5e2}},{"error":{"code":-32600.0}}]'],
    ["a protocol version with a raw byte-order mark", '{"result":{"protocolVersion":"\uFEFF2026-07-28"}}'],
    ["isError deeper than the result", '{"result":{"content":[{"isError":true}]}}'],
    ["whitespace of every kind", ' \t\r\n{ "result" : { "isError" : true } } \n'],
    ["an empty batch", "[]"],
    ["a batch of non-messages", '[1,"x",null,[],{"result":[]}]'],
  ])("reads %s as parsing does", (_, json) => {
    expect(agrees(encoder.encode(json))).toBe(true);
  });

  it("invalid UTF-8 inside a string is read as the decoder reads it", () => {
    const bytes = Uint8Array.from([...encoder.encode('{"result":{"protocolVersion":"a'), 0xe2, 0x28, 0xff, ...encoder.encode('"}}')]);
    expect(agrees(bytes)).toBe(true);
    expect(readJsonOutcome(bytes)).toEqual({ kind: "read", messages: [{ error: null, result: { isError: false, protocolVersion: "a\ufffd(\ufffd" } }] });
  });

  it.each([
    ["a member name with an escape", '{"\\u0065rror":{"code":1}}'],
    ["a protocol version with an escape", '{"result":{"protocolVersion":"2026\\u002d07-28"}}'],
    ["nesting deeper than it follows", `{"result":{"a":${"[".repeat(100)}${"]".repeat(100)}}}`],
  ])("leaves %s to parsing", (_, json) => {
    const bytes = encoder.encode(json);
    expect(readJsonOutcome(bytes).kind).toBe("unread");
    expect(reference(bytes)).not.toBe("invalid");
  });

  it.each([
    ["trailing text", '{"result":{}} x'],
    ["a leading zero", '{"error":{"code":01}}'],
    ["a control character in a string", '{"result":{"protocolVersion":"a\u0001"}}'],
    ["a bad escape", '{"result":{"x":"\\q"}}'],
    ["a trailing comma", '{"result":{},}'],
    ["nothing at all", ""],
    ["a byte-order mark after whitespace", ' \uFEFF{"result":{}}'],
  ])("does not read %s, which parsing refuses", (_, json) => {
    const bytes = encoder.encode(json);
    expect(reference(bytes)).toBe("invalid");
    expect(readJsonOutcome(bytes).kind).toBe("unread");
  });
});
