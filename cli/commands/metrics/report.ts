/**
 * The human view of `magnt metrics` (08 §5.4), built to be read at a glance
 * on one 80×40 screen: the funnel first (what the owner runs it for), then the
 * per-day series of the funnel's steps, then one compact block of the input
 * counts and the window, then the detail counters packed a line each. `--full`
 * adds every counter as its own table and every day as a row.
 *
 * It shows exactly the numbers of the `--json` summary (plus one derived row,
 * the records that were read but are not counted events) and the per-day
 * series, and every label is fixed text or a key from a closed list — nothing
 * from the events. Every line is fitted to the terminal width.
 */
import type { Output } from "../../lib/output";
import { displayWidth } from "../../lib/terminal-text";
import { DAILY_STEPS, MAX_SERIES_DAYS, type DailySeries, type DailyStep, type MetricsSummary } from "./aggregate";

/** Width of the longest funnel bar, in cells (narrower when the terminal is). */
export const FUNNEL_BAR_WIDTH = 32;
const BAR = "█";
/** Sparkline marks, one per day: a quiet day, then eight heights. */
const QUIET_DAY = "·";
const SPARKS = "▁▂▃▄▅▆▇█";
const INDENT = "  ";
/** Where a detail line's continuation starts (under the label, a little in). */
const HANGING = 6;

export interface FunnelStep {
  label: string;
  count: number;
  /** Percentage of the previous step, or null for the first step or after a zero. */
  stepPercent: number | null;
}

/** The funnel of 08 §5 / the issue: tools/list → valid searches → no match → contributions → correlated; contacts apart. */
export function funnelSteps(summary: MetricsSummary): { steps: FunnelStep[]; contacts: FunnelStep } {
  const chain: Array<[string, number]> = [
    ["tools/list requests", summary.mcp.tools_list],
    ["valid searches", summary.mcp.search.valid_calls],
    ["searches with no match", summary.mcp.search.no_relevant_experience],
    ["contributions (signals accepted)", summary.mcp.contribute.accepted_signal_ids],
    ["correlated within 24 h", summary.mcp.receipt_correlation.correlated_signal_ids],
  ];
  const steps = chain.map(([label, count], index) => {
    const previous = index === 0 ? 0 : chain[index - 1]![1];
    return { label, count, stepPercent: index === 0 || previous === 0 ? null : (count / previous) * 100 };
  });
  return { steps, contacts: { label: "contacts saved (new)", count: summary.mcp.contacts.saved_new, stepPercent: null } };
}

/** The per-day steps' labels (short: the marks need the room). */
export const DAILY_LABELS: Record<DailyStep, string> = {
  tools_list: "tools/list",
  valid_searches: "valid searches",
  no_match: "no match",
  contributions: "contributions",
  contacts_saved: "contacts saved",
};

/** The per-day table's column heads (`--full`; narrower still, so six columns fit 80). */
const DAILY_HEADS: Record<DailyStep, string> = {
  tools_list: "tools/list",
  valid_searches: "searches",
  no_match: "no match",
  contributions: "signals",
  contacts_saved: "contacts",
};

/** One bar scaled to `max` (a non-zero count always shows at least one cell). */
export function bar(count: number, max: number, width = FUNNEL_BAR_WIDTH): string {
  if (count <= 0 || max <= 0) return "";
  return BAR.repeat(Math.max(1, Math.round((count / max) * width)));
}

/** One mark per day scaled to the busiest day of `counts` (a non-zero day is never the lowest-but-quiet mark). */
export function sparkline(counts: readonly number[]): string {
  const max = Math.max(0, ...counts);
  return counts.map((count) => (count <= 0 ? QUIET_DAY : SPARKS[Math.max(0, Math.ceil((count / max) * SPARKS.length) - 1)]!)).join("");
}

export function formatPercent(value: number | null): string {
  if (value === null) return "";
  return `${value >= 10 || value === 0 ? value.toFixed(0) : value.toFixed(1)}%`;
}

/** Records read that are none of the other input buckets (other event types, or skipped by the pre-filter). */
export function notCountedRecords(inputs: MetricsSummary["inputs"]): number {
  return (
    inputs.records -
    inputs.unparseable_records -
    inputs.records_without_event_id -
    inputs.duplicates_removed -
    inputs.outside_time_window -
    inputs.excluded_controlled_test -
    inputs.excluded_self_reported_test -
    inputs.counted_events
  );
}

/** The inputs block, in the order of the `--json` document (the derived row after the ids). */
export function inputRows(inputs: MetricsSummary["inputs"]): Array<[string, number]> {
  return [
    ["files", inputs.files],
    ["records read", inputs.records],
    ["unparseable records", inputs.unparseable_records],
    ["without event id", inputs.records_without_event_id],
    ["not counted (other types)", notCountedRecords(inputs)],
    ["duplicates removed", inputs.duplicates_removed],
    ["outside the time window", inputs.outside_time_window],
    ["excluded: controlled tests", inputs.excluded_controlled_test],
    ["excluded: self-reported", inputs.excluded_self_reported_test],
    ["counted events", inputs.counted_events],
  ];
}

export function windowRows(window: MetricsSummary["window"]): Array<[string, string]> {
  return [
    ["since (inclusive)", window.since ?? "unbounded"],
    ["until (exclusive)", window.until ?? "unbounded"],
    ["first counted event", window.first_event ?? "—"],
    ["last counted event", window.last_event ?? "—"],
  ];
}

function counterRows(values: Record<string, number>): Array<[string, number]> {
  return Object.entries(values).map(([key, value]) => [key.replaceAll("_", " "), value]);
}

function keyedRows(values: Record<string, number>): Array<[string, number]> {
  const rows = Object.entries(values);
  return rows.length === 0 ? [["(no events)", 0]] : rows;
}

/** The detail counters: a title and its rows, in the `--json` document's order. */
export function detailGroups(summary: MetricsSummary): Array<{ title: string; short: string; rows: Array<[string, number]> }> {
  return [
    { title: "event type", short: "event types", rows: Object.entries(summary.by_event_type) },
    { title: "MCP method", short: "MCP methods", rows: keyedRows(summary.mcp.by_method) },
    { title: "tool called", short: "tools called", rows: keyedRows(summary.mcp.tool_calls) },
    { title: "propose_contact", short: "contacts", rows: counterRows(summary.mcp.contacts) },
    { title: "search_shared_experience", short: "searches", rows: counterRows(summary.mcp.search) },
    { title: "contribute_task_signal", short: "contributions", rows: counterRows(summary.mcp.contribute) },
    { title: "search receipt correlation", short: "correlation", rows: counterRows(summary.mcp.receipt_correlation) },
    { title: "A2A method", short: "A2A methods", rows: keyedRows(summary.a2a.by_method) },
    { title: "A2A outcome", short: "A2A outcomes", rows: keyedRows(summary.a2a.by_outcome) },
    { title: "A2A protocol version", short: "A2A versions", rows: keyedRows(summary.a2a.by_protocol_version) },
  ];
}

/**
 * `label  item · item · item`, wrapped between items to `width`; continuation
 * lines are indented under the first item, or by `hanging` columns. An item wider than the line is
 * printed whole on its own line (items are a few words and a number).
 */
export function packed(label: string, labelWidth: number, items: readonly string[], width: number, hanging?: number): string[] {
  const head = `${INDENT}${label.padEnd(labelWidth)}${labelWidth === 0 ? " " : "  "}`;
  const indent = " ".repeat(hanging ?? head.length);
  const lines: string[] = [];
  let line = head;
  let empty = true;
  for (const item of items) {
    const piece = empty ? item : ` · ${item}`;
    if (!empty && displayWidth(line) + displayWidth(piece) > width) {
      lines.push(line);
      line = indent + item;
    } else line += piece;
    empty = false;
  }
  lines.push(line);
  return lines.map((text) => text.trimEnd());
}

/** The days the compact view shows: the latest that fit `marks` columns. */
function lastDays(daily: DailySeries, marks: number): DailySeries["days"] {
  return daily.days.slice(Math.max(0, daily.days.length - Math.max(1, marks)));
}

/** Writes the whole report to stdout. */
export function renderReport(out: Output, summary: MetricsSummary, daily: DailySeries, options: { full?: boolean } = {}): void {
  const width = out.width;
  const paint = out.paint;

  // The funnel: label, bar, count, % of the step above; the bar gives way to a narrow terminal.
  const { steps, contacts } = funnelSteps(summary);
  const all = [...steps, contacts];
  const max = Math.max(...all.map((step) => step.count));
  const labelWidth = Math.max(...all.map((step) => step.label.length));
  const countWidth = Math.max(...all.map((step) => String(step.count).length));
  const percentWidth = Math.max(...all.map((step) => formatPercent(step.stepPercent).length));
  const fixed = INDENT.length + labelWidth + 2 + 2 + countWidth + (percentWidth > 0 ? 2 + percentWidth : 0);
  const barWidth = Math.max(1, Math.min(FUNNEL_BAR_WIDTH, width - fixed));
  const funnelLine = (step: FunnelStep): string => {
    const drawn = bar(step.count, max, barWidth);
    const percent = formatPercent(step.stepPercent);
    const line = `${INDENT}${step.label.padEnd(labelWidth)}  ${paint.ok(drawn)}${" ".repeat(barWidth - drawn.length)}  ${String(step.count).padStart(countWidth)}`;
    return percent === "" ? line : `${line}  ${paint.dim(percent)}`;
  };
  out.line(`${paint.bold("Funnel")} — requests, not visitors; tests excluded by label; % of the step above`);
  for (const step of all) out.line(funnelLine(step));
  out.line("");

  // The per-day series: one mark per UTC day, each step scaled to its own busiest day.
  const dailyLabelWidth = Math.max(...DAILY_STEPS.map((step) => DAILY_LABELS[step].length));
  const totals = DAILY_STEPS.map((step) => daily.days.reduce((sum, day) => sum + day[step], 0));
  const totalWidth = Math.max(...totals.map((total) => String(total).length));
  const days = lastDays(daily, width - (INDENT.length + dailyLabelWidth + 2 + 2 + totalWidth));
  if (days.length === 0) {
    out.line(`${paint.bold("Per day (UTC)")}: no dated events`);
  } else {
    const span = days.length === 1 ? days[0]!.date : `${days[0]!.date} … ${days.at(-1)!.date}`;
    const shown = days.length === daily.days.length ? `${days.length} day${days.length === 1 ? "" : "s"}` : `last ${days.length} of ${daily.days.length} days`;
    out.line(`${paint.bold("Per day (UTC)")} ${span}, ${shown}`);
    DAILY_STEPS.forEach((step, index) => {
      const marks = sparkline(days.map((day) => day[step]));
      out.line(`${INDENT}${DAILY_LABELS[step].padEnd(dailyLabelWidth)}  ${paint.ok(marks)}  ${String(totals[index]).padStart(totalWidth)}`);
    });
  }
  const undated = DAILY_STEPS.reduce((sum, step) => sum + daily.undated[step], 0);
  if (undated > 0) out.line(`${INDENT}${paint.dim(`+ ${undated} step events without a time (in no day)`)}`);
  const earlier = DAILY_STEPS.reduce((sum, step) => sum + daily.earlier[step], 0);
  if (earlier > 0) out.line(`${INDENT}${paint.dim(`+ ${earlier} step events over ${MAX_SERIES_DAYS} days before the last day`)}`);

  // The counts: one compact block, two columns when they fit, the window in its heading.
  const { window } = summary;
  const events = window.first_event === null ? "no dated events" : `${window.first_event} … ${window.last_event}`;
  const bounded = window.since !== null || window.until !== null;
  out.line(`${paint.bold("Counts")} — ${bounded ? `since ${window.since ?? "unbounded"} · until ${window.until ?? "unbounded"}` : `all events, ${events}`}`);
  const rows = inputRows(summary.inputs);
  const rowLabel = Math.max(...rows.map(([label]) => label.length));
  const rowValue = Math.max(...rows.map(([, value]) => String(value).length));
  const cell = ([label, value]: [string, number]) => `${label.padEnd(rowLabel)}  ${String(value).padStart(rowValue)}`;
  const cellWidth = rowLabel + 2 + rowValue;
  if (INDENT.length + cellWidth * 2 + 4 <= width) {
    const half = Math.ceil(rows.length / 2);
    for (let index = 0; index < half; index += 1) {
      const right = rows[index + half];
      out.line(`${INDENT}${cell(rows[index]!)}${right === undefined ? "" : `    ${cell(right)}`}`);
    }
  } else for (const row of rows) out.line(`${INDENT}${cell(row)}`);
  if (bounded) out.line(`${INDENT}counted events ${events}`);

  if (options.full === true) {
    renderFullTables(out, summary, daily);
    return;
  }
  out.line(`${paint.bold("Details")} ${paint.dim("(--full: every table and every day; --html <file>: charts)")}`);
  for (const group of detailGroups(summary)) {
    for (const line of packed(`${group.short}:`, 0, group.rows.map(([key, value]) => `${key} ${value}`), width, HANGING)) out.line(line);
  }
}

/** The per-day table's rows (`--full` and `--html`): every day, then the folded older days and the undated events when there are any. */
export function dailyTableRows(daily: DailySeries): Array<Array<string | number>> {
  const extra = (label: string, counts: DailySeries["undated"]) => (DAILY_STEPS.some((step) => counts[step] > 0) ? [[label, ...DAILY_STEPS.map((step) => counts[step])]] : []);
  return [...extra("earlier", daily.earlier), ...daily.days.map((day) => [day.date, ...DAILY_STEPS.map((step) => day[step])]), ...extra("no time", daily.undated)];
}

/** `--full`: the inputs, window, every day and every counter group as tables. */
function renderFullTables(out: Output, summary: MetricsSummary, daily: DailySeries): void {
  out.table(["inputs", "count"], inputRows(summary.inputs));
  out.table(["window", "time (UTC)"], windowRows(summary.window));
  out.table(
    ["day (UTC)", ...DAILY_STEPS.map((step) => DAILY_HEADS[step])],
    dailyTableRows(daily),
  );
  for (const group of detailGroups(summary)) out.table([group.title, "count"], group.rows);
}
