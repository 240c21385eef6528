/**
 * What the `magnt flags` subcommands share beyond the store
 * (cli/lib/flag-store.ts): the flag named on the command line, the checks
 * and hints around a change, and the `--json` result object.
 */
import { FLAG_NAMES, type Role } from "../../../worker/contracts";
import { CheckFailed, UsageError } from "../../lib/errors";
import { closestMatch } from "../../lib/suggest";
import { SPLIT_CONFIG_FILES } from "../../lib/local-topology";
import { SPLIT_RUN_ROLES, type FlagTarget, type Snapshot } from "../../lib/flag-store";
import { FLAG_SPECS, readersOf, type FlagSpec } from "./catalog";

export interface FlagCheck {
  check: string;
  ok: boolean;
  detail?: string;
}

/** The deployable config of each role, for the hint that names the right one. */
const CONFIG_OF_ROLE: Readonly<Record<Role, string>> = {
  monolith: "wrangler.jsonc (locally wrangler.local.jsonc)",
  gateway: SPLIT_CONFIG_FILES.gateway,
  core: SPLIT_CONFIG_FILES.core,
  owner_gateway: SPLIT_CONFIG_FILES.owner,
};

/** The `<flag>` argument's help: the names separated by spaces, so the help wraps them to the terminal. */
export const FLAG_ARGUMENT_HELP = `one of ${FLAG_NAMES.join(" ")} (magnt flags list)`;

/** The flag named on the command line: a known flag the target's Worker reads, else exit 2. */
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
