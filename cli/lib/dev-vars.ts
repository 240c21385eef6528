/**
 * The local `.dev.vars` file (00 §6–§7, 08 §9): where flags and secrets live
 * for `wrangler dev`, next to the Wrangler config. `magnt flags` reads it with
 * Wrangler's own (dotenv) semantics and edits only the line of the flag it
 * changes: every other line — secrets, comments, blank lines — is kept as
 * written. The file holds secrets, so it is always left with mode 0600, and it
 * is written through a temp file + rename so a crash never leaves half a file.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { EnvironmentError } from "./errors";

export const DEV_VARS_FILE = ".dev.vars";
const FILE_MODE = 0o600;
const LINE_PATTERN = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;

/** `.dev.vars` next to the config (Wrangler reads it from there). */
export function devVarsPath(configAbsolutePath: string): string {
  return join(dirname(configAbsolutePath), DEV_VARS_FILE);
}

/** The file's text, or "" when it does not exist; unreadable → exit 3. */
export function readDevVarsText(path: string): string {
  if (!existsSync(path)) return "";
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new EnvironmentError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
}

/** Name → value as dotenv parses it (quotes removed, an unquoted value cut at ` #`); a later line wins. */
export function parseDevVars(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const match = LINE_PATTERN.exec(line);
    if (match === null) continue;
    values.set(match[1]!, unquote(match[2]!));
  }
  return values;
}

function unquote(raw: string): string {
  const quote = raw[0];
  if ((quote === '"' || quote === "'" || quote === "`") && raw.length >= 2 && raw.endsWith(quote)) {
    const inner = raw.slice(1, -1);
    return quote === '"' ? inner.replace(/\\n/g, "\n") : inner;
  }
  const comment = raw.search(/\s#/);
  return (comment === -1 ? raw : raw.slice(0, comment)).trim();
}

/**
 * The text with `name` set to `value` (or removed when `value` is null): the
 * first line defining it is replaced in place, later duplicates are dropped,
 * and every other line is kept byte for byte.
 */
export function withDevVar(text: string, name: string, value: string | null): string {
  const lines = text === "" ? [] : text.split("\n");
  const trailingNewline = text.endsWith("\n");
  if (trailingNewline) lines.pop();
  const out: string[] = [];
  let written = false;
  for (const line of lines) {
    const match = LINE_PATTERN.exec(line.replace(/\r$/, ""));
    if (match !== null && match[1] === name) {
      if (value !== null && !written) out.push(`${name}=${value}`);
      written = true;
      continue;
    }
    out.push(line);
  }
  if (value !== null && !written) out.push(`${name}=${value}`);
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

/** Writes the file with mode 0600 (temp file in the same directory, then rename). */
export function writeDevVars(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text, { mode: FILE_MODE });
    chmodSync(temp, FILE_MODE);
    renameSync(temp, path);
    chmodSync(path, FILE_MODE);
  } catch (error) {
    throw new EnvironmentError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? "unwritable"}`);
  }
}
