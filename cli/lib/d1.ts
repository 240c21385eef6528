/**
 * `wrangler d1 execute --json` as a function (08 §4): run one SQL text,
 * return the rows, and turn Wrangler's `{"error":{"text":…}}` into exit 3
 * with that text. Callers that expect a specific failure (a missing table)
 * catch `D1QueryError` and look at its text.
 */
import type { CliContext } from "./context";
import { EnvironmentError } from "./errors";
import { DATABASE, targetArgs, type D1Target } from "./target";
import { runWrangler } from "./wrangler";

export type Row = Record<string, unknown>;

/** D1 refused the statement; `text` is Wrangler's `error.text`. */
export class D1QueryError extends EnvironmentError {
  readonly text: string;
  constructor(text: string) {
    super(text);
    this.name = "D1QueryError";
    this.text = text;
  }
}

/** True when the error is SQLite's "no such table: <table>". */
export function isMissingTable(error: unknown, table: string): boolean {
  return error instanceof D1QueryError && error.text.includes(`no such table: ${table}`);
}

/**
 * Parses `d1 execute --json` stdout: leading blank lines skipped; an array is
 * success (one element per statement, rows in `results`); an object with
 * `error.text` is a D1 failure. Anything else is an environment failure.
 */
export function parseD1Json(stdout: string, exitCode: number, stderr: string): Row[][] {
  const text = stdout.replace(/^\s+/, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const hint = lastLine(stderr) ?? lastLine(stdout) ?? "no output";
    throw new EnvironmentError(`wrangler d1 execute failed (exit ${exitCode}): ${hint}`);
  }
  if (Array.isArray(parsed)) {
    return parsed.map((statement: unknown) => {
      const results = (statement as { results?: unknown }).results;
      return Array.isArray(results) ? (results as Row[]) : [];
    });
  }
  const errorText = (parsed as { error?: { text?: unknown } } | null)?.error?.text;
  if (typeof errorText === "string") throw new D1QueryError(errorText);
  throw new EnvironmentError(`wrangler d1 execute returned unexpected JSON (exit ${exitCode})`);
}

/** Runs one SQL text against the target and returns the rows of its first statement. */
export async function d1Query(ctx: CliContext, target: D1Target, sql: string, quiet: boolean): Promise<Row[]> {
  const run = await runWrangler(ctx, ["d1", "execute", DATABASE, ...targetArgs(target), "--json", "--command", sql], {
    mode: target.mode,
    quiet,
  });
  return parseD1Json(run.stdout, run.code, run.stderr)[0] ?? [];
}

/** Runs several SQL texts in one `wrangler d1 execute` (one process, one start-up) and returns each one's rows. */
export async function d1QueryAll(ctx: CliContext, target: D1Target, sqls: readonly string[], quiet: boolean): Promise<Row[][]> {
  const run = await runWrangler(ctx, ["d1", "execute", DATABASE, ...targetArgs(target), "--json", "--command", sqls.join(";\n")], {
    mode: target.mode,
    quiet,
  });
  const results = parseD1Json(run.stdout, run.code, run.stderr);
  return sqls.map((_, index) => results[index] ?? []);
}

function lastLine(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
  return lines.at(-1);
}
