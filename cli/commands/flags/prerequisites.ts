/**
 * The prerequisites of 00 §6 that `magnt flags enable` checks before it
 * changes anything (08 §9): the release is part of this codebase, the
 * migrations are applied (skipped for a Worker without D1), the secrets are
 * present, the cron is in the config, and the prerequisite flags are on. The
 * rules per flag and Worker are data in ./catalog.ts.
 */
import type { CommandRuntime } from "../../lib/command";
import { readAppliedMigrations } from "../../lib/migrations";
import { hasContactsDatabase } from "../../lib/wrangler-config";
import { missingReleaseMigrations, NOTIFY_CRON, prerequisitesOn, type FlagSpec } from "./catalog";
import type { FlagTarget, Snapshot } from "../../lib/flag-store";
import type { FlagCheck } from "./target";

/** Every check of this flag on this Worker, failed ones with a hint (all of them, so one run shows everything to fix). */
export async function evaluatePrerequisites(rt: CommandRuntime, flagTarget: FlagTarget, spec: FlagSpec, snapshot: Snapshot): Promise<FlagCheck[]> {
  const missing = missingReleaseMigrations(spec);
  if (missing.length > 0 && spec.release !== undefined) {
    return [
      {
        check: `${spec.release.label} is part of this codebase`,
        ok: false,
        detail: `migrations/${missing.join(", migrations/")} does not exist yet, so ${spec.name} cannot be enabled until that release (and its migrations) lands`,
      },
    ];
  }
  const prerequisites = prerequisitesOn(spec, flagTarget.roles);
  const checks: FlagCheck[] = [];
  if (prerequisites.migrations.length > 0) {
    if (hasContactsDatabase(flagTarget.target.config)) {
      const applied = new Set(await readAppliedMigrations(rt.ctx, flagTarget.target, rt.out.quiet));
      for (const name of prerequisites.migrations) {
        const ok = applied.has(name);
        checks.push(ok ? { check: `migration ${name} applied`, ok } : { check: `migration ${name} applied`, ok, detail: `run ${migrateCommand(rt, flagTarget)}` });
      }
    } else {
      checks.push({ check: "migrations", ok: true, detail: "skipped: this Worker has no D1 binding" });
    }
  }
  for (const name of prerequisites.secrets) {
    const ok = snapshot.present(name);
    const hint = flagTarget.mode === "local" ? `add ${name}=… to ${flagTarget.where}` : `wrangler secret put ${name} --config ${flagTarget.target.config.path}`;
    checks.push(ok ? { check: `secret ${name} present`, ok } : { check: `secret ${name} present`, ok, detail: hint });
  }
  if (prerequisites.cron) {
    // The crons of the run's environment, as Wrangler resolves them (cli/lib/wrangler-config.ts).
    const ok = flagTarget.cron.crons.includes(NOTIFY_CRON);
    const check = `cron "${NOTIFY_CRON}" in ${flagTarget.cron.config}`;
    checks.push(ok ? { check, ok } : { check, ok, detail: 'add "triggers": { "crons": ["* * * * *"] } to the config' });
  }
  for (const name of prerequisites.flags) {
    const ok = snapshot.on(name);
    checks.push(ok ? { check: `flag ${name} on`, ok } : { check: `flag ${name} on`, ok, detail: `enable ${name} first` });
  }
  return checks;
}

/** The `magnt migrate` line that applies to the same database as this run. */
function migrateCommand(rt: CommandRuntime, flagTarget: FlagTarget): string {
  const { globals } = rt;
  const parts = ["magnt migrate"];
  if (flagTarget.mode === "remote") parts.push("--remote");
  if (globals.config !== undefined) parts.push(`--config ${globals.config}`);
  if (globals.env !== undefined) parts.push(`--env ${globals.env}`);
  if (flagTarget.target.persistTo !== undefined) parts.push(`--persist-to ${flagTarget.target.persistTo}`);
  return parts.join(" ");
}
