/**
 * The fields of an event that `magnt metrics` reads (08 §5.3), as one flat
 * projection shared by the two ways a record is read: the byte-level reader
 * (`extract.ts`, the fast path) and `JSON.parse` (the fallback). The counting
 * code sees only this projection, so both paths count through the same code
 * and can differ only in what they put here — which the tests compare.
 *
 * A projected value is what `JSON.parse` gives for the field — a string,
 * `true`, `false` or `null` — or `undefined` when the field is absent, or
 * `OTHER` for a number, object or array: the counting rules never look inside
 * those (every list is of strings, every flag is `=== true`/`=== false`), so
 * they all behave alike, and the fast path never has to build them.
 *
 * Privacy: the projection holds only these fields; ids, receipts and signal
 * ids are hashed by the aggregator and never leave it.
 */

/** The fields counted, in projection order. */
export const FIELD_NAMES = [
  "event_id",
  "event_type",
  "time",
  "controlled_test",
  "self_reported_test",
  "mcp_method",
  "tool_name",
  "tool_result",
  "validation_status",
  "rate_limited",
  "duplicate",
  "observed_task_saved",
  "search_receipt",
  "signal_id",
  "a2a_method",
  "a2a_protocol_version",
  "outcome",
] as const;

export const F_EVENT_ID = 0;
export const F_EVENT_TYPE = 1;
export const F_TIME = 2;
export const F_CONTROLLED_TEST = 3;
export const F_SELF_REPORTED_TEST = 4;
export const F_MCP_METHOD = 5;
export const F_TOOL_NAME = 6;
export const F_TOOL_RESULT = 7;
export const F_VALIDATION_STATUS = 8;
export const F_RATE_LIMITED = 9;
export const F_DUPLICATE = 10;
export const F_OBSERVED_TASK_SAVED = 11;
export const F_SEARCH_RECEIPT = 12;
export const F_SIGNAL_ID = 13;
export const F_A2A_METHOD = 14;
export const F_A2A_PROTOCOL_VERSION = 15;
export const F_OUTCOME = 16;
export const FIELD_COUNT = FIELD_NAMES.length;

/** Stands for any number, object or array value (never a string, boolean or null). */
export const OTHER: Readonly<Record<string, never>> = Object.freeze({});

/** A projected value (see the header). */
export type FieldValue = string | boolean | null | undefined | typeof OTHER;

/** The projection of one event: `FIELD_COUNT` values indexed by the `F_…` constants. */
export type EventFields = FieldValue[];

export function newFields(): EventFields {
  return new Array<FieldValue>(FIELD_COUNT).fill(undefined);
}

/** A parsed JSON value as the projection holds it. */
export function projectValue(value: unknown): FieldValue {
  if (value === undefined || value === null || typeof value === "string" || typeof value === "boolean") return value;
  return OTHER;
}

/**
 * The event of a parsed record (08 §5.1): the record itself when it has a
 * string `event_id`, else its `source` object when that has one. Fills `into`
 * and returns true, or returns false when the record carries no event.
 */
export function projectParsed(value: unknown, into: EventFields): boolean {
  if (typeof value !== "object" || value === null) return false;
  let event = value as Record<string, unknown>;
  if (typeof event.event_id !== "string") {
    const source = event.source;
    if (typeof source !== "object" || source === null || typeof (source as Record<string, unknown>).event_id !== "string") return false;
    event = source as Record<string, unknown>;
  }
  for (let index = 0; index < FIELD_COUNT; index += 1) into[index] = projectValue(event[FIELD_NAMES[index]!]);
  return true;
}
