/**
 * `magnt flags disable <flag>` (08 §9): warns about a dependent flag that is
 * still on, confirms, then removes the `.dev.vars` line or deletes the Worker
 * secret. Disabling a flag that is not set succeeds without asking.
 */
import { FLAG_NAMES } from "../../../worker/contracts";
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { readDevVarsText, withDevVar, writeDevVars } from "../../lib/dev-vars";
import { requireConfirmation } from "../../lib/prompts";
import { deleteWorkerSecret } from "../../lib/worker-secrets";
import { dependentsOf, dependentsOnAnyRole, FLAG_SPECS } from "./catalog";
import { readSnapshot, resolveFlagTarget } from "../../lib/flag-store";
import { FLAG_ARGUMENT_HELP, flagResult, parseFlag, restartHint, type FlagCheck } from "./target";

export function registerFlagsDisable(flags: ParentCommand, ctx: CliContext): void {
  flags
    .command("disable")
    .description("confirm, then remove the flag (says what stops, and warns about flags that depend on it)")
    .argument("<flag>", FLAG_ARGUMENT_HELP)
    .option("--owner", "the local split run's .dev.vars (magnt dev --owner): all eight flags")
    .addHelpText("after", `${offEffectsHelp()}${examples(["magnt flags disable TELEGRAM_NOTIFICATIONS_ENABLED --yes", "magnt flags disable DIALOGUE_ENABLED --owner --yes"])}`)
    .action(
      withRuntime(ctx, async (rt, flag, options) => {
        const { out, globals } = rt;
        const flagTarget = resolveFlagTarget(rt, options);
        const spec = parseFlag(flag, flagTarget);
        const snapshot = await readSnapshot(rt, flagTarget);
        const checks: FlagCheck[] = [];
        const effect = spec.offEffect;
        for (const role of flagTarget.roles) {
          const stops = effect?.stops[role];
          if (stops !== undefined) out.info(`with ${spec.name} off on the ${role} Worker ${flagTarget.role === "split" ? "of the local split run" : flagTarget.worker}: ${stops}`);
        }
        for (const dependent of dependentsOf(spec.name, flagTarget.roles)) {
          if (!snapshot.on(dependent)) continue;
          out.warn(
            effect === undefined
              ? `${dependent} is still on and needs ${spec.name}; it stops working until ${spec.name} is enabled again (disable it too)`
              : `${dependent} is still on and needs ${spec.name}: it ${effect.dependents} (disable it too if it should not)`,
          );
          checks.push({ check: `dependent flag ${dependent} off`, ok: false, detail: "still on" });
        }
        const offState = flagTarget.mode === "local" ? "off" : "not_set";
        const present = flagTarget.mode === "local" ? snapshot.value(spec.name) !== undefined : snapshot.present(spec.name);
        if (present) {
          await requireConfirmation(ctx, globals, `Disable ${spec.name} in ${flagTarget.where}?`);
          if (flagTarget.mode === "local") writeDevVars(flagTarget.where, withDevVar(readDevVarsText(flagTarget.where), spec.name, null));
          else await deleteWorkerSecret(ctx, flagTarget.target, spec.name, out.quiet);
        }
        if (out.json) out.jsonLine(flagResult(spec, flagTarget, offState, checks));
        else {
          out.wrapped(present ? `${spec.name} disabled in ${flagTarget.where}` : `${spec.name} was not set in ${flagTarget.where}: nothing to do`);
          if (present && flagTarget.mode === "local") out.info(restartHint(flagTarget));
        }
      }),
    );
}

/** The `disable --help` section on what stops, from the catalog's `offEffect`s. */
function offEffectsHelp(): string {
  const lines = FLAG_NAMES.flatMap((name) => {
    const effect = FLAG_SPECS[name].offEffect;
    if (effect === undefined) return [];
    const dependents = dependentsOnAnyRole(name);
    return [`  ${name} off: ${effect.summary}.`, ...(dependents.length > 0 ? [`    ${dependents.join(", ")}: each ${effect.dependents}.`] : [])];
  });
  return lines.length === 0 ? "" : `\nWhat stops:\n${lines.join("\n")}\n`;
}
