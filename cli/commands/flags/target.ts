/**
 * What every `magnt flags` subcommand shares: where flags are read and
 * written for this run (`.dev.vars` locally, the Worker's secrets remotely,
 * 08 §9; with `--owner`, the local split run's `.dev.vars`, read by all of
 * its Workers), one reading of that store, the flag named on the command
 * line, and the `--json` result object.
 *
 * A remote write never happens against a guessed Worker (no default config)
 * or a config that still carries the placeholder database id (the target
 * resolution runs the guard).
 */
import { FLAG_NAMES, type FlagName, type Role } from "../../../worker/contracts";
import type { CommandRuntime } from "../../lib/command";
import { devVarsPath, parseDevVars, readDevVarsText } from "../../lib/dev-vars";
import { CheckFailed, UsageError } from "../../lib/errors";
import { closestMatch } from "../../lib/suggest";
import { ensureSplitDevVars, findSplitDevVars, readDeployables } from "../../lib/local-topology-files";
import { SPLIT_CONFIG_FILES } from "../../lib/local-topology";
import { resolveMode, resolveTarget, type D1Target } from "../../lib/target";
import { listWorkerSecrets } from "../../lib/worker-secrets";
import { roleOfConfig } from "../../lib/wrangler-config";
import { FLAG_SPECS, readersOf, type FlagSpec } from "./catalog";

export interface FlagCheck {
  check: string;
  ok: boolean;
  detail?: string;
}

/** Where flags are read and written for this run. */
export interface FlagTarget {
  /** The config whose D1 the migration checks read (the local config for `--owner`: the split run shares its database). */
  target: D1Target;
  /** The Workers whose flags this run manages: the config's one, or the local split run's (`--owner`). */
  roles: readonly Role[];
  /** Names them in messages and `--json`: the config's role, or `split`. */
  role: Role | "split";
  worker: string;
  mode: "local" | "remote";
  /** Human description of the store (`.dev.vars` path, or the Worker's secrets). */
  where: string;
  /** The crons of the Worker that runs the notification cron, and the config they come from. */
  cron: { crons: readonly string[]; config: string };
}

/** The local split run's Workers (`magnt dev --owner`) in the role names of 00 §3. */
export const SPLIT_RUN_ROLES: readonly Role[] = ["core", "gateway", "owner_gateway"];

/** The deployable config of each role, for the hint that names the right one. */
const CONFIG_OF_ROLE: Readonly<Record<Role, string>> = {
  monolith: "wrangler.jsonc (locally wrangler.local.jsonc)",
  gateway: SPLIT_CONFIG_FILES.gateway,
  core: SPLIT_CONFIG_FILES.core,
  owner_gateway: SPLIT_CONFIG_FILES.owner,
};

/** One reading of the store: local values, or the names of remote secrets. */
export interface Snapshot {
  /** Present with a non-empty value (a secret counts as present). */
  present(name: string): boolean;
  /** The exact local value; undefined remotely (secret values cannot be read). */
  value(name: string): string | undefined;
  /** A prerequisite flag is on: exactly "true" locally, set remotely (the CLI only ever writes `true`). */
  on(name: FlagName): boolean;
}

export function resolveFlagTarget(rt: CommandRuntime, options: { owner?: boolean } = {}): FlagTarget {
  if (options.owner === true) return resolveSplitFlagTarget(rt);
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
  const worker = target.config.name ?? target.config.path;
  const where = mode === "local" ? devVarsPath(target.config.absolutePath) : `the secrets of Worker ${worker} (${target.config.path})`;
  return { target, roles: [role], role, worker, mode, where, cron: { crons: target.config.crons, config: target.config.path } };
}

/**
 * `--owner`: the local split run of `magnt dev --owner` — its one `.dev.vars`
 * (the user's when it holds an owner secret, else the generated local-only
 * file, created here if it does not exist yet, exactly as `magnt dev --owner`
 * would), all eight flags, the local database for the migration checks and
 * core's committed config for the cron. Local only.
 */
function resolveSplitFlagTarget(rt: CommandRuntime): FlagTarget {
  const { ctx, globals, out } = rt;
  if (resolveMode(globals) === "remote") {
    throw new UsageError(
      `--owner manages the local split run's .dev.vars (magnt dev --owner); for deployed Workers use --remote --config ${SPLIT_CONFIG_FILES.core} or --config ${SPLIT_CONFIG_FILES.owner}`,
    );
  }
  if (globals.env !== undefined) throw new UsageError("--owner manages the local split run, which takes no --env");
  const target = resolveTarget(ctx, globals);
  const devVars = findSplitDevVars(target.config);
  if (ensureSplitDevVars(devVars)) out.info(`created ${devVars.source} with generated local-only values (the same file magnt dev --owner uses)`);
  const core = readDeployables(ctx.cwd).core;
  return {
    target,
    roles: SPLIT_RUN_ROLES,
    role: "split",
    worker: "the local split run (magnt-core, magnt-observer, magnt-owner)",
    mode: "local",
    where: devVars.source,
    cron: { crons: core.crons, config: core.path },
  };
}

/** The flag named on the command line: a known flag the target's Worker reads, else exit 2. */
/** The `<flag>` argument's help: the names separated by spaces, so the help wraps them to the terminal. */
export const FLAG_ARGUMENT_HELP = `one of ${FLAG_NAMES.join(" ")} (magnt flags list)`;

export function parseFlag(raw: string, flagTarget: FlagTarget): FlagSpec {
  const name = FLAG_NAMES.find((flag) => flag === raw);
  if (name === undefined) {
    const suggestion = closestMatch(raw, FLAG_NAMES);
    throw new UsageError(
      `unknown flag "${raw.slice(0, 80)}" ${suggestion === undefined ? `(known: ${FLAG_NAMES.join(", ")})` : `(Did you mean ${suggestion}?)`}`,
    );
  }
  const spec = FLAG_SPECS[name];
  if (readersOf(spec, flagTarget.roles).length === 0) {
    const readers = (Object.keys(spec.readBy) as Role[]).map((role) => `${role} (${CONFIG_OF_ROLE[role]})`).join(" and ");
    const local = flagTarget.mode === "local" && readersOf(spec, SPLIT_RUN_ROLES).length > 0 ? `; for the local split run (magnt dev --owner): --owner` : "";
    throw new UsageError(`${name} is not read by the ${flagTarget.role} Worker of ${flagTarget.target.config.path}: it is read by ${readers}${local}`, { showUsage: false });
  }
  return spec;
}

export async function readSnapshot(rt: CommandRuntime, flagTarget: FlagTarget): Promise<Snapshot> {
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
export function stateOf(spec: FlagSpec, snapshot: Snapshot, mode: "local" | "remote"): string {
  if (mode === "remote") return snapshot.present(spec.name) ? "secret_set" : "not_set";
  return snapshot.value(spec.name) === spec.enableValue ? "on" : "off";
}

/**
 * Flags declared under `vars` in the config (00 §6 forbids it: they would
 * shadow the secret) → exit 1. The `vars` of the run's environment, as
 * Wrangler resolves them (cli/lib/wrangler-config.ts).
 */
export function refuseFlagsUnderVars(flagTarget: FlagTarget): void {
  // The split run's generated configs carry only the local variables of 00 §7, never a flag.
  if (flagTarget.role === "split") return;
  const declared = flagTarget.target.config.vars;
  const found = FLAG_NAMES.filter((name) => Object.hasOwn(declared, name));
  if (found.length > 0) {
    throw new CheckFailed(
      `${flagTarget.target.config.path} declares ${found.join(", ")} under "vars": flags are secrets (magnt flags), never config variables; remove them from the config`,
    );
  }
}

/** What to do after a local change: Wrangler reads `.dev.vars` only when it starts. */
export function restartHint(flagTarget: FlagTarget): string {
  return flagTarget.role === "split"
    ? "restart magnt dev --owner if it is running, so its three wrangler dev processes read the .dev.vars again"
    : "restart magnt dev if it is running, so wrangler dev reads .dev.vars again";
}

/** The `--json` object of `enable` and `disable` (08 §9). */
export function flagResult(spec: FlagSpec, flagTarget: FlagTarget, state: string, checks: FlagCheck[]) {
  return { flag: spec.name, worker: flagTarget.worker, role: flagTarget.role, state, checks };
}
