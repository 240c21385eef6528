/**
 * `magnt flags list` (08 §9): each flag the Worker reads, its default and its
 * state; with `--owner`, all eight flags of the local split run, each with
 * the Workers that read it.
 */
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { FLAG_SPECS, flagsReadBy, readersOf } from "./catalog";
import { readSnapshot, resolveFlagTarget } from "../../lib/flag-store";
import { refuseFlagsUnderVars, stateOf } from "./target";

export function registerFlagsList(flags: ParentCommand, ctx: CliContext): void {
  flags
    .command("list")
    .description("each flag the Worker reads: its default and its state")
    .option("--owner", "the local split run's .dev.vars (magnt dev --owner): all eight flags")
    .addHelpText("after", examples(["magnt flags list", "magnt flags list --owner", "magnt flags list --remote --config wrangler.jsonc"]))
    .action(
      withRuntime(ctx, async (rt, options) => {
        const { out } = rt;
        const flagTarget = resolveFlagTarget(rt, options);
        const snapshot = await readSnapshot(rt, flagTarget);
        const rows = flagsReadBy(flagTarget.roles).map((name) => {
          const spec = FLAG_SPECS[name];
          const row: Record<string, unknown> = { flag: name, default: spec.defaultLabel, state: stateOf(spec, snapshot, flagTarget.mode) };
          if (flagTarget.mode === "local") row.value = snapshot.value(name) ?? null;
          if (flagTarget.role === "split") row.read_by = readersOf(spec, flagTarget.roles);
          return row;
        });
        if (out.json) out.jsonLine({ worker: flagTarget.worker, role: flagTarget.role, mode: flagTarget.mode, flags: rows });
        else {
          const head = [
            "flag",
            "default",
            "state",
            ...(flagTarget.mode === "local" ? ["value"] : []),
            ...(flagTarget.role === "split" ? ["read_by"] : []),
          ];
          out.table(head, rows.map((row) => head.map((key) => (Array.isArray(row[key]) ? (row[key] as string[]).join(", ") : row[key]))));
          out.info(flagTarget.role === "split" ? `${flagTarget.worker}; read from ${flagTarget.where}` : `${flagTarget.role} Worker ${flagTarget.worker}; read from ${flagTarget.where}`);
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
