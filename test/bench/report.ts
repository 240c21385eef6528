/**
 * The benchmark's rows and its two outputs (10 §6): the table printed to the
 * terminal plus dist/bench/report.json, and docs/performance.md — written by
 * the bench itself so the published figures are always those of one real run,
 * with the machine, date, load and command next to them.
 *
 * A row is a gate (a miss fails the run), a reported target (flagged, never
 * fails) or information. A gated ratio can also carry its reported target, so
 * one line shows the figure, its spread, the gate and the target.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { arch, availableParallelism, cpus, loadavg, platform, release, totalmem } from "node:os";
import { dirname } from "node:path";
import type { BenchRow } from "./metrics";

export type Status = "ok" | "missed" | "not measured";

export interface Row extends BenchRow {
  status: Status;
  /** Spread of a figure measured over several rounds ("0.88–1.02 over 8 rounds"). */
  spread?: string;
  /** Raw figures behind a ratio ("door 1.21 ms / echo 1.30 ms"). */
  detail?: string;
  /** A reported target carried by a gate row ("≤ 1.0"), and whether it was met. */
  target?: string;
  targetMet?: boolean;
}

export interface Extras {
  spread?: string;
  detail?: string;
  target?: { budget: string; met: boolean };
}

/** A free-form section of docs/performance.md (method, details) contributed by one benchmark. */
export interface DocSection {
  title: string;
  body: string;
}

export class Report {
  readonly rows: Row[] = [];
  readonly sections: DocSection[] = [];

  /** The recording function the metrics module takes (its signature is fixed there). */
  readonly record = (row: BenchRow, passes: boolean | null, extras: Extras = {}): void => {
    this.rows.push({
      ...row,
      status: passes === null ? "not measured" : passes ? "ok" : "missed",
      ...(extras.spread === undefined ? {} : { spread: extras.spread }),
      ...(extras.detail === undefined ? {} : { detail: extras.detail }),
      ...(extras.target === undefined ? {} : { target: extras.target.budget, targetMet: extras.target.met }),
    });
  };

  section(title: string, body: string): void {
    this.sections.push({ title, body });
  }

  missedGates(): Row[] {
    return this.rows.filter((row) => row.kind === "gate" && row.status === "missed");
  }

  /** Targets missed: target rows, and gate rows whose carried target was missed. */
  missedTargets(): Row[] {
    return this.rows.filter((row) => (row.kind === "target" && row.status === "missed") || (row.status === "ok" && row.targetMet === false));
  }
}

export function formatValue(value: number | null): string {
  if (value === null) return "—";
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(3);
}

export function statusText(row: Row): string {
  if (row.status === "missed") return row.kind === "target" ? "missed (target)" : "MISSED (gate)";
  if (row.status === "ok" && row.targetMet === false) return `ok, target ${row.target} missed`;
  return row.status;
}

function budgetText(row: Row): string {
  const parts = [row.budget, row.target === undefined ? "" : `target ${row.target}`].filter((part) => part !== "");
  return parts.join("; ");
}

export function printTable(report: Report): void {
  const header = ["benchmark", "measurement", "value", "unit", "spread", "budget", "kind", "status"];
  const lines = report.rows.map((row) => [row.benchmark, row.measurement, formatValue(row.value), row.unit, row.spread ?? "", budgetText(row), row.kind, statusText(row)]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (line: string[]) => line.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd();
  console.log(format(header));
  console.log(widths.map((width) => "-".repeat(width)).join("  "));
  for (const line of lines) console.log(format(line));
}

// ---------------------------------------------------------------- machine

export interface Machine {
  cpuModel: string;
  nproc: number;
  totalMemoryMB: number;
  node: string;
  os: string;
  /** `uptime` at the start and at the end of the run (the machine may be shared). */
  uptimeStart: string;
  uptimeEnd?: string;
}

function uptime(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return `load average: ${loadavg().map((load) => load.toFixed(2)).join(", ")}`;
  }
}

export function describeMachine(): Machine {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    nproc: availableParallelism(),
    totalMemoryMB: Math.round(totalmem() / 1e6),
    node: process.version,
    os: `${platform()} ${release()} ${arch()}`,
    uptimeStart: uptime(),
  };
}

export function finishMachine(machine: Machine): Machine {
  return { ...machine, uptimeEnd: uptime() };
}

// ---------------------------------------------------------------- docs/performance.md

const escapeCell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function renderPerformanceDoc(report: Report, machine: Machine, meta: { date: string; command: string; seconds: number }): string {
  const gates = report.rows.filter((row) => row.kind === "gate");
  const missedGates = report.missedGates();
  const missedTargets = report.missedTargets();
  const notMeasured = report.rows.filter((row) => row.status === "not measured");
  const lines: string[] = [
    "# Performance",
    "",
    "<!-- Written by `npm run bench` (test/bench/report.ts); edit the benchmark, not this file. -->",
    "",
    "The figures of one `npm run bench` run (budgets: spec 10 §6 and issue 14). Every ratio compares two sides measured",
    "interleaved in the same run; a gate that is missed fails the run, a target that is missed is reported here with its figure.",
    "",
    "## Run",
    "",
    `- Date: ${meta.date} (run took ${Math.round(meta.seconds)} s)`,
    `- Command: \`${meta.command}\``,
    `- Machine: ${machine.cpuModel}, ${machine.nproc} CPUs (nproc), ${machine.totalMemoryMB} MB memory, ${machine.os}`,
    `- Node: ${machine.node}`,
    `- Load (\`uptime\`) at the start: \`${machine.uptimeStart}\``,
    `- Load (\`uptime\`) at the end: \`${machine.uptimeEnd ?? "—"}\``,
    "- The machine may be shared with other work: absolute figures move with its load; the interleaved ratios much less.",
    "",
    "## Summary",
    "",
    `- Gates: ${gates.length - missedGates.length - gates.filter((row) => row.status === "not measured").length} of ${gates.length} met${missedGates.length === 0 ? "." : `; missed: ${missedGates.map((row) => `${row.benchmark} — ${row.measurement}: ${formatValue(row.value)} ${row.unit} (gate ${row.budget})`).join("; ")}.`}`,
  ];
  if (missedTargets.length === 0) {
    lines.push("- Targets: every reported target met.");
  } else {
    lines.push("- Targets not met (reported, not gated):");
    for (const row of missedTargets) {
      lines.push(`  - ${row.benchmark} — ${row.measurement}: ${formatValue(row.value)} ${row.unit}${row.spread ? ` (spread ${row.spread})` : ""}, target ${row.target ?? row.budget}`);
    }
  }
  if (notMeasured.length > 0) {
    lines.push(`- Not measured: ${notMeasured.map((row) => `${row.benchmark} — ${row.measurement}`).join("; ")}.`);
  }
  lines.push("", "## Every row", "", "| benchmark | measurement | value | unit | spread | detail | budget | kind | status |", "|---|---|---|---|---|---|---|---|---|");
  for (const row of report.rows) {
    lines.push(
      `| ${[row.benchmark, row.measurement, formatValue(row.value), row.unit, row.spread ?? "", row.detail ?? "", budgetText(row), row.kind, statusText(row)].map(escapeCell).join(" | ")} |`,
    );
  }
  for (const section of report.sections) lines.push("", `## ${section.title}`, "", section.body.trimEnd());
  lines.push("");
  return lines.join("\n");
}

export function writeFileMaking(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
