/**
 * One counted-type event as a row of numbers (08 §5.3): what the counting
 * rules need from it and nothing else — the type, the 64-bit fingerprints of
 * its id, receipt and signal id, its time, its flags and the codes of its
 * closed-list values. Every record, read on the main thread or in a worker
 * (`parallel.ts`), becomes such a row before it is counted, so there is one
 * counting function (`MetricsAggregator.apply`) whichever thread read it, and
 * a worker hands the main thread a Float64Array instead of objects.
 *
 * Privacy: a row holds only fingerprints, an instant, booleans and indexes
 * into the contract's closed lists; nothing from an event's free text.
 */
import {
  A2A_METHOD_VALUES,
  A2A_PROTOCOL_VERSION_VALUES,
  CONTACT_NOT_SAVED_CODE,
  CONTACT_STATUS,
  CONTRIBUTE_STATUS,
  COUNTED_EVENT_TYPES,
  MCP_METHOD_ALLOWLIST,
  OUTCOMES,
  SEARCH_STATUS,
  TOOL_NAME_VALUES,
  TOOL_RESULT_INVALID_ARGUMENTS,
  UNKNOWN_VALUE,
} from "../../../worker/contracts";
import {
  F_A2A_METHOD,
  F_A2A_PROTOCOL_VERSION,
  F_CONTROLLED_TEST,
  F_DUPLICATE,
  F_EVENT_ID,
  F_EVENT_TYPE,
  F_MCP_METHOD,
  F_OBSERVED_TASK_SAVED,
  F_OUTCOME,
  F_RATE_LIMITED,
  F_SEARCH_RECEIPT,
  F_SELF_REPORTED_TEST,
  F_SIGNAL_ID,
  F_TIME,
  F_TOOL_NAME,
  F_TOOL_RESULT,
  F_VALIDATION_STATUS,
  type EventFields,
  type FieldValue,
} from "./fields";
import { fnv1a64 } from "./fingerprint";
import { parseEventTime } from "./time";

/** The key for a field that is null or absent (08 §5.3). */
export const NONE_KEY = "(none)";
/** The key for a value outside its closed list (01 §9.2). */
export const UNKNOWN_KEY = UNKNOWN_VALUE;

/**
 * A closed list as codes: a listed string is its index, any other value
 * `unknown` (= length), null or absent `(none)` (= length + 1).
 */
export class ClosedList {
  private readonly codes = new Map<string, number>();
  readonly unknown: number;
  readonly none: number;

  constructor(readonly order: readonly string[]) {
    order.forEach((value, index) => this.codes.set(value, index));
    this.unknown = order.length;
    this.none = order.length + 1;
  }

  code(value: FieldValue): number {
    if (value === null || value === undefined) return this.none;
    return typeof value === "string" ? (this.codes.get(value) ?? this.unknown) : this.unknown;
  }

  /** The report's key of a code. */
  key(code: number): string {
    return code === this.unknown ? UNKNOWN_KEY : code === this.none ? NONE_KEY : this.order[code]!;
  }

  /** Codes in report order: the list, then `unknown`, then `(none)`. */
  get size(): number {
    return this.order.length + 2;
  }
}

export const EVENT_TYPES = new ClosedList(COUNTED_EVENT_TYPES);
export const MCP_METHODS = new ClosedList(MCP_METHOD_ALLOWLIST);
/** The closed lists the report may name (worker/contracts/events.ts; the counter adds `unknown` itself). */
export const TOOL_NAMES = new ClosedList(TOOL_NAME_VALUES.filter((name) => name !== UNKNOWN_VALUE));
export const A2A_METHODS = new ClosedList(A2A_METHOD_VALUES.filter((name) => name !== UNKNOWN_VALUE));
export const A2A_OUTCOMES = new ClosedList(OUTCOMES);
export const A2A_VERSIONS = new ClosedList(A2A_PROTOCOL_VERSION_VALUES);
/** The `tool_result` values the rules compare with (any other value is `unknown`). */
export const TOOL_RESULTS = new ClosedList([
  CONTACT_STATUS.accepted,
  CONTACT_STATUS.conflict,
  CONTACT_NOT_SAVED_CODE,
  "dialogue_misconfigured",
  "dialogue_not_found",
  TOOL_RESULT_INVALID_ARGUMENTS,
  SEARCH_STATUS.matches,
  SEARCH_STATUS.noMatch,
  SEARCH_STATUS.storageError,
  CONTRIBUTE_STATUS.accepted,
  CONTRIBUTE_STATUS.duplicate,
]);

/** Row layout. */
export const X_TYPE = 0;
export const X_ID_HI = 1;
export const X_ID_LO = 2;
export const X_TIME = 3;
export const X_FLAGS = 4;
export const X_MCP_METHOD = 5;
export const X_TOOL = 6;
export const X_RESULT = 7;
export const X_RECEIPT_HI = 8;
export const X_RECEIPT_LO = 9;
export const X_SIGNAL_HI = 10;
export const X_SIGNAL_LO = 11;
export const X_A2A_METHOD = 12;
export const X_OUTCOME = 13;
export const X_A2A_VERSION = 14;
export const FACT_WIDTH = 15;

/** `X_FLAGS` bits: each is one `=== true`, `=== false`, `=== "valid"` or `typeof … === "string"` of the rules. */
export const FLAG_CONTROLLED_TEST = 1;
export const FLAG_SELF_REPORTED_TEST = 2;
export const FLAG_RATE_LIMITED = 4;
export const FLAG_DUPLICATE = 8;
export const FLAG_VALID = 16;
export const FLAG_OBSERVED_SAVED = 32;
export const FLAG_OBSERVED_NOT_SAVED = 64;
export const FLAG_HAS_RECEIPT = 128;
export const FLAG_HAS_SIGNAL = 256;

/**
 * Writes the row of `event` at `rows[at…]`; false (nothing written that
 * matters) when its type is not one of the four counted (rule 4: such events
 * take part in nothing else).
 */
export function encodeEvent(event: EventFields, rows: Float64Array, at: number): boolean {
  const type = EVENT_TYPES.code(event[F_EVENT_TYPE]);
  if (type >= EVENT_TYPES.unknown) return false;
  rows[at + X_TYPE] = type;
  const id = fnv1a64(event[F_EVENT_ID] as string);
  rows[at + X_ID_HI] = id.hi;
  rows[at + X_ID_LO] = id.lo;
  rows[at + X_TIME] = parseEventTime(event[F_TIME]);
  let flags = 0;
  if (event[F_CONTROLLED_TEST] === true) flags |= FLAG_CONTROLLED_TEST;
  if (event[F_SELF_REPORTED_TEST] === true) flags |= FLAG_SELF_REPORTED_TEST;
  if (event[F_RATE_LIMITED] === true) flags |= FLAG_RATE_LIMITED;
  if (event[F_DUPLICATE] === true) flags |= FLAG_DUPLICATE;
  if (event[F_VALIDATION_STATUS] === "valid") flags |= FLAG_VALID;
  const observed = event[F_OBSERVED_TASK_SAVED];
  if (observed === true) flags |= FLAG_OBSERVED_SAVED;
  else if (observed === false) flags |= FLAG_OBSERVED_NOT_SAVED;
  if (fingerprintInto(event[F_SEARCH_RECEIPT], rows, at + X_RECEIPT_HI)) flags |= FLAG_HAS_RECEIPT;
  if (fingerprintInto(event[F_SIGNAL_ID], rows, at + X_SIGNAL_HI)) flags |= FLAG_HAS_SIGNAL;
  rows[at + X_FLAGS] = flags;
  rows[at + X_MCP_METHOD] = MCP_METHODS.code(event[F_MCP_METHOD]);
  rows[at + X_TOOL] = TOOL_NAMES.code(event[F_TOOL_NAME]);
  rows[at + X_RESULT] = TOOL_RESULTS.code(event[F_TOOL_RESULT]);
  rows[at + X_A2A_METHOD] = A2A_METHODS.code(event[F_A2A_METHOD]);
  rows[at + X_OUTCOME] = A2A_OUTCOMES.code(event[F_OUTCOME]);
  rows[at + X_A2A_VERSION] = A2A_VERSIONS.code(event[F_A2A_PROTOCOL_VERSION]);
  return true;
}

/** Writes the fingerprint of a string id at `rows[at]`, `rows[at + 1]` (zeros otherwise); whether it was a string. */
function fingerprintInto(value: FieldValue, rows: Float64Array, at: number): boolean {
  if (typeof value !== "string") {
    rows[at] = 0;
    rows[at + 1] = 0;
    return false;
  }
  const fingerprint = fnv1a64(value);
  rows[at] = fingerprint.hi;
  rows[at + 1] = fingerprint.lo;
  return true;
}

/** A growable list of rows (a block's counted events, in file order). */
export class FactRows {
  rows: Float64Array;
  count = 0;

  constructor(initialRows = 1024) {
    this.rows = new Float64Array(initialRows * FACT_WIDTH);
  }

  /** Starts afresh in `rows` (a recycled or freshly sized array). */
  reset(rows: Float64Array = this.rows): void {
    this.rows = rows;
    this.count = 0;
  }

  /** The offset of a fresh row (kept only by `commit`). */
  next(): number {
    if ((this.count + 1) * FACT_WIDTH > this.rows.length) {
      const grown = new Float64Array(this.rows.length * 2);
      grown.set(this.rows);
      this.rows = grown;
    }
    return this.count * FACT_WIDTH;
  }

  commit(): void {
    this.count += 1;
  }
}
