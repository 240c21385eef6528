/**
 * Reading a Wrangler config (JSONC) for the CLI's own decisions: the
 * placeholder `database_id` guard (00 §3, 08 §4), the migrations directory and
 * the role of the Worker (from its `main` entry module). Wrangler itself still
 * reads the file; the CLI only looks, never writes.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { D1_BINDING, PLACEHOLDER_DATABASE_ID, ROLES, type Role } from "../../worker/contracts";
import { EnvironmentError, UsageError } from "./errors";
import { parseJsonc } from "./jsonc";

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
  const section = envName !== undefined && isRecord(parsed.env) && isRecord(parsed.env[envName]) ? parsed.env[envName] : undefined;
  const d1 = (section?.d1_databases ?? parsed.d1_databases) as unknown;
  return {
    path,
    absolutePath,
    main: typeof parsed.main === "string" ? parsed.main : undefined,
    d1Databases: Array.isArray(d1) ? d1.filter(isRecord).map((entry) => entry as D1DatabaseEntry) : [],
    raw: parsed,
  };
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
