/**
 * `magnt review` (08 §10): the exact SQL of 09 §4 (tests excluded unless
 * `--include-tests`, `LIMIT n`), limit bounds, missing tables, the table view
 * and the full-value JSON view.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { reviewSql } from "../../cli/commands/review";
import { d1Error, d1Rows, installFakeWrangler, runMagnt, sqlOf, tempProject } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

/** The queries of 09 §4, whitespace-normalised, without the trailing semicolon. */
const SPEC_SQL = {
  contacts: `SELECT contact_id, created_at, review_status, intent, summary,
       what_you_need_from_human, agent_identity, operator, reply_to,
       found_via, previous_contact_id
FROM contacts WHERE self_reported_test = 0 ORDER BY created_at DESC`,
  signals: `SELECT signal_id, created_at, goal, blocker, tried, learned, status
FROM task_signals WHERE self_reported_test = 0 ORDER BY created_at DESC, signal_id DESC`,
  observed: `SELECT observation_id, created_at, goal, blocker, tried
FROM observed_task_signals WHERE self_reported_test = 0
ORDER BY created_at DESC, observation_id DESC`,
  drafts: `SELECT d.draft_id, d.contact_id, d.revision, d.created_at, d.updated_at, d.body
FROM owner_drafts d JOIN contacts c ON c.contact_id = d.contact_id
WHERE c.self_reported_test = 0 ORDER BY d.updated_at DESC, d.draft_id DESC`,
} as const;
const normalise = (sql: string): string => sql.replace(/\s+/g, " ").trim();

describe("review SQL", () => {
  it.each(Object.entries(SPEC_SQL))("%s is the 09 §4 query plus LIMIT", (kind, sql) => {
    expect(reviewSql(kind as keyof typeof SPEC_SQL, false, 50)).toBe(`${normalise(sql)} LIMIT 50;`);
  });

  it.each(Object.entries(SPEC_SQL))("%s with --include-tests drops only the test condition", (kind, sql) => {
    const withoutFilter = normalise(sql).replace(/ WHERE c?\.?self_reported_test = 0/, "");
    expect(reviewSql(kind as keyof typeof SPEC_SQL, true, 3)).toBe(`${withoutFilter} LIMIT 3;`);
  });
});

describe("magnt review", () => {
  it("defaults: local, tests excluded, LIMIT 50", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "contacts"]);
    expect(run.code).toBe(0);
    expect(sqlOf(calls[0]!.args)).toBe(`${normalise(SPEC_SQL.contacts)} LIMIT 50;`);
    expect(calls[0]!.args).toContain("--local");
  });

  it.each(["0", "1001", "-1", "abc", "5; DROP TABLE contacts", "1e3"])("--limit %s → exit 2 with no spawn", async (limit) => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "signals", "--limit", limit]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("accepts --limit 1 and 1000", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    expect((await runMagnt(["review", "signals", "--limit", "1"])).code).toBe(0);
    expect((await runMagnt(["review", "signals", "--limit", "1000"])).code).toBe(0);
    expect(sqlOf(calls[1]!.args)).toMatch(/LIMIT 1000;$/);
  });

  it("an unknown kind → exit 2", async () => {
    const run = await runMagnt(["review", "everything"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("contacts, signals, observed, drafts");
  });

  it.each([
    ["signals", "task_signals", "0002_task_signals.sql"],
    ["observed", "observed_task_signals", "0003_observed_task_signals.sql"],
    ["drafts", "owner_drafts", "0006_owner_state.sql"],
  ])("a missing table for %s → exit 3 naming the migration", async (kind, table, migration) => {
    installFakeWrangler(spawnMock, () => d1Error(`no such table: ${table}: SQLITE_ERROR`));
    const run = await runMagnt(["review", kind, "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining(migration) } });
  });

  it("--json prints full values as an array; the table cuts them", async () => {
    const long = `first line\n${"x".repeat(200)}`;
    const row = { signal_id: "ts_1", created_at: "2026-01-01T00:00:00.000Z", goal: long, blocker: null, tried: null, learned: null, status: "active" };
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const json = await runMagnt(["review", "signals", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual([row]);
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const human = await runMagnt(["review", "signals"]);
    expect(human.stdout).toContain("first line⏎xxx");
    expect(human.stdout).not.toContain("x".repeat(61));
    expect(human.stdout).toContain("…");
    expect(human.stdout).toContain("signal_id");
  });

  it("remote refuses the placeholder config before spawning", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "contacts", "--remote"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("remote with a real id runs without confirmation (read-only)", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "contacts", "--remote"], { cwd: tempProject({ realId: true }) });
    expect(run.code).toBe(0);
    expect(calls[0]!.args).toContain("--remote");
  });
});
