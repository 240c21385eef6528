/**
 * The counting rules of `magnt metrics` (08 §5.3) over the records the scanner
 * cuts out, in one pass, and the receipt correlation resolved after the whole
 * input (03 §9).
 *
 * Privacy: this is the only place that looks inside events, and it reads only
 * the fields it counts. Every output key is either a fixed counter name or a
 * value from a closed list (`unknown` / `(none)` otherwise); ids and receipts
 * exist here only as 64-bit fingerprints. Nothing from an event's free text can
 * reach the summary.
 *
 * Decisions where 08 §5.3 is silent (docs/metrics.md):
 * - Rule 4 gates the other rules: only records whose event has one of the four
 *   counted types take part in dedupe, the window and the test exclusions.
 *   This keeps the counters independent of the `mcp_`/`a2a_` pre-filter, which
 *   skips other records unparsed; those records are only in `records`.
 * - An event that is both a controlled and a self-reported test is counted
 *   once, as `excluded_controlled_test`.
 */
import {
  A2A_PROTOCOL_VERSION_VALUES,
  A2A_METHOD_VALUES,
  CONTACT_NOT_SAVED_CODE,
  CONTACT_STATUS,
  CONTRIBUTE_STATUS,
  COUNTED_EVENT_TYPES,
  MCP_METHOD_ALLOWLIST,
  OUTCOMES,
  SEARCH_STATUS,
  TOOL_CONTRIBUTE,
  TOOL_PROPOSE_CONTACT,
  TOOL_RESULT_INVALID_ARGUMENTS,
  TOOL_NAME_VALUES,
  TOOL_SEARCH,
  UNKNOWN_VALUE,
} from "../../../worker/contracts";
import { READ_EVENT, READ_NO_EVENT, READ_UNSURE, RecordReader } from "./extract";
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
  newFields,
  projectParsed,
  type EventFields,
} from "./fields";
import { FingerprintTable, fnv1a64, RecordList } from "./fingerprint";
import type { RecordSink } from "./scanner";
import { formatInstant, parseEventTime } from "./time";

/** The key for a field that is null or absent (08 §5.3). */
export const NONE_KEY = "(none)";
/** The key for a value outside its closed list (01 §9.2). */
export const UNKNOWN_KEY = UNKNOWN_VALUE;
/** The closed lists the report may name (worker/contracts/events.ts; the counter adds `unknown` itself). */
const TOOL_NAMES: readonly string[] = TOOL_NAME_VALUES.filter((name) => name !== UNKNOWN_VALUE);
const A2A_METHODS: readonly string[] = A2A_METHOD_VALUES.filter((name) => name !== UNKNOWN_VALUE);
const DAY_MS = 24 * 60 * 60 * 1000;

type CountedEventType = (typeof COUNTED_EVENT_TYPES)[number];

/** The `--json` document (08 §5.3), exactly. */
export interface MetricsSummary {
  inputs: {
    files: number;
    records: number;
    unparseable_records: number;
    records_without_event_id: number;
    duplicates_removed: number;
    outside_time_window: number;
    excluded_controlled_test: number;
    excluded_self_reported_test: number;
    counted_events: number;
  };
  window: { since: string | null; until: string | null; first_event: string | null; last_event: string | null };
  by_event_type: Record<CountedEventType, number>;
  mcp: {
    by_method: Record<string, number>;
    tools_list: number;
    tool_calls: Record<string, number>;
    contacts: {
      saved_new: number;
      duplicates: number;
      conflicts: number;
      not_saved: number;
      rate_limited: number;
      dialogue_refused: number;
      invalid_arguments: number;
    };
    search: {
      valid_calls: number;
      matches_found: number;
      no_relevant_experience: number;
      storage_errors: number;
      invalid_arguments: number;
      observed_tasks_saved: number;
      observed_tasks_not_saved: number;
      rate_limited: number;
    };
    contribute: {
      calls: number;
      valid_calls: number;
      accepted_events: number;
      accepted_signal_ids: number;
      duplicates: number;
      conflicts: number;
      rate_limited: number;
      storage_errors: number;
      invalid_arguments: number;
    };
    receipt_correlation: {
      contributions_with_receipt: number;
      correlated_signal_ids: number;
      receipt_not_seen: number;
      outside_24h: number;
    };
  };
  a2a: { by_method: Record<string, number>; by_outcome: Record<string, number>; by_protocol_version: Record<string, number> };
}

/** The time window of `--since` (inclusive) and `--until` (exclusive), in ms; null = unbounded. */
export interface TimeWindow {
  since: number | null;
  until: number | null;
}

/** A closed-list counter: known keys in list order, then `unknown`, then `(none)`. */
class ClosedCounter {
  private readonly counts = new Map<string, number>();
  private readonly known: ReadonlySet<string>;

  constructor(private readonly order: readonly string[]) {
    this.known = new Set(order);
  }

  /** Counts `value` under its own name when listed, `(none)` when null or absent, `unknown` otherwise. */
  count(value: unknown): void {
    const key = value === null || value === undefined ? NONE_KEY : typeof value === "string" && this.known.has(value) ? value : UNKNOWN_KEY;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  toObject(): Record<string, number> {
    const result: Record<string, number> = {};
    for (const key of [...this.order, UNKNOWN_KEY, NONE_KEY]) {
      const value = this.counts.get(key);
      if (value !== undefined) result[key] = value;
    }
    return result;
  }
}

const MCP_BYTES = Buffer.from("mcp_");
const A2A_BYTES = Buffer.from("a2a_");
const NOT_FOUND = Number.MAX_SAFE_INTEGER;

/** Contribution record fields in the `RecordList`. */
const C_RECEIPT_HI = 0;
const C_RECEIPT_LO = 1;
const C_SIGNAL_HI = 2;
const C_SIGNAL_LO = 3;
const C_HAS_SIGNAL = 4;
const C_TIME = 5;

export interface AggregatorOptions {
  /** Parse every record with `JSON.parse`, never the byte-level reader (tests prove the two equal). */
  fullParse?: boolean;
}

/** Counts records into the 08 §5.3 summary; receives records from the scanner. */
export class MetricsAggregator implements RecordSink {
  files = 0;
  private records = 0;
  private unparseable = 0;
  private withoutEventId = 0;
  private duplicates = 0;
  private outsideWindow = 0;
  private controlledTests = 0;
  private selfReportedTests = 0;
  private counted = 0;
  private firstEvent = Number.POSITIVE_INFINITY;
  private lastEvent = Number.NEGATIVE_INFINITY;
  private readonly byType: Record<CountedEventType, number> = { mcp_request: 0, mcp_card: 0, a2a_request: 0, a2a_card: 0 };
  private readonly mcpMethods = new ClosedCounter(MCP_METHOD_ALLOWLIST);
  private toolsList = 0;
  private readonly toolCalls = new ClosedCounter(TOOL_NAMES);
  private readonly contacts = { saved_new: 0, duplicates: 0, conflicts: 0, not_saved: 0, rate_limited: 0, dialogue_refused: 0, invalid_arguments: 0 };
  private readonly search = {
    valid_calls: 0,
    matches_found: 0,
    no_relevant_experience: 0,
    storage_errors: 0,
    invalid_arguments: 0,
    observed_tasks_saved: 0,
    observed_tasks_not_saved: 0,
    rate_limited: 0,
  };
  private readonly contribute = {
    calls: 0,
    valid_calls: 0,
    accepted_events: 0,
    duplicates: 0,
    conflicts: 0,
    rate_limited: 0,
    storage_errors: 0,
    invalid_arguments: 0,
  };
  private readonly a2aMethods = new ClosedCounter(A2A_METHODS);
  private readonly a2aOutcomes = new ClosedCounter(OUTCOMES);
  private readonly a2aVersions = new ClosedCounter(A2A_PROTOCOL_VERSION_VALUES);

  /** Fingerprints of every counted-type event id seen (rule 1). */
  private readonly eventIds = new FingerprintTable();
  /** Fingerprints of accepted signal ids. */
  private readonly acceptedSignals = new FingerprintTable();
  /** No-match receipts with the earliest time they were seen. */
  private readonly receipts = new FingerprintTable({ withValues: true });
  /** Accepted contributions that carry a receipt: receipt, signal, time. */
  private readonly contributions = new RecordList(6);

  /** Pre-filter positions in the current chunk: the next `mcp_` / `a2a_` at or after the last record start. */
  private nextMcp = -1;
  private nextA2a = -1;

  /** The byte-level reader, or null to parse every record in full (tests compare the two). */
  private readonly reader: RecordReader | null;
  /** Scratch projection of the record being counted. */
  private readonly fields: EventFields = newFields();

  constructor(
    private readonly window: TimeWindow,
    options: AggregatorOptions = {},
  ) {
    this.reader = options.fullParse === true ? null : new RecordReader();
  }

  /** Bytes held by the id tables (bench and tests). */
  get tableBytes(): number {
    return this.eventIds.byteLength + this.acceptedSignals.byteLength + this.receipts.byteLength;
  }

  newChunk(): void {
    this.nextMcp = -1;
    this.nextA2a = -1;
  }

  record(chunk: Buffer, start: number, end: number): void {
    this.records += 1;
    // 08 §5.2 pre-filter: every counted event_type contains `mcp_` or `a2a_`.
    // The next occurrence of each is found once and reused for the records before it.
    if (this.nextMcp < start) this.nextMcp = positionOf(chunk, MCP_BYTES, start);
    if (this.nextMcp + 4 > end) {
      if (this.nextA2a < start) this.nextA2a = positionOf(chunk, A2A_BYTES, start);
      if (this.nextA2a + 4 > end) return;
    }
    this.read(chunk, start, end);
  }

  isolatedRecord(bytes: Buffer): void {
    this.records += 1;
    if (bytes.indexOf(MCP_BYTES) === -1 && bytes.indexOf(A2A_BYTES) === -1) return;
    this.read(bytes, 0, bytes.length);
  }

  oversized(): void {
    this.records += 1;
    this.unparseable += 1;
  }

  /**
   * Counts one record that passed the pre-filter. The byte-level reader
   * (`extract.ts`) answers for nearly every record; whatever it is not certain
   * of goes through `JSON.parse`, whose reading the reader is built (and
   * tested) to equal.
   */
  private read(bytes: Buffer, start: number, end: number): void {
    const fields = this.fields;
    const result = this.reader === null ? READ_UNSURE : this.reader.read(bytes, start, end, fields);
    if (result === READ_EVENT) this.countEvent(fields);
    else if (result === READ_NO_EVENT) this.withoutEventId += 1;
    else this.parsed(bytes.toString("latin1", start, end));
  }

  /**
   * The full parse. Why latin1: it maps each byte to one char, so it is cheaper
   * than UTF-8 decoding and never fails. Every value counted here (types,
   * methods, tool names, results, times) is ASCII and decodes identically, and
   * ids only need equal bytes to give equal fingerprints, which latin1 preserves.
   */
  private parsed(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.unparseable += 1;
      return;
    }
    if (projectParsed(value, this.fields)) this.countEvent(this.fields);
    else this.withoutEventId += 1;
  }

  /** The counting rules of 08 §5.3 over one event's projection. */
  private countEvent(event: EventFields): void {
    const type = event[F_EVENT_TYPE];
    if (type !== "mcp_request" && type !== "mcp_card" && type !== "a2a_request" && type !== "a2a_card") return;
    const id = fnv1a64(event[F_EVENT_ID] as string);
    if (!this.eventIds.add(id.hi, id.lo)) {
      this.duplicates += 1;
      return;
    }
    const time = parseEventTime(event[F_TIME]);
    const { since, until } = this.window;
    if ((since !== null || until !== null) && !(Number.isFinite(time) && (since === null || time >= since) && (until === null || time < until))) {
      this.outsideWindow += 1;
      return;
    }
    if (event[F_CONTROLLED_TEST] === true) {
      this.controlledTests += 1;
      return;
    }
    if (event[F_SELF_REPORTED_TEST] === true) {
      this.selfReportedTests += 1;
      return;
    }
    this.counted += 1;
    this.byType[type] += 1;
    if (time < this.firstEvent) this.firstEvent = time;
    if (time > this.lastEvent) this.lastEvent = time;
    if (type === "mcp_request") this.countMcp(event, time);
    else if (type === "a2a_request") {
      this.a2aMethods.count(event[F_A2A_METHOD]);
      this.a2aOutcomes.count(event[F_OUTCOME]);
      this.a2aVersions.count(event[F_A2A_PROTOCOL_VERSION]);
    }
  }

  private countMcp(event: EventFields, time: number): void {
    const method = event[F_MCP_METHOD];
    this.mcpMethods.count(method);
    if (method === "tools/list") this.toolsList += 1;
    if (method !== "tools/call") return;
    const tool = event[F_TOOL_NAME];
    this.toolCalls.count(tool);
    const result = event[F_TOOL_RESULT];
    const rateLimited = event[F_RATE_LIMITED] === true;
    if (tool === TOOL_PROPOSE_CONTACT) {
      const contacts = this.contacts;
      if (result === CONTACT_STATUS.accepted) {
        if (event[F_DUPLICATE] === true) contacts.duplicates += 1;
        else contacts.saved_new += 1;
      } else if (result === CONTACT_STATUS.conflict) contacts.conflicts += 1;
      else if (result === CONTACT_NOT_SAVED_CODE || result === "dialogue_misconfigured") contacts.not_saved += 1;
      else if (result === "dialogue_not_found") contacts.dialogue_refused += 1;
      else if (result === TOOL_RESULT_INVALID_ARGUMENTS) contacts.invalid_arguments += 1;
      if (rateLimited) contacts.rate_limited += 1;
    } else if (tool === TOOL_SEARCH) {
      const search = this.search;
      if (event[F_VALIDATION_STATUS] === "valid") search.valid_calls += 1;
      if (result === SEARCH_STATUS.matches) search.matches_found += 1;
      else if (result === SEARCH_STATUS.noMatch) {
        search.no_relevant_experience += 1;
        const receipt = event[F_SEARCH_RECEIPT];
        if (typeof receipt === "string") this.seeReceipt(receipt, time);
      } else if (result === SEARCH_STATUS.storageError) search.storage_errors += 1;
      else if (result === TOOL_RESULT_INVALID_ARGUMENTS) search.invalid_arguments += 1;
      if (event[F_OBSERVED_TASK_SAVED] === true) search.observed_tasks_saved += 1;
      else if (event[F_OBSERVED_TASK_SAVED] === false) search.observed_tasks_not_saved += 1;
      if (rateLimited) search.rate_limited += 1;
    } else if (tool === TOOL_CONTRIBUTE) {
      const contribute = this.contribute;
      contribute.calls += 1;
      if (event[F_VALIDATION_STATUS] === "valid") contribute.valid_calls += 1;
      if (result === CONTRIBUTE_STATUS.accepted) {
        contribute.accepted_events += 1;
        this.acceptContribution(event, time);
      } else if (result === CONTRIBUTE_STATUS.duplicate) contribute.duplicates += 1;
      else if (result === CONTRIBUTE_STATUS.conflict) contribute.conflicts += 1;
      else if (result === CONTRIBUTE_STATUS.storageError) contribute.storage_errors += 1;
      else if (result === TOOL_RESULT_INVALID_ARGUMENTS) contribute.invalid_arguments += 1;
      if (rateLimited) contribute.rate_limited += 1;
    }
  }

  /** Remembers a no-match receipt with the earliest time it was seen. */
  private seeReceipt(receipt: string, time: number): void {
    const fingerprint = fnv1a64(receipt);
    if (this.receipts.add(fingerprint.hi, fingerprint.lo, time)) return;
    const seen = this.receipts.lastValue();
    if (Number.isNaN(seen) || time < seen) this.receipts.setLastValue(time);
  }

  private acceptContribution(event: EventFields, time: number): void {
    let signalHi = 0;
    let signalLo = 0;
    const signalId = event[F_SIGNAL_ID];
    const hasSignal = typeof signalId === "string";
    if (hasSignal) {
      const signal = fnv1a64(signalId);
      signalHi = signal.hi;
      signalLo = signal.lo;
      this.acceptedSignals.add(signalHi, signalLo);
    }
    const receiptId = event[F_SEARCH_RECEIPT];
    if (typeof receiptId !== "string") return;
    const receipt = fnv1a64(receiptId);
    this.contributions.push(receipt.hi, receipt.lo, signalHi, signalLo, hasSignal ? 1 : 0, time);
  }

  /** Resolves the receipt correlation (after the whole input) and returns the summary. */
  finish(): MetricsSummary {
    let notSeen = 0;
    let outside = 0;
    const correlated = new FingerprintTable();
    const list = this.contributions;
    for (let index = 0; index < list.size; index += 1) {
      if (!this.receipts.has(list.get(index, C_RECEIPT_HI), list.get(index, C_RECEIPT_LO))) {
        notSeen += 1;
        continue;
      }
      const searchTime = this.receipts.lastValue();
      const time = list.get(index, C_TIME);
      if (time >= searchTime && time <= searchTime + DAY_MS) {
        if (list.get(index, C_HAS_SIGNAL) === 1) correlated.add(list.get(index, C_SIGNAL_HI), list.get(index, C_SIGNAL_LO));
      } else {
        outside += 1;
      }
    }
    return {
      inputs: {
        files: this.files,
        records: this.records,
        unparseable_records: this.unparseable,
        records_without_event_id: this.withoutEventId,
        duplicates_removed: this.duplicates,
        outside_time_window: this.outsideWindow,
        excluded_controlled_test: this.controlledTests,
        excluded_self_reported_test: this.selfReportedTests,
        counted_events: this.counted,
      },
      window: {
        since: formatInstant(this.window.since),
        until: formatInstant(this.window.until),
        first_event: formatInstant(Number.isFinite(this.firstEvent) ? this.firstEvent : null),
        last_event: formatInstant(Number.isFinite(this.lastEvent) ? this.lastEvent : null),
      },
      by_event_type: { ...this.byType },
      mcp: {
        by_method: this.mcpMethods.toObject(),
        tools_list: this.toolsList,
        tool_calls: this.toolCalls.toObject(),
        contacts: { ...this.contacts },
        search: { ...this.search },
        contribute: {
          calls: this.contribute.calls,
          valid_calls: this.contribute.valid_calls,
          accepted_events: this.contribute.accepted_events,
          accepted_signal_ids: this.acceptedSignals.size,
          duplicates: this.contribute.duplicates,
          conflicts: this.contribute.conflicts,
          rate_limited: this.contribute.rate_limited,
          storage_errors: this.contribute.storage_errors,
          invalid_arguments: this.contribute.invalid_arguments,
        },
        receipt_correlation: {
          contributions_with_receipt: list.size,
          correlated_signal_ids: correlated.size,
          receipt_not_seen: notSeen,
          outside_24h: outside,
        },
      },
      a2a: { by_method: this.a2aMethods.toObject(), by_outcome: this.a2aOutcomes.toObject(), by_protocol_version: this.a2aVersions.toObject() },
    };
  }
}

/** `buffer.indexOf(needle, from)`, with "not found" as a position past every record. */
function positionOf(buffer: Buffer, needle: Buffer, from: number): number {
  const found = buffer.indexOf(needle, from);
  return found === -1 ? NOT_FOUND : found;
}
