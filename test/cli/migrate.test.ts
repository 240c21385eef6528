/**
 * `magnt migrate` (08 §7): classification (applied, pending, missing_locally,
 * renumbered), checksum failures, refusal before anything runs, remote
 * confirmation and the placeholder guard, and "still pending" → exit 3.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { appendFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { classifyMigrations, readLocalMigrations } from "../../cli/lib/migrations";
import { d1Error, d1Rows, installFakeWrangler, repoMigrationNames, runMagnt, tempProject, type FakeAnswer } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const ALL = repoMigrationNames();
const rows = (names: string[]): FakeAnswer => d1Rows(names.map((name) => ({ name })));

/** A fake database whose applied set grows when `migrations apply` runs (unless `stuck`). */
function fakeDatabase(initial: string[], options: { stuck?: boolean } = {}) {
  let applied = [...initial];
  return installFakeWrangler(spawnMock, (args) => {
    if (args[1] === "migrations") {
      if (options.stuck !== true) applied = [...ALL];
      return { code: 0 };
    }
    return applied.length === 0 ? d1Error("no such table: d1_migrations: SQLITE_ERROR") : rows(applied);
  });
}

describe("classification", () => {
  const project = tempProject();
  const local = readLocalMigrations(join(project, "migrations"));

  it("the repository's files and manifest agree", () => {
    expect(local.problems).toEqual([]);
    expect(local.files).toEqual(ALL);
  });

  it("applied / pending", () => {
    const report = classifyMigrations(local, [ALL[0]!]);
    expect(report.rows.map((row) => [row.name, row.state])).toEqual([[ALL[0], "applied"], ...ALL.slice(1).map((name) => [name, "pending"])]);
    expect(report.pending).toEqual(ALL.slice(1));
    expect(report.problems).toEqual([]);
  });

  it("missing_locally: recorded but no file", () => {
    const report = classifyMigrations(local, [...ALL, "0009_from_elsewhere.sql"]);
    expect(report.rows.at(-1)).toEqual({ name: "0009_from_elsewhere.sql", state: "missing_locally", checksum_ok: null });
    expect(report.problems).toHaveLength(1);
  });

  it("renumbered: a pending file whose number was applied under another name", () => {
    const report = classifyMigrations(local, ["0001_contacts.sql", "0002_signals_v1.sql"]);
    expect(report.rows.find((row) => row.name === "0002_task_signals.sql")?.state).toBe("renumbered");
    expect(report.rows.find((row) => row.name === "0002_signals_v1.sql")?.state).toBe("missing_locally");
    expect(report.pending).toEqual(repoMigrationNames().filter((name) => name >= "0003"));
    expect(report.problems).toHaveLength(2);
  });

  it("an edited file, a file missing from the manifest, a manifest entry without file, a bad name", () => {
    const dir = tempProject();
    appendFileSync(join(dir, "migrations", "0002_task_signals.sql"), "\n-- edited\n");
    writeFileSync(join(dir, "migrations", "0004_new_thing.sql"), "SELECT 1;\n");
    renameSync(join(dir, "migrations", "0003_observed_task_signals.sql"), join(dir, "migrations", "0003_Observed.sql"));
    const edited = readLocalMigrations(join(dir, "migrations"));
    expect(edited.checksumOk.get("0002_task_signals.sql")).toBe(false);
    expect(edited.problems.join("\n")).toContain("0002_task_signals.sql: SHA-256 differs");
    expect(edited.problems.join("\n")).toContain("0004_new_thing.sql: not listed in checksums.json");
    expect(edited.problems.join("\n")).toContain("0003_observed_task_signals.sql: listed in checksums.json but the file is missing");
    expect(edited.problems.join("\n")).toContain("0003_Observed.sql: not a NNNN_name.sql migration file name");
  });
});

describe("magnt migrate --list", () => {
  it("prints name, state and checksum and exits 0 when consistent", async () => {
    fakeDatabase([ALL[0]!]);
    const run = await runMagnt(["migrate", "--list", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.lines[0]!)).toEqual({
      migrations: [{ name: ALL[0], state: "applied", checksum_ok: true }, ...ALL.slice(1).map((name) => ({ name, state: "pending", checksum_ok: true }))],
      consistent: true,
      problems: [],
    });
  });

  it("treats 'no such table: d1_migrations' as nothing applied", async () => {
    fakeDatabase([]);
    const run = await runMagnt(["migrate", "--list"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("pending");
    expect(run.stdout).toContain("checksum ok");
  });

  it("exits 1 and names the problem when a migration was renumbered", async () => {
    fakeDatabase(["0001_contacts.sql", "0002_signals_v1.sql"]);
    const run = await runMagnt(["migrate", "--list", "--json"]);
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.lines[0]!) as { consistent: boolean; migrations: { state: string }[] };
    expect(doc.consistent).toBe(false);
    expect(doc.migrations.map((row) => row.state)).toContain("renumbered");
    expect(run.lastJson()).toMatchObject({ error: { code: "check_failed" } });
  });

  it("exits 1 when a file was edited", async () => {
    const cwd = tempProject();
    appendFileSync(join(cwd, "migrations", "0001_contacts.sql"), " ");
    fakeDatabase(ALL);
    const run = await runMagnt(["migrate", "--list"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("0001_contacts.sql: SHA-256 differs");
  });

  it("an unreadable checksums.json exits 3", async () => {
    const cwd = tempProject();
    writeFileSync(join(cwd, "migrations", "checksums.json"), "{not json");
    fakeDatabase([]);
    const run = await runMagnt(["migrate", "--list"], { cwd });
    expect(run.code).toBe(3);
  });
});

describe("magnt migrate (apply)", () => {
  it("applies pending migrations locally without asking, then re-reads", async () => {
    const { calls } = fakeDatabase([]);
    const run = await runMagnt(["migrate", "--json"]);
    expect(run.code).toBe(0);
    expect(calls.map((call) => call.args.slice(0, 3).join(" "))).toEqual(["d1 execute CONTACTS", "d1 migrations apply", "d1 execute CONTACTS"]);
    expect(JSON.parse(run.lines[0]!)).toEqual({ mode: "local", up_to_date: false, applied: ALL });
  });

  it("nothing pending → up to date, exit 0, nothing applied", async () => {
    const { calls } = fakeDatabase(ALL);
    const run = await runMagnt(["migrate"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("up to date");
    expect(calls).toHaveLength(1);
  });

  it("refuses any inconsistency with exit 1 and runs nothing", async () => {
    const { calls } = fakeDatabase(["0001_contacts.sql", "0002_signals_v1.sql"]);
    const run = await runMagnt(["migrate", "--json"]);
    expect(run.code).toBe(1);
    expect(calls.some((call) => call.args[1] === "migrations")).toBe(false);
    expect(run.stderr).toContain("0002_task_signals.sql");
    expect(run.stderr).toContain("0002_signals_v1.sql");
  });

  it("still pending after apply → exit 3", async () => {
    fakeDatabase([ALL[0]!], { stuck: true });
    const run = await runMagnt(["migrate", "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining("still pending") } });
  });

  it("a failing apply → exit 3", async () => {
    installFakeWrangler(spawnMock, (args) => (args[1] === "migrations" ? { code: 1, stderr: "✘ [ERROR] nope\n" } : rows([])));
    const run = await runMagnt(["migrate"]);
    expect(run.code).toBe(3);
  });

  it("remote: refuses the placeholder config with exit 2 before spawning anything", async () => {
    const { calls } = fakeDatabase([]);
    const run = await runMagnt(["migrate", "--remote", "--yes", "--json"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
    const message = (run.lastJson() as { error: { message: string } }).error.message;
    expect(message).toContain("wrangler.jsonc");
    expect(message).toContain("00000000-0000-0000-0000-000000000000");
    expect(message).toContain("dashboard");
  });

  it("remote without --yes and without a TTY: exit 2 'confirmation required', nothing applied", async () => {
    const cwd = tempProject({ realId: true });
    const { calls } = fakeDatabase([]);
    const run = await runMagnt(["migrate", "--remote", "--json"], { cwd });
    expect(run.code).toBe(2);
    expect(run.lastJson()).toEqual({ error: { code: "usage", message: "confirmation required: pass --yes" } });
    expect(calls.some((call) => call.args[1] === "migrations")).toBe(false);
  });

  it("remote with --yes applies against wrangler.jsonc with --remote and the remote limit", async () => {
    const cwd = tempProject({ realId: true });
    const { calls } = fakeDatabase([]);
    const run = await runMagnt(["migrate", "--remote", "--yes"], { cwd });
    expect(run.code).toBe(0);
    const apply = calls.find((call) => call.args[1] === "migrations")!;
    expect(apply.args).toEqual(["d1", "migrations", "apply", "CONTACTS", "--config", "wrangler.jsonc", "--remote"]);
  });
});

describe("quiet apply (issue 22, 08 §7)", () => {
  const TABLE = "Migrations to be applied:\n┌──────┐\n│ name │\n└──────┘\n";
  /** As `fakeDatabase`, with Wrangler printing its table on stdout and a line on stderr, or failing. */
  function chattyDatabase(options: { fail?: boolean } = {}) {
    let applied: string[] = [];
    return installFakeWrangler(spawnMock, (args) => {
      if (args[1] === "migrations") {
        if (options.fail === true) return { code: 1, stdout: TABLE, stderr: "✘ [ERROR] near \"TABLE\": syntax error\n" };
        applied = [...ALL];
        return { code: 0, stdout: TABLE.repeat(ALL.length), stderr: "🤖 Using fallback value in non-interactive context: yes\n" };
      }
      return applied.length === 0 ? d1Error("no such table: d1_migrations: SQLITE_ERROR") : rows(applied);
    });
  }

  it("one line per migration applied, none of Wrangler's output", async () => {
    chattyDatabase();
    const run = await runMagnt(["migrate"], { cwd: tempProject() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("migration applied: "))).toEqual(ALL.map((name) => `migration applied: ${name}`));
    expect(run.stderr).not.toContain("Migrations to be applied");
    expect(run.stderr).not.toContain("fallback value");
  });

  it("--verbose shows Wrangler's own output too", async () => {
    chattyDatabase();
    const run = await runMagnt(["migrate", "--verbose"], { cwd: tempProject() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("Migrations to be applied");
    expect(run.stderr).toContain("fallback value");
    expect(run.stderr).toContain(`migration applied: ${ALL[0]}`);
  });

  it("a failing apply shows everything Wrangler printed, then the exit-3 line", async () => {
    chattyDatabase({ fail: true });
    const run = await runMagnt(["migrate"], { cwd: tempProject() });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("syntax error");
    expect(run.stderr).toContain("Migrations to be applied");
    expect(run.stderr).not.toContain("migration applied:");
    expect(run.stderr.trimEnd().split("\n").at(-1)).toBe("magnt: wrangler d1 migrations apply failed (exit 1)");
  });
});
