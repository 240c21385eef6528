/**
 * Typed errors of the `magnt` CLI and the exit codes they stand for (08 §3).
 *
 * The distinction matters in CI and scripts: a release gate must tell "the
 * deployment is wrong" (1) from "you called me wrong" (2) from "I could not
 * even look" (3). Commands throw one of these; `runCli` maps them to the exit
 * code and, in `--json` mode, to the final `{"error":…}` line. Anything else
 * that escapes is a bug and exits 3 with one stderr line.
 */

/** The `error.code` values of the `--json` error object. */
export type ErrorCode = "usage" | "check_failed" | "environment";

export const EXIT = {
  ok: 0,
  checkFailed: 1,
  usage: 2,
  environment: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Base class: a failure the user can act on, with a stable exit code. */
export abstract class CliError extends Error {
  abstract readonly exitCode: ExitCode;
  abstract readonly code: ErrorCode;
}

/** Exit 2: unknown option, bad value, conflicting options, missing or declined confirmation. */
export class UsageError extends CliError {
  readonly exitCode = EXIT.usage;
  readonly code = "usage" as const;
  /** Whether to print the command's usage line after the message (not for refusals such as the placeholder guard). */
  readonly showUsage: boolean;
  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message);
    this.name = "UsageError";
    this.showUsage = options.showUsage ?? true;
  }
}

/** Exit 1: the thing being checked is wrong (smoke step, probe expectation, migration consistency, missing row). */
export class CheckFailed extends CliError {
  readonly exitCode = EXIT.checkFailed;
  readonly code = "check_failed" as const;
  constructor(message: string) {
    super(message);
    this.name = "CheckFailed";
  }
}

/** Exit 3: Wrangler missing or failing, D1 table missing, file unreadable, target unreachable, timeout. */
export class EnvironmentError extends CliError {
  readonly exitCode = EXIT.environment;
  readonly code = "environment" as const;
  constructor(message: string) {
    super(message);
    this.name = "EnvironmentError";
  }
}

/** The message every command uses when a confirmation cannot be shown (08 §3). */
export const CONFIRMATION_REQUIRED = "confirmation required: pass --yes";

/** One-line description of an unknown thrown value (never a stack). */
export function describeUnknown(error: unknown): string {
  if (error instanceof Error) return error.message.split("\n")[0] ?? error.name;
  return String(error);
}
