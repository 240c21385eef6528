/** `magnt flags list` (08 §9): each flag the Worker reads, its default and its state. */
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { FLAG_SPECS, flagsReadBy } from "./catalog";
import { readSnapshot, refuseFlagsUnderVars, resolveFlagTarget, stateOf } from "./target";

export function registerFlagsList(flags: ParentCommand, ctx: CliContext): void {
  flags
    .command("list")
    .description("each flag the Worker reads: its default and its state")
    .addHelpText("after", examples(["magnt flags list", "magnt flags list --remote --config wrangler.jsonc"]))
    .action(
      withRuntime(ctx, async (rt) => {
        const { out } = rt;
        const flagTarget = resolveFlagTarget(rt);
        const snapshot = await readSnapshot(rt, flagTarget);
        const rows = flagsReadBy(flagTarget.role).map((name) => {
          const spec = FLAG_SPECS[name];
          const row: Record<string, unknown> = { flag: name, default: spec.defaultLabel, state: stateOf(spec, snapshot, flagTarget.mode) };
          if (flagTarget.mode === "local") row.value = snapshot.value(name) ?? null;
          return row;
        });
        if (out.json) out.jsonLine({ worker: flagTarget.worker, role: flagTarget.role, mode: flagTarget.mode, flags: rows });
        else {
          const head = flagTarget.mode === "local" ? ["flag", "default", "state", "value"] : ["flag", "default", "state"];
          out.table(head, rows.map((row) => head.map((key) => row[key])));
          out.info(`${flagTarget.role} Worker ${flagTarget.worker}; read from ${flagTarget.where}`);
        }
        if (flagTarget.mode === "remote") {
          out.warn(
            "a dashboard variable with a flag's name is invisible to this command and would also reach the Worker (Worker → Settings → Variables and Secrets)",
          );
        }
        refuseFlagsUnderVars(flagTarget);
      }),
    );
}
