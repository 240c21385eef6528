/**
 * Global options (08 §2) and the validation helpers for option values that
 * several commands share, so every command rejects a bad number the same way
 * (exit 2, with usage).
 */
import { UsageError } from "./errors";

/** The global options as commander hands them to every action (`optsWithGlobals`). */
export interface GlobalOptions {
  json?: boolean;
  config?: string;
  env?: string;
  local?: boolean;
  remote?: boolean;
  persistTo?: string;
  yes?: boolean;
  /** `--no-color` sets this to false. */
  color?: boolean;
  quiet?: boolean;
}

/**
 * Parses an integer option value in [min, max]. Used for every numeric option
 * (limits, ports, timeouts) so none of them can smuggle text into SQL or argv.
 */
export function parseIntegerOption(name: string, raw: string | number | undefined, min: number, max: number): number {
  const text = String(raw ?? "").trim();
  if (!/^\d+$/.test(text)) throw new UsageError(`${name} must be an integer from ${min} to ${max} (got "${String(raw)}")`);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${name} must be an integer from ${min} to ${max} (got ${text})`);
  }
  return value;
}

/** Parses an enumerated option value. */
export function parseChoiceOption<T extends string>(name: string, raw: string | undefined, choices: readonly T[]): T {
  const found = choices.find((choice) => choice === raw);
  if (found === undefined) throw new UsageError(`${name} must be one of ${choices.join(", ")} (got "${String(raw)}")`);
  return found;
}
