/**
 * `magnt outbox` (08 §12): the SQL (09 §4 with only an enum and an integer
 * spliced in), defaults and option bounds, the `{state, counts, rows}` JSON
 * shape, no hash and no text ever printed, and exit 3 naming 0004 when the
 * tables are missing.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { OUTBOX_ROW_COLUMNS, OUTBOX_STATES, outboxSql } from "../../cli/commands/outbox";
import { d1Error, installFakeWrangler, runMagnt, sqlOf, tempProject, type FakeAnswer } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const HASH = "a".repeat(64);
const ROW = {
  outbox_id: "nt_0123456789abcdef0123456789abcdef",
  source_kind: "contact",
  source_id: "mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
  state: "delivered",
  attempts: 1,
  next_attempt_at: "2026-05-01T10:00:00.000Z",
  last_attempt_at: "2026-05-01T10:01:00.000Z",
  last_error_code: null,
  last_http_status: null,
  delivered_at: "2026-05-01T10:01:00.500Z",
  telegram_message_id: 42,
  created_at: "2026-05-01T10:00:00.000Z",
};

function threeResults(state: Record<string, unknown>[], counts: Record<string, unknown>[], rows: Record<string, unknown>[]): FakeAnswer {
  return { code: 0, stdout: JSON.stringify([state, counts, rows].map((results) => ({ results, success: true, meta: {} }))) };
}

const stateRow = { activated_at: "2026-05-01T09:00:00.000Z", chat_pinned: 1, lease_expires_at: null, backoff_until: null, consecutive_failures: 0, owner_chat_hash: HASH };

describe("outbox SQL", () => {
  it("reads the state, the counts per state and the rows newest first, never a text column", () => {
    const sql = outboxSql(undefined, 50);
    expect(sql).toBe(
      "SELECT activated_at, owner_chat_hash IS NOT NULL AS chat_pinned, lease_expires_at, backoff_until, consecutive_failures FROM notification_state WHERE id = 1; " +
        "SELECT state, COUNT(*) AS n FROM notification_outbox GROUP BY state; " +
        `SELECT ${OUTBOX_ROW_COLUMNS.join(", ")} FROM notification_outbox ORDER BY created_at DESC, outbox_id DESC LIMIT 50;`,
    );
    expect(outboxSql("failed", 3)).toContain("FROM notification_outbox WHERE state = 'failed' ORDER BY created_at DESC, outbox_id DESC LIMIT 3;");
  });
});

describe("magnt outbox", () => {
  it("defaults to local and LIMIT 50, and --json prints one {state, counts, rows} object", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => threeResults([stateRow], [{ state: "delivered", n: 1 }, { state: "failed", n: 2 }], [ROW]));
    const run = await runMagnt(["outbox", "--json"]);
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args).toContain("--local");
    expect(sqlOf(calls[0]!.args)).toBe(outboxSql(undefined, 50));
    expect(run.lines).toHaveLength(1);
    expect(JSON.parse(run.lines[0]!)).toEqual({
      state: { activated_at: "2026-05-01T09:00:00.000Z", chat_pinned: true, lease_expires_at: null, backoff_until: null, consecutive_failures: 0 },
      counts: { pending: 0, sending: 0, retry_wait: 0, delivered: 1, failed: 2, skipped: 0 },
      rows: [ROW],
    });
    expect(run.stdout).not.toContain(HASH);
  });

  it("shows a not-yet-activated notifier as state null", async () => {
    installFakeWrangler(spawnMock, () => threeResults([], [], []));
    const run = await runMagnt(["outbox", "--json"]);
    expect(JSON.parse(run.lines[0]!)).toEqual({ state: null, counts: Object.fromEntries(OUTBOX_STATES.map((state) => [state, 0])), rows: [] });
  });

  it("human view: summary, counts and rows, never the chat hash", async () => {
    installFakeWrangler(spawnMock, () => threeResults([stateRow], [{ state: "delivered", n: 1 }], [ROW]));
    const run = await runMagnt(["outbox"], { env: { NO_COLOR: "1" } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("chat pinned:          yes");
    expect(run.stdout).toContain("delivered");
    expect(run.stdout).not.toContain(HASH);
  });

  it.each(["sent", "DELIVERED", "pending;"])("--status %s → exit 2 before Wrangler runs", async (status) => {
    const { calls } = installFakeWrangler(spawnMock, () => threeResults([], [], []));
    const run = await runMagnt(["outbox", "--status", status, "--json"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
    expect(run.lastJson()).toMatchObject({ error: { code: "usage" } });
  });

  it.each(["0", "1001", "x"])("--limit %s → exit 2", async (limit) => {
    const { calls } = installFakeWrangler(spawnMock, () => threeResults([], [], []));
    expect((await runMagnt(["outbox", "--limit", limit])).code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it.each(["notification_state", "notification_outbox"])("a missing %s → exit 3 naming 0004", async (table) => {
    installFakeWrangler(spawnMock, () => d1Error(`no such table: ${table}: SQLITE_ERROR`));
    const run = await runMagnt(["outbox", "--json"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("0004_owner_notifications.sql");
    expect(run.lastJson()).toMatchObject({ error: { code: "environment" } });
  });

  it("refuses the placeholder database id remotely before spawning", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => threeResults([], [], []));
    const run = await runMagnt(["outbox", "--remote"], { cwd: tempProject() });
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("remote with a real id passes --remote", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => threeResults([], [], []));
    const run = await runMagnt(["outbox", "--remote", "--status", "failed", "--limit", "5"], { cwd: tempProject({ realId: true }) });
    expect(run.code).toBe(0);
    expect(calls[0]!.args).toContain("--remote");
    expect(sqlOf(calls[0]!.args)).toBe(outboxSql("failed", 5));
  });
});

describe("outbox rows at 80 columns (issue 22)", () => {
  const failed = {
    ...ROW,
    outbox_id: "nt_fedcba9876543210fedcba9876543210",
    source_kind: "observation",
    source_id: "ob_0123456789abcdef0123456789abcdef",
    state: "retry_wait",
    attempts: 3,
    last_error_code: "network",
    delivered_at: null,
    telegram_message_id: null,
  };

  it("shows id, state, source, attempts, last error code and delivered date, each line within 80", async () => {
    installFakeWrangler(spawnMock, () => threeResults([stateRow], [{ state: "delivered", n: 1 }], [ROW, failed]));
    const run = await runMagnt(["outbox"]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split("\n");
    const header = lines.find((line) => line.includes("│ id "))!;
    expect(header.split("│").map((cell) => cell.trim()).filter((cell) => cell !== "")).toEqual(["id", "state", "source", "tries", "error", "delivered"]);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(80);
    const delivered = lines.find((line) => line.includes("nt_01234567 "))!;
    expect(delivered).toContain("mc_0f8e2c1a ");
    expect(delivered).toContain("2026-05-01 10:01");
    const retry = lines.find((line) => line.includes("nt_fedcba98 "))!;
    expect(retry).toMatch(/│ retry_wait │ ob_01234567 │ 3 +│ network │/);
    expect(run.stderr).toContain("not shown at 80 columns: next_attempt, created, http, kind, last_attempt, telegram_id");
  });

  it("a wider terminal shows more", async () => {
    installFakeWrangler(spawnMock, () => threeResults([stateRow], [], [ROW, failed]));
    const run = await runMagnt(["outbox"], { env: { COLUMNS: "160" } });
    expect(run.stdout).toContain("next_attempt");
    expect(run.stdout).toContain("created");
  });
});
