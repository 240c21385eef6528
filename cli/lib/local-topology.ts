/**
 * The split deployment run locally and offline (`magnt dev --owner`, 08 §13,
 * 00 §3, issue 12 item 4): the public gateway on the door's port, core, and
 * the owner gateway on the owner port, sharing the local D1 — so a contact
 * left at the local door is what the local owner MCP lists. The monolith never
 * serves owner functions (06 §1), so `--owner` runs the three deployables
 * instead of it.
 *
 * Why three `wrangler dev` processes. In multi-config mode (`wrangler dev -c a
 * -c b`) only the first Worker gets a port; the others are reachable only
 * through bindings. The door and the owner gateway both need their own port,
 * and core needs one too: a cron pass is a request to
 * `/cdn-cgi/handler/scheduled` of the process whose *first* Worker is core
 * (Wrangler's proxy strips Miniflare's route-override header, so a scheduled
 * event cannot be sent to an auxiliary Worker). Service Bindings between the
 * processes (`CORE` → core's default entrypoint, `OWNER_CORE` → its
 * `OwnerEntrypoint`, RPC and returned streams included) go through Wrangler's
 * dev registry, verified with the pinned Wrangler offline.
 *
 * Isolation. Each run has its own directory of generated configs
 * (`<local config dir>/.wrangler/magnt-dev-split-<port>/`) and its own dev
 * registry inside it (`WRANGLER_REGISTRY_PATH`), so two local runs, or another
 * project's `wrangler dev`, can never bind to each other's `magnt-core`. Each
 * process gets its own inspector port.
 *
 * What the generated configs keep from the deployables: an allow-list
 * (name, main — made absolute —, compatibility settings, service bindings,
 * triggers). Everything production-only is dropped: routes and the custom
 * domain, observability, minify, keep_vars, workers_dev/preview_urls, the
 * rate-limit binding (the local monolith has none either). Core's D1 is the
 * local config's `CONTACTS` entry (the fixed local database id), and every
 * process persists to the same directory, so all of them — and `magnt
 * migrate`/`review`/`outbox --local` — see one SQLite file. Variables are the
 * local ones of 00 §7 (PUBLIC_ORIGIN/OWNER_ORIGIN on localhost, ALLOWED_HOSTS,
 * SITE_ORIGIN and OWNER_REDIRECT_ORIGINS empty); no variable of a deployable
 * is carried over with its production value.
 *
 * Secrets and flags: one file, "the split run's `.dev.vars`", is linked
 * (copied where links are not possible) into the generated directory, where
 * Wrangler reads it for all three Workers — as in production, where the owner
 * secrets are set on core and on the owner gateway alike (00 §7). Which file
 * (`chooseSplitDevVars`): the user's `.dev.vars` next to the local config
 * when it holds an owner secret (the owner was set up by hand); otherwise the
 * generated local-only file under `.wrangler/magnt-dev-owner/`
 * (cli/lib/generated-dev-vars.ts says why it can never serve a deployment),
 * created on the first run. `magnt flags --owner` edits the same file.
 *
 * Stand-ins (issue 19 item 1): unless that file names the origin itself, the
 * owner gateway is pointed at a GitHub stand-in and core at a Telegram
 * stand-in (scripts/*-stand-in.mjs), each on its own free loopback port, run
 * by `magnt dev` in the same process group.
 *
 * This module is the planner: configs, ports and facts in, a plan out, with
 * no filesystem and no sockets (paths are only computed). Reading the
 * deployables, finding free ports and writing the plan are
 * cli/lib/local-topology-files.ts and cli/lib/loopback-ports.ts.
 */
import { dirname, join, resolve } from "node:path";
import { D1_BINDING } from "../../worker/contracts";
import { devVarsPath } from "./dev-vars";
import { EnvironmentError } from "./errors";
import { OWNER_SECRETS } from "./generated-dev-vars";
import { LOOPBACK_IP } from "./loopback-ports";
import type { D1DatabaseEntry, WranglerConfig } from "./wrangler-config";
import { wranglerDevArgs } from "./wrangler-dev";

/** The three deployables, in the order their processes start. */
export const SPLIT_ROLES = ["core", "gateway", "owner"] as const;
export type SplitRole = (typeof SPLIT_ROLES)[number];

/** The committed deployable configs the local ones are generated from (00 §3), relative to the project directory. */
export const SPLIT_CONFIG_FILES: Readonly<Record<SplitRole, string>> = {
  core: "wrangler.core.jsonc",
  gateway: "wrangler.gateway.jsonc",
  owner: "wrangler.owner.jsonc",
};

/** The top-level keys a generated local config keeps from its deployable; everything else is production-only. */
const KEPT_KEYS = ["name", "compatibility_date", "compatibility_flags", "services", "triggers"] as const;

/** Loopback: core's port is never exposed beyond this machine, whatever `--ip` says. */
export const CORE_IP = LOOPBACK_IP;

export interface SplitPorts {
  /** Address of the door and of the owner gateway (`--ip`). */
  ip: string;
  /** The public door (gateway), `--port`. */
  port: number;
  /** The owner gateway, `--owner-port` (default `--port` + 1). */
  ownerPort: number;
  /** Core: a free loopback port, used for its cron pass only. */
  corePort: number;
  /** One inspector port per process. */
  inspector: Readonly<Record<SplitRole, number>>;
  /** A free loopback port for each stand-in (used only when its stand-in runs). */
  standIns: Readonly<Record<StandInRole, number>>;
}

/** The loopback stand-ins `magnt dev --owner` can run (scripts/<role>-stand-in.mjs). */
export const STAND_IN_ROLES = ["github", "telegram"] as const;
export type StandInRole = (typeof STAND_IN_ROLES)[number];

/** The variables each stand-in replaces; a split run's `.dev.vars` naming one of them keeps its own value and runs no stand-in. */
export const STAND_IN_VARIABLES: Readonly<Record<StandInRole, readonly string[]>> = {
  github: ["GITHUB_OAUTH_ORIGIN", "GITHUB_API_ORIGIN"],
  telegram: ["TELEGRAM_API_ORIGIN"],
};

export interface StandIn {
  role: StandInRole;
  port: number;
  /** `http://127.0.0.1:<port>`, as the Worker's loopback rule wants it written. */
  origin: string;
  /** The arguments after `node scripts/<role>-stand-in.mjs`. */
  args: string[];
}

/** Which file is the split run's `.dev.vars`, and why. */
export interface SplitDevVars {
  /** Absolute path of the file every process reads. */
  source: string;
  /** `yours`: the user's `.dev.vars` (it holds an owner secret); `generated`: the local-only file. */
  kind: "yours" | "generated";
  /** Whether the file exists now (a `generated` one that does not is created by `writeLocalSplit`). */
  present: boolean;
  /** The user's `.dev.vars`, and whether it exists (reported when `kind` is `generated`). */
  user: { path: string; present: boolean };
}

export interface SplitProcess {
  role: SplitRole;
  /** Absolute path of the generated config. */
  configPath: string;
  /** The generated config, as written (JSON). */
  config: Record<string, unknown>;
  /** The `wrangler dev` argv. */
  args: string[];
}

export interface LocalSplitPlan {
  /** The generated directory (configs, linked `.dev.vars`, dev registry). */
  dir: string;
  /** The private dev registry (`WRANGLER_REGISTRY_PATH` of every process). */
  registry: string;
  /** The one persistence directory of the three processes (absolute). */
  persistTo: string;
  /** The split run's `.dev.vars` (`chooseSplitDevVars`). */
  devVars: SplitDevVars;
  processes: SplitProcess[];
  /** The stand-ins to run (none when the `.dev.vars` or `--telegram-api-origin` names the origin). */
  standIns: StandIn[];
  ports: SplitPorts;
}

export function localOrigin(port: number): string {
  return `http://localhost:${port}`;
}

/** The URL that runs one pass of the scheduled handler of the process listening on `port` (05 §1). */
export function scheduledUrl(port: number): string {
  return `http://127.0.0.1:${port}/cdn-cgi/handler/scheduled`;
}

/**
 * The local value of each variable of 00 §7, and the Workers that read it
 * (its "Used by" column). A generated config gets exactly these: a variable a
 * deployable declares is never carried over with its production value, and
 * one it does not declare is still set where its Worker reads it.
 */
export function localVariables(
  ports: Pick<SplitPorts, "port" | "ownerPort">,
  telegramApiOrigin?: string,
  githubOrigin?: string,
): ReadonlyArray<{ name: string; value: string; roles: readonly SplitRole[] }> {
  return [
    { name: "PUBLIC_ORIGIN", value: localOrigin(ports.port), roles: ["core", "gateway"] },
    { name: "ALLOWED_HOSTS", value: "", roles: ["core", "gateway", "owner"] },
    { name: "SITE_ORIGIN", value: "", roles: ["gateway"] },
    { name: "OWNER_ORIGIN", value: localOrigin(ports.ownerPort), roles: ["core", "owner"] },
    { name: "OWNER_REDIRECT_ORIGINS", value: "", roles: ["owner"] },
    ...(telegramApiOrigin === undefined ? [] : [{ name: "TELEGRAM_API_ORIGIN", value: telegramApiOrigin, roles: ["core"] as const }]),
    ...(githubOrigin === undefined
      ? []
      : STAND_IN_VARIABLES.github.map((name) => ({ name, value: githubOrigin, roles: ["owner"] as const }))),
  ];
}

/** The origin of a stand-in on a loopback port. */
export function standInOrigin(port: number): string {
  return `http://${LOOPBACK_IP}:${port}`;
}

/**
 * The split run's `.dev.vars`: the user's own when it holds an owner secret
 * (`OWNER_SECRETS`), else the generated local-only file. `user` is the user's
 * file as parsed, or undefined when it does not exist.
 */
export function chooseSplitDevVars(
  userPath: string,
  user: ReadonlyMap<string, string> | undefined,
  generatedPath: string,
  generatedPresent: boolean,
): SplitDevVars {
  const holdsOwnerSecret = user !== undefined && OWNER_SECRETS.some((name) => (user.get(name) ?? "") !== "");
  const userFile = { path: userPath, present: user !== undefined };
  return holdsOwnerSecret
    ? { source: userPath, kind: "yours", present: true, user: userFile }
    : { source: generatedPath, kind: "generated", present: generatedPresent, user: userFile };
}

/** The generated local-only `.dev.vars` of a local config: `.wrangler/magnt-dev-owner/.dev.vars` next to it. */
export function generatedDevVarsPath(local: WranglerConfig): string {
  return devVarsPath(join(dirname(local.absolutePath), ".wrangler", "magnt-dev-owner", "any.json"));
}

/**
 * The local config of one deployable: the kept keys, `main` made absolute,
 * the local variables of its role, and — for the Worker that binds
 * `CONTACTS` — the local config's database entry.
 */
export function localWorkerConfig(
  role: SplitRole,
  deployable: WranglerConfig,
  localDatabase: D1DatabaseEntry,
  variables: ReturnType<typeof localVariables>,
): Record<string, unknown> {
  if (deployable.main === undefined) throw new EnvironmentError(`${deployable.path} has no "main" entry module`);
  const config: Record<string, unknown> = {};
  for (const key of KEPT_KEYS) if (deployable.settings[key] !== undefined) config[key] = deployable.settings[key];
  config.main = resolve(dirname(deployable.absolutePath), deployable.main);
  config.vars = Object.fromEntries(variables.filter((variable) => variable.roles.includes(role)).map((variable) => [variable.name, variable.value]));
  if (deployable.d1Databases.some((db) => db.binding === D1_BINDING)) config.d1_databases = [localDatabase];
  return config;
}

/** The `wrangler dev` argv of one process of the split run. */
export function splitDevArgs(role: SplitRole, configPath: string, ports: SplitPorts, persistTo: string): string[] {
  const [ip, port] = role === "gateway" ? [ports.ip, ports.port] : role === "owner" ? [ports.ip, ports.ownerPort] : [CORE_IP, ports.corePort];
  return wranglerDevArgs({ config: configPath, ip, port, inspectorPort: ports.inspector[role], persistTo });
}

/** The local config's `CONTACTS` database, with its migrations directory made absolute. */
function localDatabaseEntry(local: WranglerConfig): D1DatabaseEntry {
  const entry = local.d1Databases.find((db) => db.binding === D1_BINDING);
  if (entry === undefined || typeof entry.database_id !== "string") {
    throw new EnvironmentError(`${local.path} declares no ${D1_BINDING} database with a database_id: --owner shares that local database`);
  }
  return {
    binding: D1_BINDING,
    database_name: entry.database_name ?? "magnt-contacts-local",
    database_id: entry.database_id,
    migrations_dir: resolve(dirname(local.absolutePath), entry.migrations_dir ?? "migrations"),
  };
}

/**
 * Wrangler's persistence directory for the local config: `--persist-to`
 * (relative to the working directory), else `.wrangler/state` next to the
 * config — where `magnt migrate --local` (and plain `magnt dev`) put it.
 */
export function localPersistDirectory(local: WranglerConfig, cwd: string, persistTo: string | undefined): string {
  return persistTo === undefined ? join(dirname(local.absolutePath), ".wrangler", "state") : resolve(cwd, persistTo);
}

/** The user's `.dev.vars`: next to the local config (where plain `magnt dev` and `magnt flags` read it). */
export function devVarsSource(local: WranglerConfig): string {
  return devVarsPath(local.absolutePath);
}

/**
 * The ports of the split run from the two the user chose and `free`, free
 * loopback ports distinct from them: core's first, then one inspector port
 * per process in `SPLIT_ROLES` order, then one per stand-in in
 * `STAND_IN_ROLES` order.
 */
export function splitPorts(ip: string, port: number, ownerPort: number, free: readonly number[]): SplitPorts {
  if (free.length !== SPLIT_FREE_PORTS) throw new Error(`splitPorts needs ${SPLIT_FREE_PORTS} free ports, got ${free.length}`);
  const [corePort, ...rest] = free as [number, ...number[]];
  const inspector = Object.fromEntries(SPLIT_ROLES.map((role, index) => [role, rest[index]!])) as Record<SplitRole, number>;
  const standIns = Object.fromEntries(STAND_IN_ROLES.map((role, index) => [role, rest[SPLIT_ROLES.length + index]!])) as Record<StandInRole, number>;
  return { ip, port, ownerPort, corePort, inspector, standIns };
}

/** How many free loopback ports `splitPorts` takes: core's, one inspector per process, one per stand-in. */
export const SPLIT_FREE_PORTS = 1 + SPLIT_ROLES.length + STAND_IN_ROLES.length;

/** What the planner needs; everything read from disk or the network is already in here. */
export interface LocalSplitInputs {
  /** The local config (`wrangler.local.jsonc` or `--config`): its directory and its `CONTACTS` entry. */
  local: WranglerConfig;
  /** The committed deployable configs, read from the project directory. */
  deployables: Readonly<Record<SplitRole, WranglerConfig>>;
  /** The working directory (a relative `--persist-to` is relative to it). */
  cwd: string;
  persistTo?: string;
  ports: SplitPorts;
  telegramApiOrigin?: string;
  /** The split run's `.dev.vars` (`chooseSplitDevVars`). */
  devVars: SplitDevVars;
  /** The names that file defines now (none for a generated file yet to be written: it names no origin). */
  devVarNames: ReadonlySet<string>;
}

/** Plans the split run (pure: reads and writes nothing). */
export function planLocalSplit(inputs: LocalSplitInputs): LocalSplitPlan {
  const { local, ports } = inputs;
  const dir = join(dirname(local.absolutePath), ".wrangler", `magnt-dev-split-${ports.port}`);
  const persistTo = localPersistDirectory(local, inputs.cwd, inputs.persistTo);
  const database = localDatabaseEntry(local);
  const standIns = plannedStandIns(ports, inputs.devVarNames, inputs.telegramApiOrigin !== undefined);
  const standInOf = (role: StandInRole) => standIns.find((standIn) => standIn.role === role)?.origin;
  const variables = localVariables(ports, inputs.telegramApiOrigin ?? standInOf("telegram"), standInOf("github"));
  const processes = SPLIT_ROLES.map((role): SplitProcess => {
    const configPath = join(dir, `${role}.local.json`);
    return {
      role,
      configPath,
      config: localWorkerConfig(role, inputs.deployables[role], database, variables),
      args: splitDevArgs(role, configPath, ports, persistTo),
    };
  });
  return { dir, registry: join(dir, "registry"), persistTo, devVars: inputs.devVars, processes, standIns, ports };
}

/**
 * The stand-ins the run needs: each one whose variables the split run's
 * `.dev.vars` leaves unset (the Telegram one also not when
 * `--telegram-api-origin` names another origin). The GitHub stand-in approves
 * at once (`--auto`): the owner's decision is the consent page's Approve,
 * and a second click on a fake GitHub page adds nothing locally.
 */
export function plannedStandIns(ports: Pick<SplitPorts, "standIns">, devVarNames: ReadonlySet<string>, telegramGiven: boolean): StandIn[] {
  return STAND_IN_ROLES.filter((role) => !STAND_IN_VARIABLES[role].some((name) => devVarNames.has(name)))
    .filter((role) => role !== "telegram" || !telegramGiven)
    .map((role) => {
      const port = ports.standIns[role];
      return { role, port, origin: standInOrigin(port), args: ["--port", String(port), ...(role === "github" ? ["--auto"] : [])] };
    });
}
