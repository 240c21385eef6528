/**
 * Output conventions (08 §2–§3): data on stdout, progress and warnings on
 * stderr, `--json` keeps stdout machine-clean, tables through cli-table3 with
 * long cells cut, and exactly one predicate deciding colour.
 *
 * Every value that reaches a human table or a record view goes through
 * `terminal-text.ts` first: stored text may come from a visitor and must never
 * be able to drive the owner's terminal (08 §10).
 */
import Table from "cli-table3";
import kleur from "kleur";
import { replaceDisplayControls } from "../../worker/contracts/display-controls";
import type { CliContext, TextSink } from "./context";
import type { GlobalOptions } from "./options";
import { hangingWrap, packItems } from "./help-layout";
import { fitCells, layoutTable, plainColumns, type LayoutColumn } from "./table-layout";
import { displayWidth, ELLIPSIS, terminalText, wrapToWidth } from "./terminal-text";


/**
 * cli-table3 colours through its own library, which decides by itself (and
 * turns colour off whenever `CI` is set); the table is drawn plain and the
 * header is painted with kleur, so the one predicate below decides alone.
 */
const PLAIN_STYLE = { head: [] as string[], border: [] as string[] };
/** Longest table cell, in code points, including the ellipsis (08 §3). */
export const CELL_MAX_CODE_POINTS = 60;
/** The width assumed when stdout is not a terminal and `COLUMNS` is not set (08 §10). */
export const DEFAULT_TERMINAL_WIDTH = 80;
/** Below this many columns the record view stops wrapping values and prints each line whole. */
const MIN_WRAP_WIDTH = 20;

/**
 * The width tables and records are fitted to: the terminal's own width when
 * stdout is a TTY that reports one (`process.stdout.columns`); otherwise a
 * positive integer `COLUMNS` from the environment (so `COLUMNS=160 magnt
 * review contacts | less -S` works); otherwise 80.
 */
export function terminalWidth(stdout: TextSink, env: Readonly<Record<string, string | undefined>>): number {
  return knownTerminalWidth(stdout, env) ?? DEFAULT_TERMINAL_WIDTH;
}

/** The width of `stream` when it is known (a TTY that reports it, or `COLUMNS`); undefined otherwise. */
export function knownTerminalWidth(stream: TextSink, env: Readonly<Record<string, string | undefined>>): number | undefined {
  const columns = "columns" in stream ? (stream as { columns?: unknown }).columns : undefined;
  if (stream.isTTY === true && typeof columns === "number" && Number.isSafeInteger(columns) && columns > 0) return columns;
  const fromEnv = env.COLUMNS ?? "";
  if (/^[1-9]\d{0,4}$/.test(fromEnv)) return Number(fromEnv);
  return undefined;
}

/**
 * A message for stderr (an error, a warning, progress), wrapped to the
 * terminal's width when that width is known, continuation lines indented.
 * Piped to a log with no `COLUMNS`, every message stays one line, so a log
 * can still be searched line by line (docs/decisions.md). `lead` is the
 * plain-text prefix the caller paints and puts before the first line.
 */
export function fitMessage(text: string, stream: TextSink, env: Readonly<Record<string, string | undefined>>, leadColumns = 0): string[] {
  const width = knownTerminalWidth(stream, env);
  const lines = text.split("\n");
  if (width === undefined) return lines;
  return lines.flatMap((line, index) => hangingWrap(line, width - (index === 0 ? leadColumns : 0), "  "));
}

/**
 * The one colour/TTY predicate. `--json` and `--no-color` always win; then
 * `FORCE_COLOR=1` forces colour (so CI logs can be coloured on purpose); then
 * `NO_COLOR` (non-empty) and `TERM=dumb` disable it; otherwise colour follows
 * whether stdout is a TTY.
 */
export function colourEnabled(
  options: Pick<GlobalOptions, "json" | "color">,
  env: Readonly<Record<string, string | undefined>>,
  stdoutIsTTY: boolean,
): boolean {
  if (options.json === true || options.color === false) return false;
  if (env.FORCE_COLOR === "1") return true;
  if ((env.NO_COLOR ?? "") !== "") return false;
  if (env.TERM === "dumb") return false;
  return stdoutIsTTY;
}

/**
 * `JSON.stringify` with every terminal-active character written as a `\uXXXX`
 * escape, so `--json` output piped to a terminal cannot drive it either. The
 * parsed value is identical: escapes are the same string in JSON.
 * `JSON.stringify` already escapes C0 controls; what it leaves raw — DEL, C1
 * controls (U+009B is an 8-bit CSI), U+2028/U+2029 and the bidirectional
 * controls — can only occur inside JSON strings, where a `\uXXXX` escape is
 * the same character. The class is the shared one (display-controls.ts).
 */
export function terminalSafeJson(value: unknown): string {
  return replaceDisplayControls(JSON.stringify(value) ?? "null", (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Renders one value for a human table: escape sequences and control
 * characters removed, line breaks shown as ⏎, and text longer than 60 code
 * points cut with … (counting code points, so an emoji or a Cyrillic letter is
 * never split in half).
 */
export function tableCell(value: unknown): string {
  const text = terminalText(value, { lineBreaks: "mark" });
  const points = Array.from(text);
  if (points.length <= CELL_MAX_CODE_POINTS) return text;
  return points.slice(0, CELL_MAX_CODE_POINTS - 1).join("") + ELLIPSIS;
}

/** A painted prefix of the first line of wrapped text, and how many columns it takes on screen. */
export interface Lead {
  text: string;
  columns: number;
}

/** Writes for one command run, honouring `--json`, `--quiet` and the colour predicate. */
export class Output {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly colour: boolean;
  private readonly ctx: CliContext;

  constructor(ctx: CliContext, options: GlobalOptions) {
    this.ctx = ctx;
    this.json = options.json === true;
    this.quiet = options.quiet === true;
    this.colour = colourEnabled(options, ctx.env, ctx.stdout.isTTY === true);
    kleur.enabled = this.colour;
  }

  /** One line of data on stdout (human mode). */
  line(text: string): void {
    this.ctx.stdout.write(`${text}\n`);
  }

  /** One JSON document on stdout, on one line, so even a failing run stays line-parseable. */
  jsonLine(value: unknown): void {
    this.ctx.stdout.write(`${terminalSafeJson(value)}\n`);
  }

  /** Progress or information on stderr; suppressed by `--quiet`. */
  info(text: string): void {
    if (!this.quiet) this.ctx.stderr.write(`${fitMessage(text, this.ctx.stderr, this.ctx.env).join("\n")}\n`);
  }

  /** A warning on stderr; suppressed by `--quiet` like other informational lines. */
  warn(text: string): void {
    if (!this.quiet) this.ctx.stderr.write(`${this.paint.warn("warning:")} ${fitMessage(text, this.ctx.stderr, this.ctx.env, "warning: ".length).join("\n")}\n`);
  }

  /** An error line on stderr; never suppressed. */
  error(text: string): void {
    this.ctx.stderr.write(`${this.paint.fail("magnt:")} ${fitMessage(text, this.ctx.stderr, this.ctx.env, "magnt: ".length).join("\n")}\n`);
  }

  /**
   * A cli-table3 table on stdout; every cell goes through `tableCell`. It is
   * fitted to the terminal width like `fittedTable` (08 §3): a table that fits
   * is drawn as it always was; a wider one has its longest cells cut with …
   * and, when even that is not enough, its last columns left out (named on
   * stderr; `--json` has every value).
   */
  table(head: readonly string[], rows: readonly (readonly unknown[])[]): string[] {
    const hidden = this.fittedTable(plainColumns(head), rows);
    if (hidden.length > 0) this.info(`not shown at ${this.width} columns: ${hidden.join(", ")} (a wider terminal or --json shows them)`);
    return hidden;
  }

  /**
   * A line of prose on stdout wrapped to the terminal width when that width
   * is known (piped without `COLUMNS` it stays one line, like stderr
   * messages, docs/decisions.md); continuation lines start with
   * `continuation` (an indent), so a URL or a command is never broken inside
   * and each wrapped line still fits. A painted `lead`
   * (a ✔ mark, say) goes before the first line and counts `columns` wide, so
   * colour codes never count towards the width.
   */
  wrapped(text: string, continuation = "  ", lead?: Lead): void {
    const width = this.knownWidth;
    this.withLead(width === undefined ? [text] : hangingWrap(text, width - (lead?.columns ?? 0), continuation), lead);
  }

  /**
   * `first` followed by `items` (each `key: value`, say) on as many lines as
   * the width needs, an item broken only when it alone is wider than a line
   * (`packItems`); `lead` as for `wrapped`.
   */
  wrappedItems(first: string, items: readonly string[], separator: string, continuation: string, lead?: Lead): void {
    const width = this.knownWidth;
    this.withLead(width === undefined ? [`${first}${items.join(separator)}`] : packItems(first, items, separator, width - (lead?.columns ?? 0), continuation), lead);
  }

  private withLead(lines: readonly string[], lead: Lead | undefined): void {
    const pad = " ".repeat(lead?.columns ?? 0);
    lines.forEach((line, index) => this.line(`${index === 0 ? (lead?.text ?? "") : pad}${line}`));
  }

  /** The terminal's width when known (a TTY, or `COLUMNS`): prose is wrapped only then, so piped lines stay whole. */
  get knownWidth(): number | undefined {
    return knownTerminalWidth(this.ctx.stdout, this.ctx.env);
  }

  /** The width human output is fitted to (see `terminalWidth`). */
  get width(): number {
    return terminalWidth(this.ctx.stdout, this.ctx.env);
  }

  /**
   * A table fitted to the terminal width: one line per row, columns chosen by
   * priority (`layoutTable`), every cell sanitised. Returns the names of the
   * columns left out, so the caller can say how to see them.
   */
  fittedTable(columns: readonly LayoutColumn[], rows: readonly (readonly unknown[])[]): string[] {
    const cells = rows.map((row) => columns.map((_, index) => tableCell(row[index])));
    const layout = layoutTable(columns, cells, this.width);
    const fitted = fitCells(layout, cells);
    const table = new Table({
      head: fitted.head.map((cell) => this.paint.head(cell)),
      colWidths: fitted.colWidths,
      wordWrap: false,
      truncate: ELLIPSIS,
      style: PLAIN_STYLE,
    });
    for (const row of fitted.rows) table.push(row);
    this.ctx.stdout.write(`${table.toString()}\n`);
    return layout.hidden;
  }

  /**
   * One record in full (08 §10): every field on its own line as `label: value`,
   * values sanitised with their line breaks kept; long lines are wrapped to the
   * terminal width and every continuation line is indented under the value.
   */
  record(fields: readonly (readonly [string, unknown])[]): void {
    const labelWidth = Math.max(0, ...fields.map(([label]) => displayWidth(label) + 1));
    const indent = " ".repeat(labelWidth + 1);
    const valueWidth = this.width - indent.length;
    for (const [label, value] of fields) {
      const name = this.paint.bold(`${label}:`) + " ".repeat(labelWidth - displayWidth(label) - 1);
      if (value === null || value === undefined) {
        this.line(`${name} ${this.paint.dim("(none)")}`);
        continue;
      }
      const lines = terminalText(value, { lineBreaks: "keep" })
        .split("\n")
        .flatMap((line) => (valueWidth >= MIN_WRAP_WIDTH ? wrapToWidth(line, valueWidth) : [line]));
      lines.forEach((line, index) => this.line(`${index === 0 ? `${name} ` : indent}${line}`.trimEnd()));
    }
  }


  /** Colour helpers; identity functions when colour is off. */
  readonly paint = {
    ok: (text: string): string => kleur.green(text),
    fail: (text: string): string => kleur.red(text),
    warn: (text: string): string => kleur.yellow(text),
    dim: (text: string): string => kleur.dim(text),
    head: (text: string): string => kleur.cyan(text),
    bold: (text: string): string => kleur.bold(text),
  };
}
