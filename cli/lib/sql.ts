/**
 * The only way the CLI puts values into SQL text (08 §4). Wrangler's
 * `d1 execute` has no bind parameters, so every value is first validated by
 * its caller (regex or enum) and then written by these helpers, which refuse
 * anything they cannot quote safely.
 */

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
