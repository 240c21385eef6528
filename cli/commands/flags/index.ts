/**
 * `magnt flags list|enable|disable <flag>` (08 §9): the only supported way
 * to change a flag. Locally it edits `.dev.vars` next to the config; remotely
 * it manages Worker secrets through Wrangler with an explicit `--config`.
 *
 * Why so careful: a flag switches on a feature that may message the owner,
 * expose owner tools or hand out dialogue tokens. `enable` therefore checks
 * every prerequisite of 00 §6 first and changes nothing when one fails; flags
 * of releases this codebase does not contain yet are refused outright; and a
 * remote write never happens against a guessed Worker (no default config) or
 * a config that still carries the placeholder database id.
 */
import type { Command } from "commander";
import { FLAG_NAMES, type FlagName, type Role } from "../../../worker/contracts";
import { defineAction, examples, type CommandRuntime } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { devVarsPath, parseDevVars, readDevVarsText, withDevVar, writeDevVars } from "../../lib/dev-vars";
import { CheckFailed, EnvironmentError, UsageError } from "../../lib/errors";
import { readAppliedMigrations } from "../../lib/migrations";
import { requireConfirmation } from "../../lib/prompts";
import { resolveMode, resolveTarget, type D1Target } from "../../lib/target";
import { deleteWorkerSecret, isBindingInUse, listWorkerSecrets, putWorkerSecret } from "../../lib/worker-secrets";
import { hasContactsDatabase, roleOfConfig } from "../../lib/wrangler-config";
import { dependentsOf, dependentsOnAnyRole, FLAG_SPECS, flagsReadBy, missingReleaseMigrations, NOTIFY_CRON, type FlagSpec } from "./catalog";

export interface FlagCheck {
  check: string;
  ok: boolean;
  detail?: string;
}

/** Where flags are read and written for this run. */
interface FlagTarget {
  target: D1Target;
  role: Role;
  worker: string;
  mode: "local" | "remote";
  /** Human description of the store (`.dev.vars` path, or the Worker's secrets). */
  where: string;
}

/** One reading of the store: local values, or the names of remote secrets. */
interface Snapshot {
  /** Present with a non-empty value (a secret counts as present). */
  present(name: string): boolean;
  /** The exact local value; undefined remotely (secret values cannot be read). */
  value(name: string): string | undefined;
  /** A prerequisite flag is on: exactly "true" locally, set remotely (the CLI only ever writes `true`). */
  on(name: FlagName): boolean;
}

export function registerFlags(program: Command, ctx: CliContext): void {
  const flags = program
    .command("flags")
    .description("list, enable or disable a flag (local .dev.vars, or remote Worker secrets with an explicit --config)");
  flags
    .command("list")
    .description("each flag the Worker reads: its default and its state")
    .addHelpText("after", examples(["magnt flags list", "magnt flags list --remote --config wrangler.jsonc"]))
    .action(defineAction<Record<string, never>>(ctx, (rt) => runList(rt)));
  flags
    .command("enable")
    .description("check every prerequisite, confirm, then set the flag")
    .argument("<flag>", FLAG_NAMES.join("|"))
    .addHelpText(
      "after",
      examples([
        "magnt flags enable TELEGRAM_NOTIFICATIONS_ENABLED --yes",
        "magnt flags enable TELEGRAM_PREVIEW_MODE --remote --config wrangler.jsonc",
      ]),
    )
    .action(defineAction<Record<string, never>>(ctx, (rt, args) => runEnable(rt, args[0] ?? "")));
  flags
    .command("disable")
    .description("confirm, then remove the flag (says what stops, and warns about flags that depend on it)")
    .argument("<flag>", FLAG_NAMES.join("|"))
    .addHelpText("after", `${offEffectsHelp()}${examples(["magnt flags disable TELEGRAM_NOTIFICATIONS_ENABLED --yes"])}`)
    .action(defineAction<Record<string, never>>(ctx, (rt, args) => runDisable(rt, args[0] ?? "")));
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

function resolveFlagTarget(rt: CommandRuntime): FlagTarget {
  const { ctx, globals } = rt;
  const mode = resolveMode(globals);
  if (mode === "remote" && globals.config === undefined) {
    throw new UsageError(
      "magnt flags --remote needs an explicit --config naming the Worker (for example --config wrangler.jsonc): a default could write a flag to a Worker that never reads it",
    );
  }
  const target = resolveTarget(ctx, globals);
  const role = roleOfConfig(target.config);
  if (role === undefined) {
    throw new UsageError(`${target.config.path}: its main entry (${target.config.main ?? "none"}) is not one of the door's Workers`, { showUsage: false });
  }
  const worker = typeof target.config.raw.name === "string" ? target.config.raw.name : target.config.path;
  const where = mode === "local" ? devVarsPath(target.config.absolutePath) : `the secrets of Worker ${worker} (${target.config.path})`;
  return { target, role, worker, mode, where };
}

function parseFlag(raw: string, flagTarget: FlagTarget): FlagSpec {
  const name = FLAG_NAMES.find((flag) => flag === raw);
  if (name === undefined) throw new UsageError(`unknown flag "${raw.slice(0, 80)}" (known: ${FLAG_NAMES.join(", ")})`);
  const spec = FLAG_SPECS[name];
  if (spec.readBy[flagTarget.role] === undefined) {
    throw new UsageError(`${name} is not read by the ${flagTarget.role} Worker of ${flagTarget.target.config.path}`, { showUsage: false });
  }
  return spec;
}

async function readSnapshot(rt: CommandRuntime, flagTarget: FlagTarget): Promise<Snapshot> {
  if (flagTarget.mode === "local") {
    const values = parseDevVars(readDevVarsText(flagTarget.where));
    return {
      present: (name) => (values.get(name) ?? "") !== "",
      value: (name) => values.get(name),
      on: (name) => values.get(name) === "true",
    };
  }
  const secrets = await listWorkerSecrets(rt.ctx, flagTarget.target, rt.out.quiet);
  return { present: (name) => secrets.has(name), value: () => undefined, on: (name) => secrets.has(name) };
}

/** `on`/`off` locally (exact value semantics), `secret_set`/`not_set` remotely. */
function stateOf(spec: FlagSpec, snapshot: Snapshot, mode: "local" | "remote"): string {
  if (mode === "remote") return snapshot.present(spec.name) ? "secret_set" : "not_set";
  return snapshot.value(spec.name) === spec.enableValue ? "on" : "off";
}

/** Flags declared under `vars` in the config (00 §6 forbids it: they would shadow the secret). */
function flagsUnderVars(flagTarget: FlagTarget): FlagName[] {
  const raw = flagTarget.target.config.raw;
  const names = new Set<string>(Object.keys(asRecord(raw.vars)));
  const envName = flagTarget.target.env;
  if (envName !== undefined) for (const key of Object.keys(asRecord(asRecord(asRecord(raw.env)[envName]).vars))) names.add(key);
  return FLAG_NAMES.filter((name) => names.has(name));
}

function refuseFlagsUnderVars(flagTarget: FlagTarget): void {
  const found = flagsUnderVars(flagTarget);
  if (found.length > 0) {
    throw new CheckFailed(
      `${flagTarget.target.config.path} declares ${found.join(", ")} under "vars": flags are secrets (magnt flags), never config variables; remove them from the config`,
    );
  }
}

async function runList(rt: CommandRuntime): Promise<void> {
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
}

/** Evaluates the prerequisites of 00 §6 for this flag and Worker. */
async function evaluatePrerequisites(rt: CommandRuntime, flagTarget: FlagTarget, spec: FlagSpec, snapshot: Snapshot): Promise<FlagCheck[]> {
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
  const prerequisites = spec.readBy[flagTarget.role]!;
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
    const ok = configCrons(flagTarget).includes(NOTIFY_CRON);
    checks.push(ok ? { check: `cron "${NOTIFY_CRON}" in ${flagTarget.target.config.path}`, ok } : { check: `cron "${NOTIFY_CRON}" in ${flagTarget.target.config.path}`, ok, detail: 'add "triggers": { "crons": ["* * * * *"] } to the config' });
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

/** `triggers.crons` of the config (an `--env` section's own triggers win, as in Wrangler). */
function configCrons(flagTarget: FlagTarget): string[] {
  const raw = flagTarget.target.config.raw;
  const envName = flagTarget.target.env;
  const section = envName === undefined ? {} : asRecord(asRecord(raw.env)[envName]);
  const triggers = asRecord(section.triggers ?? raw.triggers);
  return Array.isArray(triggers.crons) ? triggers.crons.filter((cron): cron is string => typeof cron === "string") : [];
}

async function runEnable(rt: CommandRuntime, rawFlag: string): Promise<void> {
  const { ctx, out, globals } = rt;
  const flagTarget = resolveFlagTarget(rt);
  const spec = parseFlag(rawFlag, flagTarget);
  refuseFlagsUnderVars(flagTarget);
  const snapshot = await readSnapshot(rt, flagTarget);
  const checks = await evaluatePrerequisites(rt, flagTarget, spec, snapshot);
  const failed = checks.filter((check) => !check.ok);
  if (failed.length > 0) {
    for (const check of failed) out.error(`prerequisite failed: ${check.check}${check.detail === undefined ? "" : ` — ${check.detail}`}`);
    if (out.json) out.jsonLine(result(spec, flagTarget, stateOf(spec, snapshot, flagTarget.mode), checks));
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
  if (out.json) out.jsonLine(result(spec, flagTarget, state, checks));
  else {
    out.line(`${spec.name} enabled (${spec.enableValue}) in ${flagTarget.where}`);
    if (flagTarget.mode === "local") out.info("restart magnt dev if it is running, so wrangler dev reads .dev.vars again");
  }
}

async function runDisable(rt: CommandRuntime, rawFlag: string): Promise<void> {
  const { ctx, out, globals } = rt;
  const flagTarget = resolveFlagTarget(rt);
  const spec = parseFlag(rawFlag, flagTarget);
  const snapshot = await readSnapshot(rt, flagTarget);
  const checks: FlagCheck[] = [];
  const effect = spec.offEffect;
  const stops = effect?.stops[flagTarget.role];
  if (stops !== undefined) out.info(`with ${spec.name} off on the ${flagTarget.role} Worker ${flagTarget.worker}: ${stops}`);
  for (const dependent of dependentsOf(spec.name, flagTarget.role)) {
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
  if (out.json) out.jsonLine(result(spec, flagTarget, offState, checks));
  else out.line(present ? `${spec.name} disabled in ${flagTarget.where}` : `${spec.name} was not set in ${flagTarget.where}: nothing to do`);
}

function result(spec: FlagSpec, flagTarget: FlagTarget, state: string, checks: FlagCheck[]) {
  return { flag: spec.name, worker: flagTarget.worker, role: flagTarget.role, state, checks };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
