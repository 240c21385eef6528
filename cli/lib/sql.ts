/**
 * The only way the CLI puts values into SQL text (08 §4). Wrangler's
 * `d1 execute` has no bind parameters, so every value is first validated by
 * its caller (regex or enum) and then written by these helpers, which refuse
 * anything they cannot quote safely.
 */
import type { SqlStatement } from "../../worker/contracts/sql-statement";

export type { SqlStatement };

/** A SQL string literal: refuses NUL, wraps in single quotes, doubles single quotes. */
export function sqlLiteral(value: string): string {
  if (typeof value !== "string") throw new TypeError("sqlLiteral takes a string");
  if (value.includes("\u0000")) throw new RangeError("sqlLiteral refuses NUL characters");
  return `'${value.replace(/'/g, "''")}'`;
}

/** A SQL integer: refuses anything that is not a safe integer within [min, max]. */
export function sqlInteger(value: number, min: number, max: number): string {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`sqlInteger: ${String(value)} is not an integer in [${min}, ${max}]`);
  }
  return String(value);
}


/** The largest integer a bound value may be here (row limits, counts); ids and times are strings. */
const MAX_INLINED_INTEGER = Number.MAX_SAFE_INTEGER;

/**
 * The text `wrangler d1 execute` runs for a storage module's statement, so
 * the CLI runs exactly the SQL the Worker binds. Placeholders follow SQLite:
 * `?N` is parameter N, a bare `?` is one more than the largest so far; `?`
 * inside a quoted literal or identifier is text. Each value is written by
 * `sqlLiteral` (strings, already validated by the caller), `sqlInteger`
 * (safe integers) or as NULL; anything else, or a count that does not match,
 * is a bug and throws.
 */
export function inlineStatement(statement: SqlStatement): string {
  const { sql, params } = statement;
  let out = "";
  let largest = 0;
  const used = new Set<number>();
  for (let i = 0; i < sql.length; ) {
    const char = sql[i]!;
    if (char === "'" || char === '"') {
      const end = closingQuote(sql, i);
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (char !== "?") {
      out += char;
      i += 1;
      continue;
    }
    const digits = /^\d+/.exec(sql.slice(i + 1))?.[0] ?? "";
    const index = digits === "" ? largest + 1 : Number(digits);
    if (index < 1 || index > params.length) throw new RangeError(`inlineStatement: parameter ?${index} of ${params.length}`);
    largest = Math.max(largest, index);
    used.add(index);
    out += sqlValue(params[index - 1]);
    i += 1 + digits.length;
  }
  if (used.size !== params.length) throw new RangeError(`inlineStatement: ${params.length} parameters, ${used.size} used`);
  return out;
}

/** The index just past the quote that closes the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number): number {
  const quote = sql[start]!;
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i += 1;
  }
  throw new RangeError("inlineStatement: unterminated quote in the SQL text");
}

function sqlValue(value: unknown): string {
  if (value === null) return "NULL";
  if (typeof value === "string") return sqlLiteral(value);
  if (typeof value === "number") return sqlInteger(value, -MAX_INLINED_INTEGER, MAX_INLINED_INTEGER);
  throw new TypeError(`inlineStatement: cannot inline a ${typeof value}`);
}
