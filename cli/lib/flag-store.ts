/**
 * Where flags live for one run, shared by `magnt flags` and `magnt review`
 * (which reports the notification flags): `.dev.vars` locally, the Worker's
 * secrets remotely (08 §9); with `--owner`, the local split run's
 * `.dev.vars`, read by all of its Workers. One reading of that store is a
 * `Snapshot`.
 *
 * A remote write never happens against a guessed Worker (no default config)
 * or a config that still carries the placeholder database id (the target
 * resolution runs the guard).
 */
import type { FlagName, Role } from "../../worker/contracts";
import type { CommandRuntime } from "./command";
import { devVarsPath, parseDevVars, readDevVarsText } from "./dev-vars";
import { UsageError } from "./errors";
import { ensureSplitDevVars, findSplitDevVars, readDeployables } from "./local-topology-files";
import { SPLIT_CONFIG_FILES } from "./local-topology";
import { resolveMode, resolveTarget, type D1Target } from "./target";
import { listWorkerSecrets } from "./worker-secrets";
import { roleOfConfig } from "./wrangler-config";

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
