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
 * Secrets and flags: the user's one `.dev.vars`, next to the local config, is
 * linked (copied where links are not possible) into the generated directory,
 * where Wrangler reads it for all three Workers — as in production, where the
 * owner secrets are set on core and on the owner gateway alike (00 §7).
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { D1_BINDING } from "../../worker/contracts";
import { devVarsPath } from "./dev-vars";
import { EnvironmentError } from "./errors";
import { readWranglerConfig, type D1DatabaseEntry, type WranglerConfig } from "./wrangler-config";

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
export const CORE_IP = "127.0.0.1";

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
  /** The user's `.dev.vars` (next to the local config) and whether it exists. */
  devVars: { source: string; present: boolean };
  processes: SplitProcess[];
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
): ReadonlyArray<{ name: string; value: string; roles: readonly SplitRole[] }> {
  return [
    { name: "PUBLIC_ORIGIN", value: localOrigin(ports.port), roles: ["core", "gateway"] },
    { name: "ALLOWED_HOSTS", value: "", roles: ["core", "gateway", "owner"] },
    { name: "SITE_ORIGIN", value: "", roles: ["gateway"] },
    { name: "OWNER_ORIGIN", value: localOrigin(ports.ownerPort), roles: ["core", "owner"] },
    { name: "OWNER_REDIRECT_ORIGINS", value: "", roles: ["owner"] },
    ...(telegramApiOrigin === undefined ? [] : [{ name: "TELEGRAM_API_ORIGIN", value: telegramApiOrigin, roles: ["core"] as const }]),
  ];
}

/**
 * The local config of one deployable (pure): the kept keys, `main` made
 * absolute, the local variables of its role, and — for the Worker that binds
 * `CONTACTS` — the local config's database entry.
 */
export function localWorkerConfig(
  role: SplitRole,
  deployable: WranglerConfig,
  localDatabase: D1DatabaseEntry,
  variables: ReturnType<typeof localVariables>,
): Record<string, unknown> {
  const raw = deployable.raw;
  if (typeof raw.main !== "string") throw new EnvironmentError(`${deployable.path} has no "main" entry module`);
  const config: Record<string, unknown> = {};
  for (const key of KEPT_KEYS) if (raw[key] !== undefined) config[key] = raw[key];
  config.main = resolve(dirname(deployable.absolutePath), raw.main);
  config.vars = Object.fromEntries(variables.filter((variable) => variable.roles.includes(role)).map((variable) => [variable.name, variable.value]));
  if (deployable.d1Databases.some((db) => db.binding === D1_BINDING)) config.d1_databases = [localDatabase];
  return config;
}

/** The `wrangler dev` argv of one process of the split run. */
export function splitDevArgs(role: SplitRole, configPath: string, ports: SplitPorts, persistTo: string): string[] {
  const [ip, port] = role === "gateway" ? [ports.ip, ports.port] : role === "owner" ? [ports.ip, ports.ownerPort] : [CORE_IP, ports.corePort];
  return [
    "dev",
    "--config",
    configPath,
    "--local",
    "--ip",
    ip,
    "--port",
    String(port),
    "--inspector-port",
    String(ports.inspector[role]),
    "--persist-to",
    persistTo,
  ];
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

/** Plans the split run (reads the deployable configs from `projectDir`; writes nothing). */
export function planLocalSplit(options: {
  local: WranglerConfig;
  projectDir: string;
  cwd: string;
  persistTo?: string;
  ports: SplitPorts;
  telegramApiOrigin?: string;
}): LocalSplitPlan {
  const { local, ports } = options;
  const dir = join(dirname(local.absolutePath), ".wrangler", `magnt-dev-split-${ports.port}`);
  const persistTo = localPersistDirectory(local, options.cwd, options.persistTo);
  const database = localDatabaseEntry(local);
  const variables = localVariables(ports, options.telegramApiOrigin);
  const processes = SPLIT_ROLES.map((role): SplitProcess => {
    const file = SPLIT_CONFIG_FILES[role];
    if (!existsSync(join(options.projectDir, file))) {
      throw new EnvironmentError(`--owner runs the split deployment and needs ${file} in ${options.projectDir}`);
    }
    const deployable = readWranglerConfig(file, options.projectDir);
    const configPath = join(dir, `${role}.local.json`);
    return { role, configPath, config: localWorkerConfig(role, deployable, database, variables), args: splitDevArgs(role, configPath, ports, persistTo) };
  });
  const source = devVarsPath(local.absolutePath);
  return { dir, registry: join(dir, "registry"), persistTo, devVars: { source, present: existsSync(source) }, processes, ports };
}

/**
 * Writes the plan: the generated configs, a fresh (empty) dev registry, and
 * the link to the user's `.dev.vars` (a stale link or copy from an earlier run
 * is removed first, so a deleted `.dev.vars` is deleted here too).
 */
export function writeLocalSplit(plan: LocalSplitPlan): void {
  try {
    mkdirSync(plan.dir, { recursive: true });
    rmSync(plan.registry, { recursive: true, force: true });
    mkdirSync(plan.registry, { recursive: true });
    for (const worker of plan.processes) {
      writeFileSync(worker.configPath, `${JSON.stringify(worker.config, null, 2)}\n`);
    }
    const linked = devVarsPath(join(plan.dir, "any.json"));
    rmSync(linked, { force: true });
    if (plan.devVars.present) linkOrCopy(plan.devVars.source, linked);
  } catch (error) {
    if (error instanceof EnvironmentError) throw error;
    throw new EnvironmentError(`cannot write the local split configs in ${plan.dir}: ${(error as NodeJS.ErrnoException).code ?? "unwritable"}`);
  }
}

/** A symbolic link keeps one copy of the secrets on disk and follows the user's edits; copy (0600) where links are refused. */
function linkOrCopy(source: string, target: string): void {
  try {
    symlinkSync(isAbsolute(source) ? source : resolve(source), target);
  } catch {
    copyFileSync(source, target);
  }
}

/** A loopback port that was free a moment ago (bound to 0, then released). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(0, CORE_IP, resolvePromise);
  });
  const address = server.address();
  await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
  if (address === null || typeof address === "string") throw new EnvironmentError("cannot find a free loopback port");
  return address.port;
}

/** Core's port and one inspector port per process: free loopback ports, distinct, none equal to the two public ones. */
export async function pickSplitPorts(ip: string, port: number, ownerPort: number): Promise<SplitPorts> {
  const [corePort, ...inspectors] = await freeLoopbackPorts(1 + SPLIT_ROLES.length, [port, ownerPort]);
  const inspector = Object.fromEntries(SPLIT_ROLES.map((role, index) => [role, inspectors[index]!])) as Record<SplitRole, number>;
  return { ip, port, ownerPort, corePort: corePort!, inspector };
}

/** `count` distinct free loopback ports, none of them in `taken`. */
export async function freeLoopbackPorts(count: number, taken: readonly number[]): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count; attempt += 1) {
    if (attempt > count * 20) throw new EnvironmentError("cannot find free loopback ports for the local split run");
    const port = await freeLoopbackPort();
    if (!taken.includes(port) && !ports.includes(port)) ports.push(port);
  }
  return ports;
}
