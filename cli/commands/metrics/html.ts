/**
 * `magnt metrics --html <file>` (08 §5.4): the report as one self-contained
 * page — the funnel and the per-day series as inline SVG charts, every count
 * as a table. No script, no font, no image, nothing fetched: a Content
 * Security Policy of `default-src 'none'` (inline styles only) says so to the
 * browser too, so the page is safe to open from a mail or a shared folder.
 *
 * The numbers are those of the human view (`report.ts` builds the rows), and
 * every piece of text goes through `escapeHtml` — the labels are fixed text or
 * closed-list keys today, but the page must stay safe if that ever changes.
 */
import { DAILY_STEPS, type DailySeries, type MetricsSummary } from "./aggregate";
import { DAILY_LABELS, dailyTableRows, detailGroups, formatPercent, funnelSteps, inputRows, windowRows } from "./report";

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text for an element or an attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}h3{font-size:1em;margin:1.2em 0 .3em}
svg{display:block;max-width:100%;height:auto}
.bar{fill:#3b7dd8}.day{fill:#2a9d6f}.quiet{fill:#ccc}
text{font:12px system-ui,sans-serif;fill:#222}.dim{fill:#777}
table{border-collapse:collapse;margin:.3em 1.5em 1em 0;display:inline-table;vertical-align:top}
th,td{border:1px solid #ddd;padding:.15em .6em;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f5f8}p.note{color:#555}
`;

function table(head: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const headRow = `<tr>${head.map((cell) => `<th>${escapeHtml(cell)}</th>`).join("")}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((cell) => (typeof cell === "number" ? `<td class="n">${cell}</td>` : `<td>${escapeHtml(cell)}</td>`)).join("")}</tr>`);
  return `<table>${headRow}${body.join("")}</table>`;
}

/** The funnel as horizontal bars, each labelled with its count and its % of the step above. */
function funnelChart(summary: MetricsSummary): string {
  const { steps, contacts } = funnelSteps(summary);
  const all = [...steps, contacts];
  const max = Math.max(1, ...all.map((step) => step.count));
  const labelWidth = 230;
  const barWidth = 400;
  const rowHeight = 26;
  const rows = all.map((step, index) => {
    const y = index * rowHeight + (index === all.length - 1 ? 10 : 0);
    const width = step.count === 0 ? 0 : Math.max(2, Math.round((step.count / max) * barWidth));
    const percent = formatPercent(step.stepPercent);
    return (
      `<g><text x="0" y="${y + 17}">${escapeHtml(step.label)}</text>` +
      `<rect class="bar" x="${labelWidth}" y="${y + 4}" width="${width}" height="18"><title>${escapeHtml(`${step.label}: ${step.count}`)}</title></rect>` +
      `<text x="${labelWidth + width + 6}" y="${y + 17}">${step.count}${percent === "" ? "" : ` <tspan class="dim">(${escapeHtml(percent)})</tspan>`}</text></g>`
    );
  });
  const height = all.length * rowHeight + 14;
  return `<svg role="img" aria-label="Funnel" viewBox="0 0 ${labelWidth + barWidth + 110} ${height}" width="${labelWidth + barWidth + 110}" height="${height}">${rows.join("")}</svg>`;
}

/** One step's per-day series as a bar chart, the first and last dates under it. */
function dailyChart(daily: DailySeries, step: (typeof DAILY_STEPS)[number]): string {
  const counts = daily.days.map((day) => day[step]);
  const max = Math.max(1, ...counts);
  const plotWidth = 640;
  const plotHeight = 70;
  const slot = plotWidth / Math.max(1, counts.length);
  const bars = daily.days.map((day, index) => {
    const count = day[step];
    const height = count === 0 ? 1 : Math.max(2, (count / max) * plotHeight);
    const x = (index * slot).toFixed(2);
    return `<rect class="${count === 0 ? "quiet" : "day"}" x="${x}" y="${(plotHeight - height).toFixed(2)}" width="${Math.max(1, slot - 1).toFixed(2)}" height="${height.toFixed(2)}"><title>${escapeHtml(`${day.date}: ${count}`)}</title></rect>`;
  });
  const first = daily.days[0]?.date ?? "";
  const last = daily.days.at(-1)?.date ?? "";
  const total = counts.reduce((sum, count) => sum + count, 0);
  return (
    `<h3>${escapeHtml(DAILY_LABELS[step])} — ${total} in ${counts.length} day${counts.length === 1 ? "" : "s"}, busiest ${Math.max(0, ...counts)}</h3>` +
    `<svg role="img" aria-label="${escapeHtml(`${DAILY_LABELS[step]} per day`)}" viewBox="0 0 ${plotWidth} ${plotHeight + 18}" width="${plotWidth}" height="${plotHeight + 18}">${bars.join("")}` +
    `<text class="dim" x="0" y="${plotHeight + 14}">${escapeHtml(first)}</text>` +
    `<text class="dim" x="${plotWidth}" y="${plotHeight + 14}" text-anchor="end">${escapeHtml(last)}</text></svg>`
  );
}

/** The whole page. */
export function renderHtml(summary: MetricsSummary, daily: DailySeries): string {
  const series =
    daily.days.length === 0
      ? `<p class="note">No dated events.</p>`
      : DAILY_STEPS.map((step) => dailyChart(daily, step)).join("\n") +
        table(
          ["day (UTC)", ...DAILY_STEPS.map((step) => DAILY_LABELS[step])],
          dailyTableRows(daily),
        );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>magnt metrics</title>
<style>${STYLE}</style>
</head>
<body>
<h1>magnt metrics</h1>
<p class="note">Counted requests, not visitors; tests excluded by their labels only. Counts only: nothing from the events' text.</p>
<h2>Funnel</h2>
<p class="note">Each percentage is of the step above.</p>
${funnelChart(summary)}
<h2>Per day (UTC)</h2>
<p class="note">Each chart is scaled to its own busiest day; a grey mark is a day without that step.</p>
${series}
<h2>Counts</h2>
${table(["inputs", "count"], inputRows(summary.inputs))}
${table(["window", "time (UTC)"], windowRows(summary.window))}
<h2>Details</h2>
${detailGroups(summary)
  .map((group) => table([group.title, "count"], group.rows))
  .join("\n")}
</body>
</html>
`;
}
