/**
 * Reading a Wrangler config (JSONC) for the CLI's own decisions: the
 * placeholder `database_id` guard (00 §3, 08 §4), the migrations directory,
 * the role of the Worker (from its `main` entry module), the Worker's name,
 * its `vars` and its crons (`magnt flags`), and the keys `magnt dev --owner`
 * copies into its generated configs. Wrangler itself still reads the file;
 * the CLI only looks, never writes.
 *
 * The CLI must see the config the way Wrangler will, or a guard could pass
 * (or refuse) a database Wrangler would never use. So `resolveEnvironment` is
 * the only code that reads an `env.<name>` section, and it applies Wrangler's
 * environment rules:
 * - non-inheritable keys (`vars`, `d1_databases`, `services`, `kv_namespaces`,
 *   `durable_objects`, `define`, … — `NON_INHERITABLE_KEYS`) come only from
 *   the section: a section without `d1_databases` has no D1 at all, one
 *   without `vars` has no variables (Wrangler only warns);
 * - every other key (`main`, `compatibility_date`, `triggers`, …) is the
 *   section's, else the top level's; `name` falls back to `<top-level
 *   name>-<env>`, the Worker Wrangler deploys for that environment;
 * - with `--env <name>` and no such section, Wrangler fails when the config
 *   defines other environments (→ usage error here, before anything runs),
 *   and uses the top level (with a warning, the name still suffixed) when it
 *   defines none.
 * Documented at https://developers.cloudflare.com/workers/wrangler/configuration/#non-inheritable-keys
 * and https://developers.cloudflare.com/workers/wrangler/environments/; the
 * list below is taken from the pinned Wrangler's own reader (4.86.0,
 * `normalizeAndValidateEnvironment`: every field read with `notInheritable`),
 * and test/cli/wrangler-environments.test.ts compares this reader with it.
 * Wrangler's reader (`unstable_readConfig`) would give the same answers but
 * costs about 4 s to import on the reference machine, on every CLI call; this
 * one takes milliseconds.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { D1_BINDING, PLACEHOLDER_DATABASE_ID, ROLES, type Role } from "../../worker/contracts";
import { isRecord } from "../../worker/contracts/guards";
import { EnvironmentError, UsageError } from "./errors";
import { parseJsonc } from "./jsonc";

/** Keys an environment never inherits from the top level (Wrangler 4.86.0; see the header). */
export const NON_INHERITABLE_KEYS: ReadonlySet<string> = new Set([
  "vars",
  "secrets",
  "define",
  "durable_objects",
  "workflows",
  "kv_namespaces",
  "cloudchamber",
  "containers",
  "send_email",
  "queues",
  "r2_buckets",
  "d1_databases",
  "vectorize",
  "ai_search_namespaces",
  "ai_search",
  "hyperdrive",
  "services",
  "analytics_engine_datasets",
  "dispatch_namespaces",
  "mtls_certificates",
  "tail_consumers",
  "streaming_tail_consumers",
  "unsafe",
  "browser",
  "ai",
  "images",
  "stream",
  "media",
  "pipelines",
  "secrets_store_secrets",
  "artifacts",
  "unsafe_hello_world",
  "flagship",
  "worker_loaders",
  "ratelimits",
  "vpc_services",
  "vpc_networks",
  "version_metadata",
]);

export interface D1DatabaseEntry {
  binding?: string;
  database_name?: string;
  database_id?: string;
  migrations_dir?: string;
}

/** A config as Wrangler resolves it for one environment (or for none). */
export interface WranglerConfig {
  /** The path as given (for messages). */
  path: string;
  /** Absolute path. */
  absolutePath: string;
  /** Every key of the resolved environment (without `env`), as `resolveEnvironment` returns it. */
  settings: Readonly<Record<string, unknown>>;
  /** The Worker's name for this environment, when the config names it. */
  name?: string;
  main?: string;
  d1Databases: D1DatabaseEntry[];
  /** `vars` of this environment (never the top level's under `--env`). */
  vars: Readonly<Record<string, unknown>>;
  /** `triggers.crons` of this environment (inherited from the top level when the section has no `triggers`). */
  crons: string[];
}

/** Reads and parses a config for `envName`; unreadable or invalid → exit 3 (08 §3), unknown environment → exit 2. */
export function readWranglerConfig(path: string, cwd: string, envName?: string): WranglerConfig {
  const absolutePath = resolve(cwd, path);
  let text: string;
  try {
    text = readFileSync(absolutePath, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Most often magnt run outside the repository: say what was looked for, where, and the two ways out (08 §3).
    if (code === "ENOENT") {
      throw new EnvironmentError(
        `no Wrangler config ${path} in ${cwd}: run magnt in the repository (npm ci there first), or pass --config <path to a wrangler config>`,
      );
    }
    throw new EnvironmentError(`cannot read Wrangler config ${path}: ${code ?? "unreadable"}`);
  }
  let parsed: unknown;
  try {
    parsed = parseJsonc(text);
  } catch (error) {
    throw new EnvironmentError(`cannot parse Wrangler config ${path}: ${(error as Error).message}`);
  }
  if (!isRecord(parsed)) throw new EnvironmentError(`Wrangler config ${path} is not a JSON object`);
  const settings = resolveEnvironment(parsed, path, envName);
  const triggers = isRecord(settings.triggers) ? settings.triggers : {};
  return {
    path,
    absolutePath,
    settings,
    ...(typeof settings.name === "string" ? { name: settings.name } : {}),
    ...(typeof settings.main === "string" ? { main: settings.main } : {}),
    d1Databases: Array.isArray(settings.d1_databases) ? settings.d1_databases.filter(isRecord).map((entry) => entry as D1DatabaseEntry) : [],
    vars: isRecord(settings.vars) ? settings.vars : {},
    crons: Array.isArray(triggers.crons) ? triggers.crons.filter((cron): cron is string => typeof cron === "string") : [],
  };
}

/**
 * The one reader of `env.<name>` sections: the keys of the environment
 * `envName` as Wrangler resolves them (see the header), without `env`.
 */
export function resolveEnvironment(parsed: Readonly<Record<string, unknown>>, path: string, envName: string | undefined): Record<string, unknown> {
  const { env: environments, ...top } = parsed;
  if (envName === undefined) return top;
  const section = isRecord(environments) ? environments[envName] : undefined;
  if (!isRecord(section)) {
    const defined = Object.keys(isRecord(environments) ? environments : {});
    if (defined.length > 0) {
      throw new UsageError(`${path} has no environment "${envName}" (it defines ${defined.join(", ")}); Wrangler would refuse --env ${envName}`, {
        showUsage: false,
      });
    }
    // No environments at all: Wrangler warns and uses the top level, still naming the Worker for the environment.
    return withName({ ...top }, environmentName(top.name, envName));
  }
  const resolved: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(top)) if (!NON_INHERITABLE_KEYS.has(key)) resolved[key] = value;
  withName(resolved, environmentName(top.name, envName));
  // As in Wrangler (`section[key] ?? …`), a null in the section counts as absent.
  for (const [key, value] of Object.entries(section)) if (value !== undefined && value !== null) resolved[key] = value;
  return resolved;
}

/** An inherited `name` is Wrangler's `<name>-<env>` (none when the top level has no name). */
function environmentName(name: unknown, envName: string): string | undefined {
  return typeof name === "string" && name !== "" ? `${name}-${envName}` : undefined;
}

function withName(settings: Record<string, unknown>, name: string | undefined): Record<string, unknown> {
  if (name === undefined) delete settings.name;
  else settings.name = name;
  return settings;
}

/**
 * The placeholder guard. Every remote command and every deploy script runs it
 * before spawning anything: Wrangler would otherwise talk to a database id that
 * does not exist, or worse, deploy a Worker without its real database.
 */
export function assertNoPlaceholderDatabase(config: WranglerConfig): void {
  const entry = config.d1Databases.find((db) => db.database_id === PLACEHOLDER_DATABASE_ID);
  if (entry === undefined) return;
  throw new UsageError(
    `${config.path} still carries the placeholder database_id ${PLACEHOLDER_DATABASE_ID} ` +
      `(d1_databases, binding ${entry.binding ?? D1_BINDING}). Copy the real database_id of ` +
      `${entry.database_name ?? "the database"} from the Cloudflare dashboard (Workers & Pages → D1 → ` +
      `${entry.database_name ?? "the database"} → Database ID), put it into ${config.path} and commit it ` +
      `(README, "Deploy"). The id is not a secret.`,
    { showUsage: false },
  );
}

/** The migrations directory of the `CONTACTS` database (Wrangler's default is `migrations`), absolute. */
export function migrationsDirectory(config: WranglerConfig): string {
  const entry = config.d1Databases.find((db) => db.binding === D1_BINDING) ?? config.d1Databases[0];
  return resolve(dirname(config.absolutePath), entry?.migrations_dir ?? "migrations");
}

/** Whether the config binds `CONTACTS` at all (gateway and owner gateway do not). */
export function hasContactsDatabase(config: WranglerConfig): boolean {
  return config.d1Databases.some((db) => db.binding === D1_BINDING);
}

/**
 * The Worker's role, from its entry module's file name (`worker/entries/monolith.ts`
 * → `monolith`, `owner-gateway.ts` → `owner_gateway`). Undefined when the entry
 * is not one of the four roles.
 */
export function roleOfConfig(config: WranglerConfig): Role | undefined {
  if (config.main === undefined) return undefined;
  const stem = basename(config.main).replace(/\.[cm]?[jt]s$/, "").replace(/-/g, "_");
  return ROLES.find((role) => role === stem);
}
