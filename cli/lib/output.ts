/**
 * Output conventions (08 §2–§3): data on stdout, progress and warnings on
 * stderr, `--json` keeps stdout machine-clean, tables through cli-table3 with
 * long cells cut, and exactly one predicate deciding colour.
 */
import Table from "cli-table3";
import kleur from "kleur";
import type { CliContext } from "./context";
import type { GlobalOptions } from "./options";

/** Longest table cell, in code points, including the ellipsis (08 §3). */
export const CELL_MAX_CODE_POINTS = 60;
const ELLIPSIS = "…";
const LINE_BREAK_MARK = "⏎";

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
 * Renders one value for a human table: line breaks become ⏎ and text longer
 * than 60 code points is cut with … (counting code points, so an emoji or a
 * Cyrillic letter is never split in half).
 */
export function tableCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = (typeof value === "string" ? value : JSON.stringify(value) ?? String(value)).replace(
    /\r\n|\r|\n/g,
    LINE_BREAK_MARK,
  );
  const points = Array.from(text);
  if (points.length <= CELL_MAX_CODE_POINTS) return text;
  return points.slice(0, CELL_MAX_CODE_POINTS - 1).join("") + ELLIPSIS;
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
    this.ctx.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Progress or information on stderr; suppressed by `--quiet`. */
  info(text: string): void {
    if (!this.quiet) this.ctx.stderr.write(`${text}\n`);
  }

  /** A warning on stderr; suppressed by `--quiet` like other informational lines. */
  warn(text: string): void {
    if (!this.quiet) this.ctx.stderr.write(`${this.paint.warn("warning:")} ${text}\n`);
  }

  /** An error line on stderr; never suppressed. */
  error(text: string): void {
    this.ctx.stderr.write(`${this.paint.fail("magnt:")} ${text}\n`);
  }

  /** A cli-table3 table on stdout; every cell goes through `tableCell`. */
  table(head: readonly string[], rows: readonly (readonly unknown[])[]): void {
    const style = this.colour ? { head: ["cyan"], border: ["grey"] } : { head: [], border: [] };
    const table = new Table({ head: [...head], style });
    for (const row of rows) table.push(row.map(tableCell));
    this.ctx.stdout.write(`${table.toString()}\n`);
  }

  /** Colour helpers; identity functions when colour is off. */
  readonly paint = {
    ok: (text: string): string => kleur.green(text),
    fail: (text: string): string => kleur.red(text),
    warn: (text: string): string => kleur.yellow(text),
    dim: (text: string): string => kleur.dim(text),
    bold: (text: string): string => kleur.bold(text),
  };
}
