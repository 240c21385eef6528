/**
 * (c) The database commands of the built CLI against a temporary local D1
 * (`--persist-to`): migrate --list and apply, review of the smoke's test rows,
 * signals hide/unhide changing the database, probe-check of a live door,
 * (d) nothing ever prompts when stdin is not a TTY, and (e) a stored contact
 * full of escape sequences and bidi controls reaches the terminal clean and
 * within 80 columns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { freePort, jsonLines, magnt, MAGNT_BIN, OFFLINE_ENV, REPO_ROOT, removeTempDirs, startDoor, stopAllDoors, tempDir, type Door } from "./helpers";

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
    // The table prints the short id (type prefix + 8 characters) the command takes back.
    expect(table.stdout).toContain(contactId.slice(0, 11));
    expect(table.stdout).toContain("…");
  });

  it("review signals and observed show the smoke's test rows", async () => {
    const signals = JSON.parse((await magnt(["review", "signals", "--include-tests", "--json", ...local()])).stdout) as Record<string, unknown>[];
    expect(signals.find((row) => row.signal_id === signalId)).toMatchObject({ status: "active" });
    const observed = JSON.parse((await magnt(["review", "observed", "--include-tests", "--json", ...local()])).stdout) as unknown[];
    expect(observed).toHaveLength(3);
    expect((await magnt(["review", "observed", "--json", ...local()])).stdout.trim()).toBe("[]");
  });

  it("review drafts: an empty list once 0006 is applied (before 0006 exists: exit 3 naming it)", async () => {
    const run = await magnt(["review", "drafts", "--json", ...local()]);
    if (MIGRATIONS.includes("0006_owner_state.sql")) {
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual([]);
    } else {
      expect(run.code).toBe(3);
      expect(run.stderr).toContain("0006_owner_state.sql");
    }
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

describe("visitor text in the owner's terminal", () => {
  const HOSTILE_ID = "mc_1b0e7c55-0d3f-4a6e-9c1d-2e3f4a5b6c7d";
  /** Escape sequences and controls of every family, and every bidi control, around visible words. */
  const HOSTILE =
    "intro \u001b[31;1mred\u001b[0m \u001b[2J\u001b[H cleared \u001b]0;TITLEPAYLOAD\u0007 " +
    "\u001b]8;;https://LINKPAYLOAD.example/\u001b\\link\u001b]8;;\u001b\\ \u001b]52;c;Q0xJUA==\u0007 \u001bPDCSPAYLOAD\u001b\\ " +
    "\u009b31m \u009dOSC8BIT\u009c \u001bc \u001b(0 \u001b7 \b\b \r over \u000b\u000c\u001f\u007f \u0085\u0080 " +
    "\u2028\u2029 \u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c evil " +
    "and a long tail so that the value has to be cut to fit the table: " + "lorem ipsum ".repeat(20) + "\n second line";
  const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

  /** A SQL expression for `text` built from quoted printable runs and char(n) for every control (no raw control in argv). */
  function sqlText(text: string): string {
    const parts: string[] = [];
    let run = "";
    for (const char of text) {
      if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/.test(char)) {
        if (run !== "") parts.push(`'${run.replace(/'/g, "''")}'`);
        run = "";
        parts.push(`char(${char.codePointAt(0)})`);
      } else run += char;
    }
    if (run !== "") parts.push(`'${run.replace(/'/g, "''")}'`);
    return parts.join(" || ");
  }

  beforeAll(() => {
    const fields = ["review_status", "summary", "intent", "what_you_need_from_human", "agent_identity", "operator", "reply_to", "found_via", "previous_contact_id"];
    const sql =
      `INSERT INTO contacts (contact_id, created_at, ${fields.join(", ")}, self_reported_test, submission_id, payload_hash) VALUES ` +
      `('${HOSTILE_ID}', '2030-01-01T00:00:00.000Z', ${fields.map(() => sqlText(HOSTILE)).join(", ")}, 0, 'e2e-hostile-submission', 'e2e')`;
    const wrangler = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");
    const run = spawnSync(process.execPath, [wrangler, "d1", "execute", "CONTACTS", "--config", "wrangler.local.jsonc", "--local", "--persist-to", state, "--command", sql], {
      cwd: REPO_ROOT,
      env: OFFLINE_ENV,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
  });

  it("the hostile contact really is stored with its control characters (--json shows raw values)", async () => {
    const run = await magnt(["review", "contacts", HOSTILE_ID, "--json", ...local()]);
    expect(run.code).toBe(0);
    const row = JSON.parse(run.stdout) as Record<string, unknown>;
    for (const field of ["summary", "intent", "agent_identity", "reply_to", "previous_contact_id"]) expect(row[field]).toBe(HOSTILE);
    expect(run.stdout.trimEnd()).not.toMatch(TERMINAL_CONTROL);
  });

  it("magnt review contacts prints no control character and fits 80 columns", async () => {
    const run = await magnt(["review", "contacts", ...local()]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(HOSTILE_ID.slice(0, 11));
    expect(run.stdout).toContain("intro red");
    expect(run.stdout.replace(/\n/g, "")).not.toMatch(TERMINAL_CONTROL);
    for (const payload of ["TITLEPAYLOAD", "LINKPAYLOAD", "DCSPAYLOAD", "OSC8BIT"]) expect(run.stdout).not.toContain(payload);
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    // Box drawing, ASCII, … and ⏎ are one column each, so code points are columns here.
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(80);
    expect(lines.filter((line) => line.includes(HOSTILE_ID.slice(0, 11)))).toHaveLength(1);
  });

  it("magnt review contacts <id> prints every field on its own line, clean", async () => {
    const run = await magnt(["review", "contacts", HOSTILE_ID, ...local()]);
    expect(run.code).toBe(0);
    expect(run.stdout.replace(/\n/g, "")).not.toMatch(TERMINAL_CONTROL);
    expect(run.stdout).not.toContain("TITLEPAYLOAD");
    // The visitor's fields sit under visitor_content, indented; review_status (never updated) is not shown (decision 189).
    expect(run.stdout.match(/^ {2}summary: +intro red/m)).not.toBeNull();
    expect(run.stdout.match(/second line/g)).toHaveLength(8);
    for (const line of run.stdout.split("\n")) expect(Array.from(line).length).toBeLessThanOrEqual(80);
  });

  it("an unknown contact id → exit 1; a malformed one → exit 2", async () => {
    expect((await magnt(["review", "contacts", "mc_00000000-0000-4000-8000-000000000000", ...local()])).code).toBe(1);
    expect((await magnt(["review", "contacts", "mc_x' OR '1'='1", ...local()])).code).toBe(2);
  });
});
