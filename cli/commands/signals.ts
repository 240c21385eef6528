/**
 * `magnt signals hide|unhide <signal_id>` (08 §11, 03 §8.4): takes one
 * published signal out of (or back into) every future search window. The id
 * (full, or a unique prefix as `magnt review signals` prints it) is checked
 * before anything runs; the UPDATE is the signals module's own statement.
 */
import type { Command } from "commander";
import { MIGRATION_FOR_TABLE } from "../../worker/contracts";
import { setSignalStatusStatement } from "../../worker/storage/signals/sql";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { d1Query, isMissingTable, type Row } from "../lib/d1";
import { CheckFailed, EnvironmentError, UsageError } from "../lib/errors";
import { requireConfirmation } from "../lib/prompts";
import { parseIdArgument, RECORD_ID_KINDS, resolveIdArgument } from "../lib/record-ids";
import { inlineStatement } from "../lib/sql";
import { resolveTarget } from "../lib/target";

/** The two actions and the status each one writes (the CHECK constraint of 0002). */
export const SIGNAL_ACTIONS = { hide: "hidden", unhide: "active" } as const;
export type SignalAction = keyof typeof SIGNAL_ACTIONS;

/** Lower-cases and validates a full signal id; anything else is a usage error (nothing has run yet). */
export function normaliseSignalId(raw: string): string {
  const parsed = parseIdArgument(RECORD_ID_KINDS.signal, raw, "signals hide|unhide");
  if (!("full" in parsed)) throw new UsageError(`a full signal id is needed here (expected ts_<uuid>): ${JSON.stringify(raw.slice(0, 80))}`);
  return parsed.full;
}

/** The UPDATE of 08 §11, with validated values only. */
export function signalStatusSql(signalId: string, action: SignalAction): string {
  return inlineStatement(setSignalStatusStatement(normaliseSignalId(signalId), SIGNAL_ACTIONS[action]));
}

export function registerSignals(program: Command, ctx: CliContext): void {
  const signals = program.command("signals").description("hide or unhide a published task signal");
  for (const action of Object.keys(SIGNAL_ACTIONS) as SignalAction[]) {
    signals
      .command(action)
      .description(action === "hide" ? "remove a signal from every future search window" : "make a hidden signal searchable again")
      .argument("<signal_id>", "ts_<uuid>, or a unique prefix of it as review signals prints it (ts_0f8e2c1a)")
      .addHelpText(
        "after",
        examples([`magnt signals ${action} ts_0f8e2c1a`, `magnt signals ${action} ts_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b --remote --config wrangler.jsonc`]),
      )
      .action(defineAction<Record<string, never>>(ctx, (rt, args) => runSignalAction(rt, action, args[0] ?? "")));
  }
}

async function runSignalAction(rt: CommandRuntime, action: SignalAction, rawId: string): Promise<void> {
  const { ctx, out, globals } = rt;
  const argument = parseIdArgument(RECORD_ID_KINDS.signal, rawId, `signals ${action}`);
  const target = resolveTarget(ctx, globals);
  const signalId = await resolveIdArgument(rt, target, RECORD_ID_KINDS.signal, argument);
  if (target.mode === "remote") await requireConfirmation(ctx, globals, `${action} ${signalId} in the remote database of ${target.config.path}?`);
  let rows: Row[];
  try {
    rows = await d1Query(ctx, target, signalStatusSql(signalId, action), out.quiet);
  } catch (error) {
    if (isMissingTable(error, "task_signals")) {
      throw new EnvironmentError(`table task_signals does not exist: apply migration ${MIGRATION_FOR_TABLE.task_signals}`);
    }
    throw error;
  }
  const row = rows[0];
  if (row === undefined) throw new CheckFailed(`no such signal: ${signalId}`);
  const result = { signal_id: String(row.signal_id), status: String(row.status) };
  if (out.json) out.jsonLine(result);
  else out.line(`${result.signal_id} ${result.status}`);
}
