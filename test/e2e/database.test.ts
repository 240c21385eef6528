/**
 * (c) The database commands of the built CLI against a temporary local D1
 * (`--persist-to`): migrate --list and apply, review of the smoke's test rows,
 * signals hide/unhide changing the database, probe-check of a live door, and
 * (d) nothing ever prompts when stdin is not a TTY.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, jsonLines, magnt, MAGNT_BIN, REPO_ROOT, removeTempDirs, startDoor, stopAllDoors, tempDir, type Door } from "./helpers";

const MIGRATIONS = Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, "migrations", "checksums.json"), "utf8")) as Record<string, string>).sort();
let state = "";
let door: Door | undefined;
let contactId = "";
let signalId = "";

const local = (): string[] => ["--persist-to", state];

beforeAll(() => {
  state = tempDir("db");
});
afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

describe("migrate", () => {
  it("--list on a fresh database: everything pending, consistent, exit 0", async () => {
    const run = await magnt(["migrate", "--list", "--json", ...local()]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      migrations: MIGRATIONS.map((name) => ({ name, state: "pending", checksum_ok: true })),
      consistent: true,
      problems: [],
    });
  });

  it("applies every pending migration (no confirmation locally), then is up to date", async () => {
    const run = await magnt(["migrate", "--json", ...local()]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ mode: "local", up_to_date: false, applied: MIGRATIONS });
    const again = await magnt(["migrate", ...local()]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("up to date");
    const list = await magnt(["migrate", "--list", ...local()]);
    expect(list.stdout.match(/applied/g)).toHaveLength(MIGRATIONS.length);
  });
});

describe("review and signals after a smoke run", () => {
  beforeAll(async () => {
    const port = await freePort();
    door = await startDoor(process.execPath, [MAGNT_BIN, "dev", "--no-migrate", "--port", String(port), ...local()], port);
    const run = await magnt(["smoke", door.mcp, "--submit-test", "--shared-memory-test", "--json"]);
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout);
    contactId = String(lines.find((line) => line.step === "propose_contact")?.contact_id);
    signalId = String(lines.find((line) => line.step === "contribute")?.signal_id);
  });

  it("probe-check passes against the live door", async () => {
    const run = await magnt(["probe-check", door!.origin, "--expect-dialogue", "off"]);
    expect(run.code).toBe(0);
  });

  it("review contacts hides test rows unless --include-tests", async () => {
    const without = await magnt(["review", "contacts", "--json", ...local()]);
    expect(without.code).toBe(0);
    expect(without.stdout).not.toContain(contactId);
    const withTests = await magnt(["review", "contacts", "--include-tests", "--json", ...local()]);
    const rows = JSON.parse(withTests.stdout) as Record<string, unknown>[];
    expect(rows.find((row) => row.contact_id === contactId)).toMatchObject({ intent: "deployment_verification", review_status: "pending", found_via: "magnt smoke" });
    const table = await magnt(["review", "contacts", "--include-tests", ...local()]);
    expect(table.stdout).toContain(contactId);
    expect(table.stdout).toContain("…");
  });

  it("review signals and observed show the smoke's test rows", async () => {
    const signals = JSON.parse((await magnt(["review", "signals", "--include-tests", "--json", ...local()])).stdout) as Record<string, unknown>[];
    expect(signals.find((row) => row.signal_id === signalId)).toMatchObject({ status: "active" });
    const observed = JSON.parse((await magnt(["review", "observed", "--include-tests", "--json", ...local()])).stdout) as unknown[];
    expect(observed).toHaveLength(3);
    expect((await magnt(["review", "observed", "--json", ...local()])).stdout.trim()).toBe("[]");
  });

  it("review drafts: missing table → exit 3 naming 0006", async () => {
    const run = await magnt(["review", "drafts", ...local()]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("0006_owner_state.sql");
  });

  it("signals hide / unhide change the database", async () => {
    const hide = await magnt(["signals", "hide", signalId.toUpperCase().replace("TS_", "ts_"), "--json", ...local()]);
    expect(hide.code).toBe(0);
    expect(JSON.parse(hide.stdout)).toEqual({ signal_id: signalId, status: "hidden" });
    const afterHide = JSON.parse((await magnt(["review", "signals", "--include-tests", "--json", ...local()])).stdout) as Record<string, unknown>[];
    expect(afterHide.find((row) => row.signal_id === signalId)?.status).toBe("hidden");
    const unhide = await magnt(["signals", "unhide", signalId, ...local()]);
    expect(unhide.stdout.trim()).toBe(`${signalId} active`);
    const afterUnhide = JSON.parse((await magnt(["review", "signals", "--include-tests", "--json", ...local()])).stdout) as Record<string, unknown>[];
    expect(afterUnhide.find((row) => row.signal_id === signalId)?.status).toBe("active");
  });

  it("signals hide of an unknown id → exit 1; an injection attempt → exit 2 and the table survives", async () => {
    expect((await magnt(["signals", "hide", "ts_00000000-0000-4000-8000-000000000000", ...local()])).code).toBe(1);
    expect((await magnt(["signals", "hide", "ts_x'; DROP TABLE task_signals;--", ...local()])).code).toBe(2);
    expect((await magnt(["review", "signals", "--include-tests", ...local()])).code).toBe(0);
  });
});

describe("no prompts without a TTY", () => {
  it("remote commands that need confirmation stop with exit 2 instead of prompting (and without the network)", async () => {
    const dir = tempDir("remote");
    const config = join(dir, "wrangler.jsonc");
    writeFileSync(config, readFileSync(join(REPO_ROOT, "wrangler.jsonc"), "utf8").replace("00000000-0000-0000-0000-000000000000", "3f2a8c1e-5b7d-4e9f-a1c3-5d7e9f1a3b5c"));
    const run = await magnt(["signals", "hide", "ts_00000000-0000-4000-8000-000000000000", "--remote", "--config", config], { timeoutMs: 20_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("confirmation required: pass --yes");
  });

  it("remote commands on the placeholder config refuse with exit 2 before running Wrangler", async () => {
    for (const args of [["migrate", "--remote"], ["review", "contacts", "--remote"], ["migrate", "--remote", "--list", "--yes"]]) {
      const run = await magnt(args, { timeoutMs: 20_000 });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("placeholder database_id");
    }
  });
});
