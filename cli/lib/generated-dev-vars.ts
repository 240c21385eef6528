/**
 * The local-only `.dev.vars` that `magnt dev --owner` writes when the user's
 * own `.dev.vars` holds no owner secret (08 §13, issue 19 item 1): a signing
 * key, a dialogue key, a fake GitHub client, the owner's stand-in GitHub id,
 * a fake Telegram bot and chat, and the flags of the whole local owner loop.
 *
 * Why these values can never serve a deployment, by construction:
 * - the file lives under `.wrangler/magnt-dev-owner/` next to the local config
 *   — a directory no deployable config, `wrangler deploy` or remote `magnt`
 *   path reads; only the split run's `wrangler dev` processes read it (through
 *   the link in their generated directory) and `magnt flags --owner` edits it;
 * - its first line is `GENERATED_MARKER`, so a copy of it found anywhere else
 *   says what it is;
 * - the values are random and exist nowhere else: never printed, never logged,
 *   never on a command line (the GitHub stand-in gets its id and client through
 *   its environment), so a listing of processes shows none of them.
 *
 * Written once, with `O_EXCL` and mode 0600: an existing file — generated or
 * edited by hand — is never overwritten (delete it to get new values).
 */
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { FlagName, SecretName } from "../../worker/contracts";
import { EnvironmentError } from "./errors";

/** The first line of every generated file. */
export const GENERATED_MARKER = "# magnt-generated: local-only values for `magnt dev --owner`; never for a deployment";

/** Flags the generated file turns on: the owner MCP, its writes, the dialogue (replies, read receipts) and contact notifications. */
export const GENERATED_FLAGS = [
  "OWNER_MCP_ENABLED",
  "OWNER_MCP_WRITE_ENABLED",
  "DIALOGUE_ENABLED",
  "DIALOGUE_REPLIES_ENABLED",
  "DIALOGUE_READ_RECEIPTS_ENABLED",
  "TELEGRAM_NOTIFICATIONS_ENABLED",
] as const satisfies readonly FlagName[];

/** The secrets the generated file holds (every one random). */
export const GENERATED_SECRETS = [
  "OWNER_GITHUB_ID",
  "OWNER_TOKEN_SIGNING_KEY",
  "GITHUB_CLIENT_ID",
  "GITHUB_CLIENT_SECRET",
  "DIALOGUE_TOKEN_KEY",
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_OWNER_CHAT_ID",
] as const satisfies readonly SecretName[];

/**
 * The owner secrets whose presence in the user's `.dev.vars` means "I set up
 * the owner myself": then that file is the split run's, and nothing is generated.
 */
export const OWNER_SECRETS = ["OWNER_GITHUB_ID", "OWNER_TOKEN_SIGNING_KEY", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"] as const satisfies readonly SecretName[];

export type RandomBytes = (size: number) => Buffer;

/** `count` decimal digits, the first never 0. */
function digits(random: RandomBytes, count: number): string {
  const bytes = random(count);
  return Array.from(bytes, (byte, index) => (index === 0 ? 1 + (byte % 9) : byte % 10)).join("");
}

/** The generated values, in the order they are written (each passes the Worker's own format check). */
export function generatedValues(random: RandomBytes = randomBytes): Record<(typeof GENERATED_SECRETS)[number], string> {
  return {
    OWNER_GITHUB_ID: digits(random, 9),
    OWNER_TOKEN_SIGNING_KEY: random(32).toString("base64url"),
    GITHUB_CLIENT_ID: `local-${random(10).toString("hex")}`,
    GITHUB_CLIENT_SECRET: random(20).toString("hex"),
    DIALOGUE_TOKEN_KEY: random(32).toString("base64url"),
    TELEGRAM_BOT_TOKEN: `${digits(random, 9)}:${random(27).toString("base64url")}`,
    TELEGRAM_OWNER_CHAT_ID: digits(random, 10),
  };
}

/** The whole file: the marker, what it is, the generated secrets, the loop's flags. */
export function generatedDevVarsText(random: RandomBytes = randomBytes): string {
  const values = generatedValues(random);
  return [
    GENERATED_MARKER,
    "# Written once by magnt dev --owner because the .dev.vars next to the local config holds no owner secret.",
    "# Read only by the local split run (wrangler dev); the GitHub and Telegram here are loopback stand-ins.",
    "# Flags: magnt flags list|enable|disable --owner. Delete this file to generate new values.",
    ...GENERATED_SECRETS.map((name) => `${name}=${values[name]}`),
    ...GENERATED_FLAGS.map((name) => `${name}=true`),
    "",
  ].join("\n");
}

/** Whether a `.dev.vars` text was written by `generatedDevVarsText`. */
export function isGeneratedDevVars(text: string): boolean {
  return text.split(/\r?\n/, 1)[0] === GENERATED_MARKER;
}

/**
 * Creates `path` with `text` (mode 0600) unless it exists. Returns whether it
 * wrote the file; an existing file — even one created a moment ago by a
 * concurrent run — is left exactly as it is.
 */
export function createDevVarsOnce(path: string, text: string): boolean {
  let fd: number;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new EnvironmentError(`cannot create ${path}: ${(error as NodeJS.ErrnoException).code ?? "unwritable"}`);
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}
