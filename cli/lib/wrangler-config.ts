/**
 * Reading a Wrangler config (JSONC) for the CLI's own decisions: the
 * placeholder `database_id` guard (00 §3, 08 §4), the migrations directory and
 * the role of the Worker (from its `main` entry module). Wrangler itself still
 * reads the file; the CLI only looks, never writes.
 *
 * The CLI must see the config the way Wrangler will, or a guard could pass
 * (or refuse) a database Wrangler would never use. Wrangler's environment
 * rules, reproduced here:
 * - with `--env <name>` and an `env.<name>` section, bindings such as
 *   `d1_databases` are NOT inherited from the top level: the section's own
 *   list is used, and a section without one has no D1 at all (Wrangler only
 *   warns). Inheritable keys such as `main` fall back to the top level;
 * - with `--env <name>` and no such section, Wrangler fails when the config
 *   defines other environments (→ usage error here, before anything runs),
 *   and uses the top level (with a warning) when it defines none.
 * Wrangler's own reader (`unstable_readConfig` from the `wrangler` package)
 * gives the same answers but costs about 4 s to import on the reference
 * machine, on every CLI call; this reader takes milliseconds.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { D1_BINDING, PLACEHOLDER_DATABASE_ID, ROLES, type Role } from "../../worker/contracts";
import { EnvironmentError, UsageError } from "./errors";
import { parseJsonc } from "./jsonc";
import { isRecord } from "../../worker/contracts/guards";

export interface D1DatabaseEntry {
  binding?: string;
  database_name?: string;
  database_id?: string;
  migrations_dir?: string;
}

export interface WranglerConfig {
  /** The path as given (for messages). */
  path: string;
  /** Absolute path. */
  absolutePath: string;
  main?: string;
  d1Databases: D1DatabaseEntry[];
  raw: Record<string, unknown>;
}

/** Reads and parses a config; unreadable or invalid → exit 3 (08 §3). */
export function readWranglerConfig(path: string, cwd: string, envName?: string): WranglerConfig {
  const absolutePath = resolve(cwd, path);
  let text: string;
  try {
    text = readFileSync(absolutePath, "utf8");
  } catch (error) {
    throw new EnvironmentError(`cannot read Wrangler config ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  let parsed: unknown;
  try {
    parsed = parseJsonc(text);
  } catch (error) {
    throw new EnvironmentError(`cannot parse Wrangler config ${path}: ${(error as Error).message}`);
  }
  if (!isRecord(parsed)) throw new EnvironmentError(`Wrangler config ${path} is not a JSON object`);
  const { main, d1 } = effectiveSettings(parsed, path, envName);
  return {
    path,
    absolutePath,
    main,
    d1Databases: Array.isArray(d1) ? d1.filter(isRecord).map((entry) => entry as D1DatabaseEntry) : [],
    raw: parsed,
  };
}

/** `main` and `d1_databases` as Wrangler resolves them for `--env` (see the header). */
function effectiveSettings(parsed: Record<string, unknown>, path: string, envName: string | undefined): { main: string | undefined; d1: unknown } {
  const topMain = typeof parsed.main === "string" ? parsed.main : undefined;
  if (envName === undefined) return { main: topMain, d1: parsed.d1_databases };
  const environments = isRecord(parsed.env) ? parsed.env : undefined;
  const section = environments?.[envName];
  if (isRecord(section)) {
    // Non-inheritable: only the environment's own list counts, even when the top level has one.
    return { main: typeof section.main === "string" ? section.main : topMain, d1: section.d1_databases };
  }
  const defined = Object.keys(environments ?? {});
  if (defined.length > 0) {
    throw new UsageError(`${path} has no environment "${envName}" (it defines ${defined.join(", ")}); Wrangler would refuse --env ${envName}`, {
      showUsage: false,
    });
  }
  // No environments at all: Wrangler warns and uses the top level.
  return { main: topMain, d1: parsed.d1_databases };
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

