/**
 * The human view of `magnt metrics` (08 §5.3): the inputs and exclusions, the
 * funnel as horizontal bars, then the detail tables. It shows exactly the
 * numbers of the `--json` summary (plus one derived row, the records that were
 * read but are not counted events), and every label is fixed text or a key
 * from a closed list — nothing from the events.
 */
import type { Output } from "../../lib/output";
import type { MetricsSummary } from "./aggregate";

/** Width of the longest funnel bar, in cells. */
export const FUNNEL_BAR_WIDTH = 32;
const BAR = "█";

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

/** One bar scaled to `max` (a non-zero count always shows at least one cell). */
export function bar(count: number, max: number, width = FUNNEL_BAR_WIDTH): string {
  if (count <= 0 || max <= 0) return "";
  return BAR.repeat(Math.max(1, Math.round((count / max) * width)));
}

function formatPercent(value: number | null): string {
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

function counterRows(values: Record<string, number>): Array<[string, number]> {
  return Object.entries(values).map(([key, value]) => [key.replaceAll("_", " "), value]);
}

function keyedRows(values: Record<string, number>): Array<[string, number]> {
  const rows = Object.entries(values);
  return rows.length === 0 ? [["(no events)", 0]] : rows;
}

/** Writes the whole report to stdout. */
export function renderReport(out: Output, summary: MetricsSummary): void {
  const { inputs, window } = summary;
  const paint = out.paint;
  out.line(paint.bold("magnt metrics — counted requests (not visitors); tests excluded by their labels only"));
  out.line("");
  out.table(
    ["inputs", "count"],
    [
      ["files", inputs.files],
      ["records read", inputs.records],
      ["unparseable records", inputs.unparseable_records],
      ["records without event id", inputs.records_without_event_id],
      ["not counted (other event types)", notCountedRecords(inputs)],
      ["duplicates removed", inputs.duplicates_removed],
      ["outside the time window", inputs.outside_time_window],
      ["excluded: controlled tests", inputs.excluded_controlled_test],
      ["excluded: self-reported tests", inputs.excluded_self_reported_test],
      ["counted events", inputs.counted_events],
    ],
  );
  out.table(
    ["window", "time (UTC)"],
    [
      ["since (inclusive)", window.since ?? "unbounded"],
      ["until (exclusive)", window.until ?? "unbounded"],
      ["first counted event", window.first_event ?? "—"],
      ["last counted event", window.last_event ?? "—"],
    ],
  );

  const { steps, contacts } = funnelSteps(summary);
  const max = Math.max(...steps.map((step) => step.count), contacts.count);
  const labelWidth = Math.max(...[...steps, contacts].map((step) => step.label.length));
  const countWidth = Math.max(...[...steps, contacts].map((step) => String(step.count).length));
  const line = (step: FunnelStep): string => {
    const drawn = bar(step.count, max);
    return `  ${step.label.padEnd(labelWidth)}  ${paint.ok(drawn)}${" ".repeat(FUNNEL_BAR_WIDTH - drawn.length)}  ${String(step.count).padStart(countWidth)}  ${paint.dim(formatPercent(step.stepPercent))}`;
  };
  out.line("");
  out.line(paint.bold("Funnel (each % is of the step above)"));
  for (const step of steps) out.line(line(step));
  out.line(line(contacts));
  out.line("");

  out.table(["event type", "count"], Object.entries(summary.by_event_type));
  out.table(["MCP method", "count"], keyedRows(summary.mcp.by_method));
  out.table(["tool called", "count"], keyedRows(summary.mcp.tool_calls));
  out.table(["propose_contact", "count"], counterRows(summary.mcp.contacts));
  out.table(["search_shared_experience", "count"], counterRows(summary.mcp.search));
  out.table(["contribute_task_signal", "count"], counterRows(summary.mcp.contribute));
  out.table(["search receipt correlation", "count"], counterRows(summary.mcp.receipt_correlation));
  out.table(["A2A method", "count"], keyedRows(summary.a2a.by_method));
  out.table(["A2A outcome", "count"], keyedRows(summary.a2a.by_outcome));
  out.table(["A2A protocol version", "count"], keyedRows(summary.a2a.by_protocol_version));
}
