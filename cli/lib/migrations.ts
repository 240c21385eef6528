/**
 * Local migration files, their pinned checksums, the applied set recorded by
 * Wrangler, and the classification of 08 §7. Shared by `magnt migrate` and
 * `magnt dev` (which applies pending local migrations the same way, without
 * asking). The CLI never renames, re-records or re-applies a migration.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CliContext } from "./context";
import { d1Query, D1QueryError } from "./d1";
import { CheckFailed, EnvironmentError } from "./errors";
import type { GlobalOptions } from "./options";
import type { Output } from "./output";
import { requireConfirmation } from "./prompts";
import { DATABASE, targetArgs, type D1Target } from "./target";
import { runWrangler } from "./wrangler";
import { migrationsDirectory } from "./wrangler-config";

/** `NNNN_name.sql`: four digits, lower-case name (08 §7). */
export const MIGRATION_FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;
/** The manifest next to the files (09 §2). */
export const CHECKSUMS_FILE = "checksums.json";
/** How Wrangler records applied migrations. */
export const APPLIED_MIGRATIONS_SQL = "SELECT name FROM d1_migrations ORDER BY id";

export type MigrationState = "applied" | "pending" | "missing_locally" | "renumbered";

export interface MigrationRow {
  name: string;
  state: MigrationState;
  /** Null for a recorded migration that has no local file. */
  checksum_ok: boolean | null;
}

export interface LocalMigrations {
  directory: string;
  /** Well-named `.sql` files, sorted. */
  files: string[];
  /** File name → whether its SHA-256 equals the manifest's. */
  checksumOk: Map<string, boolean>;
  /** Problems found without looking at any database (names, manifest). */
  problems: string[];
}

export interface MigrationReport {
  rows: MigrationRow[];
  pending: string[];
  problems: string[];
}

/** Lower-case hex SHA-256 of a file's bytes (the manifest's format). */
export function sha256Hex(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Reads `migrations/` and `checksums.json`; an unreadable directory or manifest → exit 3. */
export function readLocalMigrations(directory: string): LocalMigrations {
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch (error) {
    throw new EnvironmentError(`cannot read migrations directory ${directory}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  const manifest = readChecksums(join(directory, CHECKSUMS_FILE));
  const problems: string[] = [];
  const sqlFiles = entries.filter((name) => name.endsWith(".sql")).sort();
  const files = sqlFiles.filter((name) => MIGRATION_FILE_PATTERN.test(name));
  for (const name of sqlFiles) if (!MIGRATION_FILE_PATTERN.test(name)) problems.push(`${name}: not a NNNN_name.sql migration file name`);
  const checksumOk = new Map<string, boolean>();
  for (const name of files) {
    const pinned = manifest[name];
    const actual = sha256Hex(readFileSync(join(directory, name)));
    checksumOk.set(name, pinned === actual);
    if (pinned === undefined) problems.push(`${name}: not listed in ${CHECKSUMS_FILE}`);
    else if (pinned !== actual) problems.push(`${name}: SHA-256 differs from ${CHECKSUMS_FILE} (an applied migration is never edited; add a new file)`);
  }
  for (const name of Object.keys(manifest)) {
    if (!files.includes(name)) problems.push(`${name}: listed in ${CHECKSUMS_FILE} but the file is missing`);
  }
  return { directory, files, checksumOk, problems };
}

function readChecksums(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EnvironmentError(`cannot read ${path}: ${code ?? (error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new EnvironmentError(`${path} is not a JSON object`);
  const manifest: Record<string, string> = {};
  for (const [name, hash] of Object.entries(parsed)) if (typeof hash === "string") manifest[name] = hash.toLowerCase();
  return manifest;
}

/**
 * Classifies local files against the applied set (08 §7): applied, pending,
 * missing_locally (recorded, no file), renumbered (a pending file whose
 * four-digit prefix equals that of an applied migration). Every
 * missing_locally, renumbered and checksum problem makes the set inconsistent.
 */
export function classifyMigrations(local: LocalMigrations, applied: readonly string[]): MigrationReport {
  const appliedSet = new Set(applied);
  const appliedByPrefix = new Map<string, string>();
  for (const name of applied) appliedByPrefix.set(name.slice(0, 4), name);
  const rows: MigrationRow[] = [];
  const pending: string[] = [];
  const problems = [...local.problems];
  for (const name of local.files) {
    const checksum_ok = local.checksumOk.get(name) ?? false;
    if (appliedSet.has(name)) {
      rows.push({ name, state: "applied", checksum_ok });
      continue;
    }
    const sameNumber = appliedByPrefix.get(name.slice(0, 4));
    if (sameNumber !== undefined && /^\d{4}_/.test(sameNumber)) {
      rows.push({ name, state: "renumbered", checksum_ok });
      problems.push(`${name}: pending, but ${sameNumber} with the same number is already applied (applying it would re-apply that migration under a new name)`);
      continue;
    }
    rows.push({ name, state: "pending", checksum_ok });
    pending.push(name);
  }
  const localSet = new Set(local.files);
  for (const name of applied) {
    if (localSet.has(name)) continue;
    rows.push({ name, state: "missing_locally", checksum_ok: null });
    problems.push(`${name}: recorded as applied but there is no such file in migrations/`);
  }
  return { rows, pending, problems };
}

/** The applied set; "no such table: d1_migrations" means nothing was applied yet. */
export async function readAppliedMigrations(ctx: CliContext, target: D1Target, quiet: boolean): Promise<string[]> {
  try {
    const rows = await d1Query(ctx, target, APPLIED_MIGRATIONS_SQL, quiet);
    return rows.map((row) => String(row.name));
  } catch (error) {
    if (error instanceof D1QueryError && error.text.includes("no such table")) return [];
    throw error;
  }
}

/** Local files + applied set → report (the read-only half shared by `--list` and apply). */
export async function inspectMigrations(ctx: CliContext, target: D1Target, quiet: boolean): Promise<MigrationReport> {
  const local = readLocalMigrations(migrationsDirectory(target.config));
  const applied = await readAppliedMigrations(ctx, target, quiet);
  return classifyMigrations(local, applied);
}

export interface ApplyResult {
  applied: string[];
  upToDate: boolean;
}

/**
 * Applies pending migrations (08 §7): refuse on any inconsistency (exit 1,
 * nothing run); nothing pending → up to date; otherwise confirm (remote only,
 * when asked to), run `wrangler d1 migrations apply CONTACTS`, re-read, and
 * fail with exit 3 if any pending file is still not recorded.
 */
export async function applyPendingMigrations(
  ctx: CliContext,
  out: Output,
  target: D1Target,
  globals: GlobalOptions,
  options: { confirmRemote: boolean },
): Promise<ApplyResult> {
  const report = await inspectMigrations(ctx, target, out.quiet);
  if (report.problems.length > 0) {
    for (const problem of report.problems) out.error(problem);
    throw new CheckFailed(`migrations are inconsistent (${report.problems.length} problem${report.problems.length === 1 ? "" : "s"}); nothing was applied`);
  }
  if (report.pending.length === 0) return { applied: [], upToDate: true };
  out.info(`applying ${report.pending.length} pending migration${report.pending.length === 1 ? "" : "s"} (${target.mode})`);
  if (target.mode === "remote" && options.confirmRemote) {
    await requireConfirmation(ctx, globals, `Apply ${report.pending.length} migration(s) to the remote database of ${target.config.path}?`);
  }
  // Wrangler prints its table of migrations again for every step (about 150 lines for seven
  // files): its output is shown with --verbose, and on a failure, instead of one line per file.
  const verbose = globals.verbose === true;
  const run = await runWrangler(ctx, ["d1", "migrations", "apply", DATABASE, ...targetArgs(target)], {
    mode: target.mode,
    quiet: out.quiet,
    nonInteractive: true,
    forwardStdout: verbose,
    forwardStderr: verbose,
  });
  if (run.code !== 0) {
    if (!verbose && !out.quiet) ctx.stderr.write(`${run.stdout}${run.stderr}`.trimEnd() + "\n");
    throw new EnvironmentError(`wrangler d1 migrations apply failed (exit ${run.code})`);
  }
  const after = new Set(await readAppliedMigrations(ctx, target, out.quiet));
  const missing = report.pending.filter((name) => !after.has(name));
  if (missing.length > 0) throw new EnvironmentError(`still pending after wrangler d1 migrations apply: ${missing.join(", ")}`);
  for (const name of report.pending) out.info(`migration applied: ${name}`);
  return { applied: report.pending, upToDate: false };
}
