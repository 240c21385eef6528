/**
 * `magnt flags enable <flag>` (08 §9): checks every prerequisite of 00 §6
 * first and changes nothing when one fails (exit 1, every failed check
 * printed); then confirms and sets the flag — the `.dev.vars` line locally,
 * `wrangler secret put` (value on stdin) remotely.
 */
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { readDevVarsText, withDevVar, writeDevVars } from "../../lib/dev-vars";
import { CheckFailed, EnvironmentError } from "../../lib/errors";
import { requireConfirmation } from "../../lib/prompts";
import { isBindingInUse, putWorkerSecret } from "../../lib/worker-secrets";
import { evaluatePrerequisites } from "./prerequisites";
import { readSnapshot, resolveFlagTarget } from "../../lib/flag-store";
import { FLAG_ARGUMENT_HELP, flagResult, parseFlag, refuseFlagsUnderVars, restartHint, stateOf } from "./target";

export function registerFlagsEnable(flags: ParentCommand, ctx: CliContext): void {
  flags
    .command("enable")
    .description("check every prerequisite, confirm, then set the flag")
    .argument("<flag>", FLAG_ARGUMENT_HELP)
    .option("--owner", "the local split run's .dev.vars (magnt dev --owner): all eight flags")
    .addHelpText(
      "after",
      examples([
        "magnt flags enable TELEGRAM_NOTIFICATIONS_ENABLED --yes",
        "magnt flags enable TELEGRAM_GOAL_NOTIFICATIONS_ENABLED --owner --yes   # the local split run (magnt dev --owner)",
        "magnt flags enable TELEGRAM_PREVIEW_MODE --remote --config wrangler.jsonc",
      ]),
    )
    .action(
      withRuntime(ctx, async (rt, flag, options) => {
        const { out, globals } = rt;
        const flagTarget = resolveFlagTarget(rt, options);
        const spec = parseFlag(flag, flagTarget);
        refuseFlagsUnderVars(flagTarget);
        const snapshot = await readSnapshot(rt, flagTarget);
        const checks = await evaluatePrerequisites(rt, flagTarget, spec, snapshot);
        const failed = checks.filter((check) => !check.ok);
        if (failed.length > 0) {
          for (const check of failed) out.error(`prerequisite failed: ${check.check}${check.detail === undefined ? "" : ` — ${check.detail}`}`);
          if (out.json) out.jsonLine(flagResult(spec, flagTarget, stateOf(spec, snapshot, flagTarget.mode), checks));
          throw new CheckFailed(`${spec.name} was not enabled: ${failed.length} prerequisite${failed.length === 1 ? "" : "s"} failed; nothing was changed`);
        }
        await requireConfirmation(ctx, globals, `Enable ${spec.name} (${spec.enableValue}) in ${flagTarget.where}?`);
        if (flagTarget.mode === "local") {
          writeDevVars(flagTarget.where, withDevVar(readDevVarsText(flagTarget.where), spec.name, spec.enableValue));
        } else {
          const run = await putWorkerSecret(ctx, flagTarget.target, spec.name, spec.enableValue, out.quiet);
          if (run.code !== 0) {
            if (isBindingInUse(run)) {
              throw new CheckFailed(
                `Worker ${flagTarget.worker} has a dashboard variable named ${spec.name} (Cloudflare error 10053, binding name already in use). ` +
                  `This is a one-time move: delete that variable in the Cloudflare dashboard (Worker → Settings → Variables and Secrets), ` +
                  `then run the same magnt flags enable again. magnt never deletes the variable itself.`,
              );
            }
            throw new EnvironmentError(`wrangler secret put ${spec.name} failed (exit ${run.code})`);
          }
        }
        const state = flagTarget.mode === "local" ? "on" : "secret_set";
        if (out.json) out.jsonLine(flagResult(spec, flagTarget, state, checks));
        else {
          out.wrapped(`${spec.name} enabled (${spec.enableValue}) in ${flagTarget.where}`);
          if (flagTarget.mode === "local") out.info(restartHint(flagTarget));
        }
      }),
    );
}
