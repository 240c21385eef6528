/**
 * `magnt signals hide|unhide` (08 §11): id validation before anything runs
 * (an injection attempt never reaches a spawn), lower-casing, the UPDATE …
 * RETURNING statement, "no such signal" → 1, remote confirmation.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { normaliseSignalId, signalStatusSql } from "../../cli/commands/signals";
import { d1Error, d1Rows, installFakeWrangler, runMagnt, sqlOf, tempProject } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const ID = "ts_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b";

describe("signal ids", () => {
  it.each([
    "ts_x'; DROP TABLE task_signals;--",
    `${ID}'; DROP TABLE task_signals;--`,
    "ts_0f8e2c1a3b4d4e5f8a9b0c1d2e3f4a5b",
    "mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
    `${ID}\u0000`,
    "",
  ])("rejects %j with exit 2 and no spawn", async (id) => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["signals", "hide", id, "--json"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
    expect(run.lastJson()).toMatchObject({ error: { code: "usage" } });
  });

  it("lower-cases before validating", () => {
    expect(normaliseSignalId(ID.toUpperCase().replace("TS_", "ts_"))).toBe(ID);
    expect(normaliseSignalId(`TS_${ID.slice(3).toUpperCase()}`)).toBe(ID);
  });

  it("builds the UPDATE … RETURNING statement", () => {
    expect(signalStatusSql(ID, "hide")).toBe(`UPDATE task_signals SET status = 'hidden' WHERE signal_id = '${ID}' RETURNING signal_id, status`);
    expect(signalStatusSql(ID, "unhide")).toBe(`UPDATE task_signals SET status = 'active' WHERE signal_id = '${ID}' RETURNING signal_id, status`);
  });
});

describe("magnt signals", () => {
  it("hide prints the id and the new status", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([{ signal_id: ID, status: "hidden" }]));
    const run = await runMagnt(["signals", "hide", ID.toUpperCase().replace("TS_", "ts_")]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${ID} hidden\n`);
    expect(sqlOf(calls[0]!.args)).toBe(signalStatusSql(ID, "hide"));
  });

  it("unhide --json prints {signal_id, status}", async () => {
    installFakeWrangler(spawnMock, () => d1Rows([{ signal_id: ID, status: "active" }]));
    const run = await runMagnt(["signals", "unhide", ID, "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ signal_id: ID, status: "active" });
  });

  it("no row → exit 1 'no such signal'", async () => {
    installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["signals", "hide", ID, "--json"]);
    expect(run.code).toBe(1);
    expect(run.lastJson()).toEqual({ error: { code: "check_failed", message: `no such signal: ${ID}` } });
  });

  it("missing table → exit 3 naming 0002", async () => {
    installFakeWrangler(spawnMock, () => d1Error("no such table: task_signals: SQLITE_ERROR"));
    const run = await runMagnt(["signals", "hide", ID]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("0002_task_signals.sql");
  });

  it("remote: placeholder → exit 2 before anything; no TTY and no --yes → exit 2 before any spawn", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([{ signal_id: ID, status: "hidden" }]));
    expect((await runMagnt(["signals", "hide", ID, "--remote", "--yes"])).code).toBe(2);
    const cwd = tempProject({ realId: true });
    const run = await runMagnt(["signals", "hide", ID, "--remote"], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("confirmation required: pass --yes");
    expect(calls).toHaveLength(0);
    const yes = await runMagnt(["signals", "hide", ID, "--remote", "--yes"], { cwd });
    expect(yes.code).toBe(0);
    expect(calls[0]!.args).toContain("--remote");
  });

  it("--json never prompts even on a TTY", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["signals", "hide", ID, "--remote", "--json"], { cwd: tempProject({ realId: true }), tty: true });
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });
});

describe("a short signal id (issue 22)", () => {
  it("hide takes a unique prefix as review signals prints it, and updates the one full id", async () => {
    const { calls } = installFakeWrangler(spawnMock, (args) =>
      /AS id FROM task_signals/.test(sqlOf(args) ?? "") ? d1Rows([{ id: ID }]) : d1Rows([{ signal_id: ID, status: "hidden" }]),
    );
    const run = await runMagnt(["signals", "hide", ID.slice(0, 11)]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${ID} hidden\n`);
    expect(sqlOf(calls[1]!.args)).toBe(signalStatusSql(ID, "hide"));
  });

  it("an ambiguous prefix → exit 2 naming both, nothing updated", async () => {
    const other = ID.replace("2c1a", "2c1b");
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([{ id: ID }, { id: other }]));
    const run = await runMagnt(["signals", "hide", "ts_0f8e2c1"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${ID}, ${other}`);
    expect(calls).toHaveLength(1);
  });
});
