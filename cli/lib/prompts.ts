/**
 * Confirmations (08 §3). A prompt is shown only when both stdin and stdout
 * are TTYs and neither `--json` nor `--yes` is set; otherwise `--yes` is the
 * only way through, so a script or CI job can never hang on a question.
 */
import { cancel, confirm, isCancel } from "@clack/prompts";
import type { CliContext } from "./context";
import { CONFIRMATION_REQUIRED, UsageError } from "./errors";
import type { GlobalOptions } from "./options";

/** Whether an interactive prompt may be shown at all. */
export function canPrompt(ctx: CliContext, globals: GlobalOptions): boolean {
  return ctx.stdin.isTTY === true && ctx.stdout.isTTY === true && globals.json !== true && globals.yes !== true;
}

/** The question-asking function; replaceable in tests that simulate a TTY. */
export type Asker = (message: string) => Promise<boolean | symbol>;

const clackAsker: Asker = (message) => confirm({ message, initialValue: false });

/**
 * Asks for confirmation or proves it was given: `--yes` → true; no TTY (or
 * `--json`) → exit 2 "confirmation required: pass --yes"; declined or
 * cancelled → exit 2.
 */
export async function requireConfirmation(
  ctx: CliContext,
  globals: GlobalOptions,
  message: string,
  ask: Asker = clackAsker,
): Promise<void> {
  if (globals.yes === true) return;
  if (!canPrompt(ctx, globals)) throw new UsageError(CONFIRMATION_REQUIRED, { showUsage: false });
  const answer = await ask(message);
  if (isCancel(answer) || answer !== true) {
    if (isCancel(answer)) cancel("cancelled");
    throw new UsageError("declined: nothing was changed", { showUsage: false });
  }
}
