/**
 * `magnt migrate [--list]` (08 §7): list or apply the D1 migrations of the
 * `--config` database. Refuses edited, renamed, renumbered or missing
 * migrations before running anything; never renames or re-applies.
 */
import { examples, withRuntime, type ParentCommand } from "../lib/command";
import type { CliContext } from "../lib/context";
import { CheckFailed } from "../lib/errors";
import { applyPendingMigrations, inspectMigrations } from "../lib/migrations";
import { resolveTarget } from "../lib/target";

export function registerMigrate(program: ParentCommand, ctx: CliContext): void {
  program
    .command("migrate")
    .description("list or apply the D1 migrations (local by default)")
    .option("--list", "list migrations with their state and checksum; exit 1 if inconsistent", false)
    .addHelpText(
      "after",
      examples([
        "magnt migrate --list",
        "magnt migrate --persist-to .wrangler/e2e",
        "magnt migrate --remote --config wrangler.jsonc --yes",
      ]),
    )
    .action(
      withRuntime(ctx, async (rt, options) => {
        const { out, globals } = rt;
        const target = resolveTarget(ctx, globals);
        if (options.list) {
          const report = await inspectMigrations(ctx, target, out.quiet);
          if (out.json) out.jsonLine({ migrations: report.rows, consistent: report.problems.length === 0, problems: report.problems });
          else {
            out.table(
              ["name", "state", "checksum ok"],
              report.rows.map((row) => [row.name, row.state, row.checksum_ok === null ? "—" : row.checksum_ok ? "yes" : out.paint.fail("no")]),
            );
            for (const problem of report.problems) out.error(problem);
          }
          if (report.problems.length > 0) throw new CheckFailed(`migrations are inconsistent: ${report.problems.length} problem(s)`);
          return;
        }
        const result = await applyPendingMigrations(ctx, out, target, globals, { confirmRemote: true });
        if (out.json) out.jsonLine({ mode: target.mode, up_to_date: result.upToDate, applied: result.applied });
        else if (result.upToDate) out.line(`up to date (${target.mode})`);
        else out.wrappedItems(`applied (${target.mode}): `, result.applied.map((name, index) => (index < result.applied.length - 1 ? `${name},` : name)), " ", "  ");
      }),
    );
}
