/**
 * The counting rules of `magnt metrics` (08 §5.3), in two parts: a
 * `RecordCounter` (the scanner's sink) takes each record through the
 * pre-filter and the reading into a row of facts (`facts.ts`), and the
 * `MetricsAggregator` applies the rows in input order — the rules, then the
 * receipt correlation resolved after the whole input (03 §9). A record is read
 * on the main thread or in a worker (`parallel.ts`); either way it is counted
 * by the same two classes.
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
  CONTACT_NOT_SAVED_CODE,
  CONTACT_STATUS,
  CONTRIBUTE_STATUS,
  COUNTED_EVENT_TYPES,
  SEARCH_STATUS,
  TOOL_CONTRIBUTE,
  TOOL_PROPOSE_CONTACT,
  TOOL_RESULT_INVALID_ARGUMENTS,
  TOOL_SEARCH,
} from "../../../worker/contracts";
import { READ_EVENT, READ_NO_EVENT, READ_UNSURE } from "./extract";
import { WasmRecordReader } from "./wasm-reader";
import {
  A2A_METHODS,
  A2A_OUTCOMES,
  A2A_VERSIONS,
  ClosedList,
  encodeEvent,
  EVENT_TYPES,
  FACT_WIDTH,
  FactRows,
  FLAG_CONTROLLED_TEST,
  FLAG_DUPLICATE,
  FLAG_HAS_RECEIPT,
  FLAG_HAS_SIGNAL,
  FLAG_OBSERVED_NOT_SAVED,
  FLAG_OBSERVED_SAVED,
  FLAG_RATE_LIMITED,
  FLAG_SELF_REPORTED_TEST,
  FLAG_VALID,
  MCP_METHODS,
  TOOL_NAMES,
  TOOL_RESULTS,
  X_A2A_METHOD,
  X_A2A_VERSION,
  X_FLAGS,
  X_ID_HI,
  X_ID_LO,
  X_MCP_METHOD,
  X_OUTCOME,
  X_RECEIPT_HI,
  X_RECEIPT_LO,
  X_RESULT,
  X_SIGNAL_HI,
  X_SIGNAL_LO,
  X_TIME,
  X_TOOL,
  X_TYPE,
} from "./facts";
import { newFields, projectParsed } from "./fields";
import { FingerprintTable, RecordList } from "./fingerprint";
import type { RecordSink } from "./scanner";
import { formatInstant } from "./time";

export { NONE_KEY, UNKNOWN_KEY } from "./facts";

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

/** The funnel's main steps of the per-day series (report.ts labels them), in this order. */
export const DAILY_STEPS = ["tools_list", "valid_searches", "no_match", "contributions", "contacts_saved"] as const;
export type DailyStep = (typeof DAILY_STEPS)[number];

/**
 * The per-day series (UTC) of the funnel's main steps, for the human and
 * HTML views only (the `--json` document stays exactly 08 §5.3). `days` are in
 * date order, from the first counted day to the last with every day between
 * (a quiet day is a zero, not a gap), at most the last `MAX_SERIES_DAYS`;
 * `undated` counts the steps of events without a parseable time, which belong
 * to no day, and `earlier` those of older days. A contribution counts on
 * the day its signal id was first accepted, so the days add up to
 * `accepted_signal_ids`; the other steps add up to their counters.
 */
export interface DailySeries {
  days: Array<{ date: string } & Record<DailyStep, number>>;
  undated: Record<DailyStep, number>;
  /** Steps of days more than `MAX_SERIES_DAYS` before the last day (a stray time), folded together. */
  earlier: Record<DailyStep, number>;
}

/** The longest series kept, in days (ten years). */
export const MAX_SERIES_DAYS = 3660;

/** The time window of `--since` (inclusive) and `--until` (exclusive), in ms; null = unbounded. */
export interface TimeWindow {
  since: number | null;
  until: number | null;
}

/** A closed-list counter over codes: the report lists known keys in list order, then `unknown`, then `(none)`. */
class ClosedCounter {
  private readonly counts: Float64Array;

  constructor(private readonly list: ClosedList) {
    this.counts = new Float64Array(list.size);
  }

  count(code: number): void {
    this.counts[code] = this.counts[code]! + 1;
  }

  toObject(): Record<string, number> {
    const result: Record<string, number> = {};
    for (let code = 0; code < this.list.size; code += 1) {
      const value = this.counts[code]!;
      if (value !== 0) result[this.list.key(code)] = value;
    }
    return result;
  }
}

/** Rows the serial path collects before applying them (the initial size of a rows array). */
const DRAIN_ROWS = 1024;

const MCP_BYTES = Buffer.from("mcp_");
const A2A_BYTES = Buffer.from("a2a_");
const NOT_FOUND = Number.MAX_SAFE_INTEGER;

/** Codes the rules compare with. */
const TYPE_MCP_REQUEST = EVENT_TYPES.code("mcp_request");
const TYPE_A2A_REQUEST = EVENT_TYPES.code("a2a_request");
const METHOD_TOOLS_LIST = MCP_METHODS.code("tools/list");
const METHOD_TOOLS_CALL = MCP_METHODS.code("tools/call");
const TOOL_CODE_PROPOSE_CONTACT = TOOL_NAMES.code(TOOL_PROPOSE_CONTACT);
const TOOL_CODE_SEARCH = TOOL_NAMES.code(TOOL_SEARCH);
const TOOL_CODE_CONTRIBUTE = TOOL_NAMES.code(TOOL_CONTRIBUTE);
const R_CONTACT_ACCEPTED = TOOL_RESULTS.code(CONTACT_STATUS.accepted);
const R_CONFLICT = TOOL_RESULTS.code(CONTACT_STATUS.conflict);
const R_STORAGE_UNAVAILABLE = TOOL_RESULTS.code(CONTACT_NOT_SAVED_CODE);
const R_DIALOGUE_MISCONFIGURED = TOOL_RESULTS.code("dialogue_misconfigured");
const R_DIALOGUE_NOT_FOUND = TOOL_RESULTS.code("dialogue_not_found");
const R_INVALID_ARGUMENTS = TOOL_RESULTS.code(TOOL_RESULT_INVALID_ARGUMENTS);
const R_MATCHES = TOOL_RESULTS.code(SEARCH_STATUS.matches);
const R_NO_MATCH = TOOL_RESULTS.code(SEARCH_STATUS.noMatch);
const R_STORAGE_ERROR = TOOL_RESULTS.code(SEARCH_STATUS.storageError);
const R_ACCEPTED = TOOL_RESULTS.code(CONTRIBUTE_STATUS.accepted);
const R_DUPLICATE = TOOL_RESULTS.code(CONTRIBUTE_STATUS.duplicate);
const R_CONTRIBUTE_CONFLICT = TOOL_RESULTS.code(CONTRIBUTE_STATUS.conflict);
const R_CONTRIBUTE_STORAGE_ERROR = TOOL_RESULTS.code(CONTRIBUTE_STATUS.storageError);

/** Indices of `DAILY_STEPS` in a day's counts. */
const D_TOOLS_LIST = 0;
const D_VALID_SEARCHES = 1;
const D_NO_MATCH = 2;
const D_CONTRIBUTIONS = 3;
const D_CONTACTS_SAVED = 4;

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

/**
 * The scanner's sink: counts records, applies the 08 §5.2 pre-filter, reads
 * each remaining record (the byte-level reader, `JSON.parse` where it is
 * unsure) and keeps a row of facts for each counted-type event, in order.
 * `takeInto` hands the counts and rows to the aggregator and starts afresh.
 */
export class RecordCounter implements RecordSink {
  records = 0;
  unparseable = 0;
  withoutEventId = 0;
  /**
   * Whether any record of the current input was JSON (the caller resets it per
   * file): an input of records none of which is JSON is no export at all
   * (random bytes, a `.gz` that is not gzip) and must not pass as an all-zero report.
   */
  readable = false;
  readonly facts = new FactRows();
  /** The byte-level reader, or null to parse every record in full (tests compare the two). */
  private readonly reader: WasmRecordReader | null;
  private readonly fields = newFields();
  /** Pre-filter positions in the current chunk: the next `mcp_` / `a2a_` at or after the last record start. */
  private nextMcp = -1;
  private nextA2a = -1;

  /**
   * `drain`: where the serial path applies the rows as soon as a batch is full,
   * so the rows array never outgrows one batch (a block keeps its rows instead).
   */
  constructor(
    options: AggregatorOptions = {},
    private readonly drain: MetricsAggregator | null = null,
  ) {
    this.reader = options.fullParse === true ? null : new WasmRecordReader();
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
      if (this.nextA2a + 4 > end) {
        if (!this.readable) this.probe(chunk, start, end);
        return;
      }
    }
    this.read(chunk, start, end);
  }

  isolatedRecord(bytes: Buffer): void {
    this.records += 1;
    if (bytes.indexOf(MCP_BYTES) === -1 && bytes.indexOf(A2A_BYTES) === -1) {
      if (!this.readable) this.probe(bytes, 0, bytes.length);
      return;
    }
    this.read(bytes, 0, bytes.length);
  }

  /**
   * Whether a record the pre-filter skips is JSON — asked only until the input
   * has one JSON record, so a real export pays for one parse at most.
   */
  private probe(bytes: Buffer, start: number, end: number): void {
    try {
      JSON.parse(bytes.toString("latin1", start, end));
      this.readable = true;
    } catch {
      // Not JSON: the input stays unreadable unless a later record is.
    }
  }

  oversized(): void {
    this.records += 1;
    this.unparseable += 1;
  }

  /** Starts a block afresh: counts zero, rows written into `rows`. */
  startBlock(rows: Float64Array): void {
    this.records = 0;
    this.unparseable = 0;
    this.withoutEventId = 0;
    this.facts.reset(rows);
  }

  /** Applies what was counted so far to `aggregator` (in order) and starts afresh. */
  takeInto(aggregator: MetricsAggregator): void {
    aggregator.addBlock(this.records, this.unparseable, this.withoutEventId, this.facts.rows, this.facts.count);
    this.records = 0;
    this.unparseable = 0;
    this.withoutEventId = 0;
    this.facts.reset();
  }

  /**
   * Reads one record that passed the pre-filter. The byte-level reader
   * (`extract.ts`, run as WebAssembly by `wasm-reader.ts`) answers for nearly every record; whatever it is not certain
   * of goes through `JSON.parse`, whose reading the reader is built (and
   * tested) to equal.
   */
  private read(bytes: Buffer, start: number, end: number): void {
    const fields = this.fields;
    const result = this.reader === null ? READ_UNSURE : this.reader.read(bytes, start, end, fields);
    if (result === READ_EVENT) {
      this.readable = true;
      this.keep();
    } else if (result === READ_NO_EVENT) {
      this.readable = true;
      this.withoutEventId += 1;
    } else this.parsed(bytes.toString("latin1", start, end));
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
    this.readable = true;
    if (projectParsed(value, this.fields)) this.keep();
    else this.withoutEventId += 1;
  }

  /** Keeps the row of the projected event when it is of a counted type (rule 4 gates the others). */
  private keep(): void {
    const facts = this.facts;
    const at = facts.next(); // may grow `facts.rows`: read it after
    if (!encodeEvent(this.fields, facts.rows, at)) return;
    facts.commit();
    if (this.drain !== null && facts.count === DRAIN_ROWS) this.takeInto(this.drain);
  }
}

/** Applies rows of facts in input order; the summary of 08 §5.3. */
export class MetricsAggregator {
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
  private readonly byType = new Float64Array(COUNTED_EVENT_TYPES.length);
  private readonly mcpMethods = new ClosedCounter(MCP_METHODS);
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
  private readonly a2aOutcomes = new ClosedCounter(A2A_OUTCOMES);
  private readonly a2aVersions = new ClosedCounter(A2A_VERSIONS);

  /** Fingerprints of every counted-type event id seen (rule 1). */
  private readonly eventIds = new FingerprintTable();
  /** Fingerprints of accepted signal ids. */
  private readonly acceptedSignals = new FingerprintTable();
  /** No-match receipts with the earliest time they were seen. */
  private readonly receipts = new FingerprintTable({ withValues: true });
  /** Accepted contributions that carry a receipt: receipt, signal, time. */
  private readonly contributions = new RecordList(6);
  /** Per-day step counts (`DAILY_STEPS` order) by UTC day number; `today` is the current event's. */
  private readonly days = new Map<number, Float64Array>();
  private readonly undated: Float64Array = new Float64Array(DAILY_STEPS.length);
  private readonly earlier: Float64Array = new Float64Array(DAILY_STEPS.length);
  private lastDay = Number.NEGATIVE_INFINITY;
  private today: Float64Array = this.undated;
  private todayNumber = Number.NaN;

  constructor(private readonly window: TimeWindow) {}

  /** Records added so far (to tell how many one input had). */
  get recordCount(): number {
    return this.records;
  }

  /** Bytes held by the id tables (bench and tests). */
  get tableBytes(): number {
    return this.eventIds.byteLength + this.acceptedSignals.byteLength + this.receipts.byteLength;
  }

  /** Adds a stretch of input: its record counts and its counted-type events' rows, in order. */
  addBlock(records: number, unparseable: number, withoutEventId: number, rows: Float64Array, count: number): void {
    this.records += records;
    this.unparseable += unparseable;
    this.withoutEventId += withoutEventId;
    for (let index = 0; index < count; index += 1) this.apply(rows, index * FACT_WIDTH);
  }

  /** Rules 1–3 and the counters, for one counted-type event. */
  private apply(rows: Float64Array, at: number): void {
    if (!this.eventIds.add(rows[at + X_ID_HI]!, rows[at + X_ID_LO]!)) {
      this.duplicates += 1;
      return;
    }
    const time = rows[at + X_TIME]!;
    const { since, until } = this.window;
    if ((since !== null || until !== null) && !(Number.isFinite(time) && (since === null || time >= since) && (until === null || time < until))) {
      this.outsideWindow += 1;
      return;
    }
    const flags = rows[at + X_FLAGS]!;
    if ((flags & FLAG_CONTROLLED_TEST) !== 0) {
      this.controlledTests += 1;
      return;
    }
    if ((flags & FLAG_SELF_REPORTED_TEST) !== 0) {
      this.selfReportedTests += 1;
      return;
    }
    const type = rows[at + X_TYPE]!;
    this.counted += 1;
    this.byType[type] = this.byType[type]! + 1;
    if (time < this.firstEvent) this.firstEvent = time;
    if (time > this.lastEvent) this.lastEvent = time;
    if (type === TYPE_MCP_REQUEST) {
      this.selectDay(time);
      this.countMcp(rows, at, flags, time);
    }
    else if (type === TYPE_A2A_REQUEST) {
      this.a2aMethods.count(rows[at + X_A2A_METHOD]!);
      this.a2aOutcomes.count(rows[at + X_OUTCOME]!);
      this.a2aVersions.count(rows[at + X_A2A_VERSION]!);
    }
  }

  /** Points `today` at the day of `time` (events arrive mostly in time order, so usually it is already there). */
  private selectDay(time: number): void {
    if (!Number.isFinite(time)) {
      this.today = this.undated;
      this.todayNumber = Number.NaN;
      return;
    }
    const day = Math.floor(time / DAY_MS);
    if (day === this.todayNumber) return;
    this.todayNumber = day;
    if (day > this.lastDay) this.lastDay = day;
    if (day <= this.lastDay - MAX_SERIES_DAYS) {
      this.today = this.earlier;
      return;
    }
    let counts = this.days.get(day);
    if (counts === undefined) {
      counts = new Float64Array(DAILY_STEPS.length);
      this.days.set(day, counts);
      // Stray times far apart must not grow the table without bound: fold the days that left the series.
      if (this.days.size > 2 * MAX_SERIES_DAYS) this.foldEarlierDays();
    }
    this.today = counts;
  }

  /** Moves the days more than `MAX_SERIES_DAYS` before the last one into `earlier`. */
  private foldEarlierDays(): void {
    const earlier = this.earlier;
    for (const [day, counts] of this.days) {
      if (day > this.lastDay - MAX_SERIES_DAYS) continue;
      counts.forEach((value, index) => (earlier[index] = earlier[index]! + value));
      this.days.delete(day);
    }
  }

  private countMcp(rows: Float64Array, at: number, flags: number, time: number): void {
    const method = rows[at + X_MCP_METHOD]!;
    const today = this.today;
    this.mcpMethods.count(method);
    if (method === METHOD_TOOLS_LIST) {
      this.toolsList += 1;
      today[D_TOOLS_LIST] = today[D_TOOLS_LIST]! + 1;
    }
    if (method !== METHOD_TOOLS_CALL) return;
    const tool = rows[at + X_TOOL]!;
    this.toolCalls.count(tool);
    const result = rows[at + X_RESULT]!;
    const rateLimited = (flags & FLAG_RATE_LIMITED) !== 0;
    if (tool === TOOL_CODE_PROPOSE_CONTACT) {
      const contacts = this.contacts;
      if (result === R_CONTACT_ACCEPTED) {
        if ((flags & FLAG_DUPLICATE) !== 0) contacts.duplicates += 1;
        else {
          contacts.saved_new += 1;
          today[D_CONTACTS_SAVED] = today[D_CONTACTS_SAVED]! + 1;
        }
      } else if (result === R_CONFLICT) contacts.conflicts += 1;
      else if (result === R_STORAGE_UNAVAILABLE || result === R_DIALOGUE_MISCONFIGURED) contacts.not_saved += 1;
      else if (result === R_DIALOGUE_NOT_FOUND) contacts.dialogue_refused += 1;
      else if (result === R_INVALID_ARGUMENTS) contacts.invalid_arguments += 1;
      if (rateLimited) contacts.rate_limited += 1;
    } else if (tool === TOOL_CODE_SEARCH) {
      const search = this.search;
      if ((flags & FLAG_VALID) !== 0) {
        search.valid_calls += 1;
        today[D_VALID_SEARCHES] = today[D_VALID_SEARCHES]! + 1;
      }
      if (result === R_MATCHES) search.matches_found += 1;
      else if (result === R_NO_MATCH) {
        search.no_relevant_experience += 1;
        today[D_NO_MATCH] = today[D_NO_MATCH]! + 1;
        if ((flags & FLAG_HAS_RECEIPT) !== 0) this.seeReceipt(rows[at + X_RECEIPT_HI]!, rows[at + X_RECEIPT_LO]!, time);
      } else if (result === R_STORAGE_ERROR) search.storage_errors += 1;
      else if (result === R_INVALID_ARGUMENTS) search.invalid_arguments += 1;
      if ((flags & FLAG_OBSERVED_SAVED) !== 0) search.observed_tasks_saved += 1;
      else if ((flags & FLAG_OBSERVED_NOT_SAVED) !== 0) search.observed_tasks_not_saved += 1;
      if (rateLimited) search.rate_limited += 1;
    } else if (tool === TOOL_CODE_CONTRIBUTE) {
      const contribute = this.contribute;
      contribute.calls += 1;
      if ((flags & FLAG_VALID) !== 0) contribute.valid_calls += 1;
      if (result === R_ACCEPTED) {
        contribute.accepted_events += 1;
        this.acceptContribution(rows, at, flags, time);
      } else if (result === R_DUPLICATE) contribute.duplicates += 1;
      else if (result === R_CONTRIBUTE_CONFLICT) contribute.conflicts += 1;
      else if (result === R_CONTRIBUTE_STORAGE_ERROR) contribute.storage_errors += 1;
      else if (result === R_INVALID_ARGUMENTS) contribute.invalid_arguments += 1;
      if (rateLimited) contribute.rate_limited += 1;
    }
  }

  /** Remembers a no-match receipt with the earliest time it was seen. */
  private seeReceipt(hi: number, lo: number, time: number): void {
    if (this.receipts.add(hi, lo, time)) return;
    const seen = this.receipts.lastValue();
    if (Number.isNaN(seen) || time < seen) this.receipts.setLastValue(time);
  }

  private acceptContribution(rows: Float64Array, at: number, flags: number, time: number): void {
    const hasSignal = (flags & FLAG_HAS_SIGNAL) !== 0;
    const signalHi = hasSignal ? rows[at + X_SIGNAL_HI]! : 0;
    const signalLo = hasSignal ? rows[at + X_SIGNAL_LO]! : 0;
    if (hasSignal && this.acceptedSignals.add(signalHi, signalLo)) this.today[D_CONTRIBUTIONS] = this.today[D_CONTRIBUTIONS]! + 1;
    if ((flags & FLAG_HAS_RECEIPT) === 0) return;
    this.contributions.push(rows[at + X_RECEIPT_HI]!, rows[at + X_RECEIPT_LO]!, signalHi, signalLo, hasSignal ? 1 : 0, time);
  }

  /** The per-day series of everything applied so far. */
  daily(): DailySeries {
    const record = (counts: Float64Array) =>
      Object.fromEntries(DAILY_STEPS.map((step, index) => [step, counts[index]!])) as Record<DailyStep, number>;
    this.foldEarlierDays();
    let first = Number.POSITIVE_INFINITY;
    for (const day of this.days.keys()) if (day < first) first = day;
    const days: DailySeries["days"] = [];
    const zero = new Float64Array(DAILY_STEPS.length);
    for (let day = first; day <= this.lastDay; day += 1) {
      days.push({ date: new Date(day * DAY_MS).toISOString().slice(0, 10), ...record(this.days.get(day) ?? zero) });
    }
    return { days, undated: record(this.undated), earlier: record(this.earlier) };
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
      by_event_type: Object.fromEntries(COUNTED_EVENT_TYPES.map((type, code) => [type, this.byType[code]!])) as Record<CountedEventType, number>,
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
