/**
 * What every `magnt flags` subcommand shares: where flags are read and
 * written for this run (`.dev.vars` locally, the Worker's secrets remotely,
 * 08 §9), one reading of that store, the flag named on the command line, and
 * the `--json` result object.
 *
 * A remote write never happens against a guessed Worker (no default config)
 * or a config that still carries the placeholder database id (the target
 * resolution runs the guard).
 */
import { FLAG_NAMES, type FlagName, type Role } from "../../../worker/contracts";
import type { CommandRuntime } from "../../lib/command";
import { devVarsPath, parseDevVars, readDevVarsText } from "../../lib/dev-vars";
import { CheckFailed, UsageError } from "../../lib/errors";
import { resolveMode, resolveTarget, type D1Target } from "../../lib/target";
import { listWorkerSecrets } from "../../lib/worker-secrets";
import { roleOfConfig } from "../../lib/wrangler-config";
import { FLAG_SPECS, type FlagSpec } from "./catalog";

export interface FlagCheck {
  check: string;
  ok: boolean;
  detail?: string;
}

/** Where flags are read and written for this run. */
export interface FlagTarget {
  target: D1Target;
  role: Role;
  worker: string;
  mode: "local" | "remote";
  /** Human description of the store (`.dev.vars` path, or the Worker's secrets). */
  where: string;
}

/** One reading of the store: local values, or the names of remote secrets. */
export interface Snapshot {
  /** Present with a non-empty value (a secret counts as present). */
  present(name: string): boolean;
  /** The exact local value; undefined remotely (secret values cannot be read). */
  value(name: string): string | undefined;
  /** A prerequisite flag is on: exactly "true" locally, set remotely (the CLI only ever writes `true`). */
  on(name: FlagName): boolean;
}

export function resolveFlagTarget(rt: CommandRuntime): FlagTarget {
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
  return { target, role, worker, mode, where };
}

/** The flag named on the command line: a known flag the target's Worker reads, else exit 2. */
export function parseFlag(raw: string, flagTarget: FlagTarget): FlagSpec {
  const name = FLAG_NAMES.find((flag) => flag === raw);
  if (name === undefined) throw new UsageError(`unknown flag "${raw.slice(0, 80)}" (known: ${FLAG_NAMES.join(", ")})`);
  const spec = FLAG_SPECS[name];
  if (spec.readBy[flagTarget.role] === undefined) {
    throw new UsageError(`${name} is not read by the ${flagTarget.role} Worker of ${flagTarget.target.config.path}`, { showUsage: false });
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
  const declared = flagTarget.target.config.vars;
  const found = FLAG_NAMES.filter((name) => Object.hasOwn(declared, name));
  if (found.length > 0) {
    throw new CheckFailed(
      `${flagTarget.target.config.path} declares ${found.join(", ")} under "vars": flags are secrets (magnt flags), never config variables; remove them from the config`,
    );
  }
}

/** The `--json` object of `enable` and `disable` (08 §9). */
export function flagResult(spec: FlagSpec, flagTarget: FlagTarget, state: string, checks: FlagCheck[]) {
  return { flag: spec.name, worker: flagTarget.worker, role: flagTarget.role, state, checks };
}
