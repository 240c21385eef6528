/**
 * `magnt flags list|enable|disable` (08 §9, 00 §6): the eight flags and the
 * Workers that read them, every prerequisite (migrations, secrets, cron,
 * other flags), refusal of flags whose release is not built, local
 * `.dev.vars` edits (mode 0600, other lines kept), remote secrets through
 * Wrangler (explicit --config, placeholder refusal, value on stdin, 10053
 * explained), and confirmation rules.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PassThrough } from "node:stream";
import { parseDevVars, withDevVar } from "../../cli/lib/dev-vars";
import { d1Rows, installFakeWrangler, runMagnt, sqlOf, tempProject, type FakeAnswer } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const REPO_ROOT_FOR_FLAGS = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ALL_APPLIED = ["0001_contacts.sql", "0002_task_signals.sql", "0003_observed_task_signals.sql", "0004_owner_notifications.sql", "0005_goal_notifications.sql"];
const SECRETS = "# local secrets\nTELEGRAM_BOT_TOKEN=123:abc\n\nTELEGRAM_OWNER_CHAT_ID=42 # the owner\n";

interface World {
  applied?: string[];
  secrets?: string[];
  put?: FakeAnswer;
}

/** A scripted Wrangler: d1 execute answers the applied set, secret list the names, put/delete succeed unless told. */
function wrangler(world: World = {}) {
  const fake = installFakeWrangler(spawnMock, (args) => {
    if (args[0] === "d1") return d1Rows((world.applied ?? ALL_APPLIED).map((name) => ({ name })));
    if (args[0] === "secret" && args[1] === "list") return { code: 0, stdout: JSON.stringify((world.secrets ?? []).map((name) => ({ name, type: "secret_text" })), null, "  ") };
    if (args[0] === "secret" && args[1] === "put") return world.put ?? { code: 0, stdout: "✨ Success! Uploaded secret" };
    return { code: 0 };
  });
  const stdin: string[] = [];
  const inner = spawnMock.getMockImplementation()!;
  spawnMock.mockImplementation(((...params: Parameters<typeof inner>) => {
    const child = inner(...params) as unknown as { stdin?: PassThrough };
    const input = new PassThrough();
    let text = "";
    input.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    input.on("finish", () => stdin.push(text));
    child.stdin = input;
    return child;
  }) as unknown as typeof inner);
  return { ...fake, stdin };
}

function localProject(devVars?: string): { dir: string; devVars: string } {
  const dir = tempProject();
  const path = join(dir, ".dev.vars");
  if (devVars !== undefined) writeFileSync(path, devVars, { mode: 0o644 });
  return { dir, devVars: path };
}

const read = (path: string) => readFileSync(path, "utf8");

describe(".dev.vars editing", () => {
  it("sets a value in place, drops duplicates and keeps every other line", () => {
    const text = "# c\nA=1\nFLAG=false\nB='x y'\nFLAG=TRUE\n";
    expect(withDevVar(text, "FLAG", "true")).toBe("# c\nA=1\nFLAG=true\nB='x y'\n");
    expect(withDevVar(text, "FLAG", null)).toBe("# c\nA=1\nB='x y'\n");
    expect(withDevVar("A=1", "FLAG", "true")).toBe("A=1\nFLAG=true\n");
    expect(withDevVar("", "FLAG", "true")).toBe("FLAG=true\n");
  });

  it("parses like dotenv: quotes, export, comments, later lines win", () => {
    const values = parseDevVars("export A=\"q\"\nB='s' \nC=plain # note\nD=1\nD=2\n");
    expect(Object.fromEntries(values)).toEqual({ A: "q", B: "s", C: "plain", D: "2" });
  });
});

describe("magnt flags (local)", () => {
  it("list: every flag the monolith reads, with exact-value states", async () => {
    const project = localProject("TELEGRAM_NOTIFICATIONS_ENABLED=TRUE\nTELEGRAM_PREVIEW_MODE=metadata_only\n");
    const { calls } = wrangler();
    const run = await runMagnt(["flags", "list", "--json"], { cwd: project.dir });
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(0);
    const listing = JSON.parse(run.lines[0]!) as { role: string; flags: { flag: string; state: string; value: string | null; default: string }[] };
    expect(listing.role).toBe("monolith");
    expect(listing.flags.map((flag) => flag.flag)).toEqual([
      "TELEGRAM_NOTIFICATIONS_ENABLED",
      "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED",
      "TELEGRAM_PREVIEW_MODE",
      "DIALOGUE_ENABLED",
      "DIALOGUE_READ_RECEIPTS_ENABLED",
    ]);
    expect(listing.flags[0]).toEqual({ flag: "TELEGRAM_NOTIFICATIONS_ENABLED", default: "off", state: "off", value: "TRUE" });
    expect(listing.flags[2]).toMatchObject({ state: "on", value: "metadata_only", default: "unset (excerpt mode)" });
  });

  it("list: a flag under vars in the config is an error (exit 1)", async () => {
    const project = localProject();
    const config = join(project.dir, "wrangler.local.jsonc");
    writeFileSync(config, read(config).replace('"SITE_ORIGIN": ""', '"SITE_ORIGIN": "", "TELEGRAM_NOTIFICATIONS_ENABLED": "true"'));
    wrangler();
    const run = await runMagnt(["flags", "list"], { cwd: project.dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('under "vars"');
  });

  it("enable: checks 0004, both secrets and the cron, then writes the flag with mode 0600 keeping other lines", async () => {
    const project = localProject(SECRETS);
    const { calls } = wrangler();
    const run = await runMagnt(["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes", "--json"], { cwd: project.dir });
    expect(run.code).toBe(0);
    expect(sqlOf(calls[0]!.args)).toBe("SELECT name FROM d1_migrations ORDER BY id");
    expect(calls[0]!.args).toContain("--local");
    expect(read(project.devVars)).toBe(`${SECRETS}TELEGRAM_NOTIFICATIONS_ENABLED=true\n`);
    expect(statSync(project.devVars).mode & 0o777).toBe(0o600);
    const result = JSON.parse(run.lines[0]!) as { flag: string; state: string; checks: { check: string; ok: boolean }[] };
    expect(result).toMatchObject({ flag: "TELEGRAM_NOTIFICATIONS_ENABLED", worker: "magnt-observer-local", state: "on" });
    expect(result.checks.map((check) => check.check)).toEqual([
      "migration 0004_owner_notifications.sql applied",
      "secret TELEGRAM_BOT_TOKEN present",
      "secret TELEGRAM_OWNER_CHAT_ID present",
      'cron "* * * * *" in wrangler.local.jsonc',
    ]);
    expect(result.checks.every((check) => check.ok)).toBe(true);
  });

  it("enable creates .dev.vars with mode 0600 when it is absent (preview mode needs nothing)", async () => {
    const project = localProject();
    const { calls } = wrangler();
    const run = await runMagnt(["flags", "enable", "TELEGRAM_PREVIEW_MODE", "--yes"], { cwd: project.dir });
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(0);
    expect(read(project.devVars)).toBe("TELEGRAM_PREVIEW_MODE=metadata_only\n");
    expect(statSync(project.devVars).mode & 0o777).toBe(0o600);
  });

  it("enable refuses, listing every failed check and changing nothing, without secrets, 0004 or the cron", async () => {
    const project = localProject("OTHER=1\n");
    const config = join(project.dir, "wrangler.local.jsonc");
    writeFileSync(config, read(config).replace('"triggers": { "crons": ["* * * * *"] }', '"triggers": { "crons": [] }'));
    wrangler({ applied: ALL_APPLIED.slice(0, 3) });
    const run = await runMagnt(["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"], { cwd: project.dir });
    expect(run.code).toBe(1);
    for (const text of ["0004_owner_notifications.sql", "TELEGRAM_BOT_TOKEN", "TELEGRAM_OWNER_CHAT_ID", "cron"]) expect(run.stderr).toContain(text);
    expect(read(project.devVars)).toBe("OTHER=1\n");
  });

  it("refuses TELEGRAM_GOAL_NOTIFICATIONS_ENABLED while TELEGRAM_NOTIFICATIONS_ENABLED is off", async () => {
    for (const value of [undefined, "TRUE", "false"]) {
      const project = localProject(value === undefined ? SECRETS : `${SECRETS}TELEGRAM_NOTIFICATIONS_ENABLED=${value}\n`);
      wrangler();
      const before = read(project.devVars);
      const run = await runMagnt(["flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--yes"], { cwd: project.dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("flag TELEGRAM_NOTIFICATIONS_ENABLED on");
      expect(read(project.devVars)).toBe(before);
    }
  });

  it("enables the goal flag once 0003–0005 are applied and the main flag is on", async () => {
    const project = localProject(`${SECRETS}TELEGRAM_NOTIFICATIONS_ENABLED=true\n`);
    wrangler({ applied: ALL_APPLIED.slice(0, 4) });
    expect((await runMagnt(["flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--yes"], { cwd: project.dir })).code).toBe(1);
    wrangler();
    expect((await runMagnt(["flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--yes"], { cwd: project.dir })).code).toBe(0);
    expect(parseDevVars(read(project.devVars)).get("TELEGRAM_GOAL_NOTIFICATIONS_ENABLED")).toBe("true");
  });

  it("DIALOGUE_ENABLED needs 0006 and 0007 applied and DIALOGUE_TOKEN_KEY present (07 §1), listing every failed check", async () => {
    const project = localProject(SECRETS);
    wrangler();
    const refused = await runMagnt(["flags", "enable", "DIALOGUE_ENABLED", "--yes", "--json"], { cwd: project.dir });
    expect(refused.code).toBe(1);
    for (const text of ["0006_owner_state.sql", "0007_dialogue.sql", "DIALOGUE_TOKEN_KEY"]) expect(refused.stderr).toContain(text);
    expect(JSON.parse(refused.lines[0]!)).toMatchObject({
      flag: "DIALOGUE_ENABLED",
      checks: [
        { check: "migration 0006_owner_state.sql applied", ok: false },
        { check: "migration 0007_dialogue.sql applied", ok: false },
        { check: "secret DIALOGUE_TOKEN_KEY present", ok: false },
      ],
    });
    expect(read(project.devVars)).toBe(SECRETS);

    writeFileSync(project.devVars, `${SECRETS}DIALOGUE_TOKEN_KEY=${"k".repeat(43)}\n`);
    wrangler({ applied: [...ALL_APPLIED, "0006_owner_state.sql"] });
    const without0007 = await runMagnt(["flags", "enable", "DIALOGUE_ENABLED", "--yes"], { cwd: project.dir });
    expect(without0007.code).toBe(1);
    expect(without0007.stderr).toContain("0007_dialogue.sql");
    expect(without0007.stderr).not.toContain("DIALOGUE_TOKEN_KEY present");

    wrangler({ applied: [...ALL_APPLIED, "0006_owner_state.sql", "0007_dialogue.sql"] });
    const enabled = await runMagnt(["flags", "enable", "DIALOGUE_ENABLED", "--yes", "--json"], { cwd: project.dir });
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.lines[0]!).checks.every((check: { ok: boolean }) => check.ok)).toBe(true);
    expect(parseDevVars(read(project.devVars)).get("DIALOGUE_ENABLED")).toBe("true");
  });

  it("DIALOGUE_READ_RECEIPTS_ENABLED needs DIALOGUE_ENABLED exactly on; disabling DIALOGUE_ENABLED warns about it", async () => {
    for (const value of [undefined, "TRUE"]) {
      const project = localProject(value === undefined ? SECRETS : `${SECRETS}DIALOGUE_ENABLED=${value}\n`);
      wrangler({ applied: [...ALL_APPLIED, "0006_owner_state.sql", "0007_dialogue.sql"] });
      const run = await runMagnt(["flags", "enable", "DIALOGUE_READ_RECEIPTS_ENABLED", "--yes"], { cwd: project.dir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("flag DIALOGUE_ENABLED on");
    }
    const project = localProject(`${SECRETS}DIALOGUE_ENABLED=true\n`);
    wrangler({ applied: [...ALL_APPLIED, "0006_owner_state.sql", "0007_dialogue.sql"] });
    expect((await runMagnt(["flags", "enable", "DIALOGUE_READ_RECEIPTS_ENABLED", "--yes"], { cwd: project.dir })).code).toBe(0);
    wrangler();
    const disabled = await runMagnt(["flags", "disable", "DIALOGUE_ENABLED", "--yes"], { cwd: project.dir });
    expect(disabled.code).toBe(0);
    expect(disabled.stderr).toContain("DIALOGUE_READ_RECEIPTS_ENABLED is still on");
    expect(parseDevVars(read(project.devVars)).get("DIALOGUE_ENABLED")).toBeUndefined();
  });

  it("disable --help says what stops with DIALOGUE_ENABLED off and that its dependents stay set but do nothing", async () => {
    const run = await runMagnt(["flags", "disable", "--help"]);
    expect(run.code).toBe(0);
    const help = run.stdout.replace(/\s+/g, " ");
    expect(help).toContain(
      "DIALOGUE_ENABLED off: new dialogue tokens, follow-ups, publishing, fetching, revoking and read receipts all stop; stored dialogues, replies and read marks are kept.",
    );
    expect(help).toContain(
      "DIALOGUE_REPLIES_ENABLED, DIALOGUE_READ_RECEIPTS_ENABLED: each stays set but does nothing while DIALOGUE_ENABLED is off, and takes effect again as soon as it is enabled.",
    );
  });

  it("disable DIALOGUE_ENABLED on the monolith says what stops there (no owner tools on that Worker)", async () => {
    const project = localProject("DIALOGUE_ENABLED=true\nDIALOGUE_READ_RECEIPTS_ENABLED=true\n");
    wrangler();
    const run = await runMagnt(["flags", "disable", "DIALOGUE_ENABLED", "--yes"], { cwd: project.dir });
    expect(run.code).toBe(0);
    const stops = run.stderr.split("\n").find((line) => line.startsWith("with DIALOGUE_ENABLED off on the monolith Worker"));
    expect(stops).toContain("fetch_contact_reply is gone (visitors cannot fetch replies, even published ones)");
    expect(stops).toContain("visitors see no read receipts");
    expect(stops).not.toContain("owner_publish_reply");
    expect(run.stderr).toContain("DIALOGUE_READ_RECEIPTS_ENABLED is still on and needs DIALOGUE_ENABLED: it stays set but does nothing");
    expect(read(project.devVars)).toBe("DIALOGUE_READ_RECEIPTS_ENABLED=true\n");
  });

  it.each(["OWNER_MCP_ENABLED", "OWNER_MCP_WRITE_ENABLED", "DIALOGUE_REPLIES_ENABLED"])("%s is not read by the monolith → exit 2, naming the Workers and configs that read it and --owner", async (flag) => {
    const project = localProject();
    wrangler();
    const run = await runMagnt(["flags", "enable", flag, "--yes"], { cwd: project.dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${flag} is not read by the monolith Worker of wrangler.local.jsonc: it is read by core (wrangler.core.jsonc)`);
    expect(run.stderr).toContain("for the local split run (magnt dev --owner): --owner");
  });

  it.each(["telegram_notifications_enabled", "FOO", "TELEGRAM_BOT_TOKEN"])("unknown flag %s → exit 2", async (flag) => {
    const project = localProject();
    wrangler();
    const run = await runMagnt(["flags", "enable", flag, "--yes", "--json"], { cwd: project.dir });
    expect(run.code).toBe(2);
    expect(run.lastJson()).toMatchObject({ error: { code: "usage" } });
  });

  it("never prompts without a TTY: no --yes → exit 2, nothing changed", async () => {
    const project = localProject(SECRETS);
    wrangler();
    const run = await runMagnt(["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED"], { cwd: project.dir, tty: false });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("confirmation required: pass --yes");
    expect(read(project.devVars)).toBe(SECRETS);
  });

  it("disable removes only that line, warns about a dependent flag still on, and an absent flag succeeds", async () => {
    const project = localProject(`${SECRETS}TELEGRAM_NOTIFICATIONS_ENABLED=true\nTELEGRAM_GOAL_NOTIFICATIONS_ENABLED=true\n`);
    wrangler();
    const run = await runMagnt(["flags", "disable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes", "--json"], { cwd: project.dir });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("TELEGRAM_GOAL_NOTIFICATIONS_ENABLED is still on");
    expect(read(project.devVars)).toBe(`${SECRETS}TELEGRAM_GOAL_NOTIFICATIONS_ENABLED=true\n`);
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ flag: "TELEGRAM_NOTIFICATIONS_ENABLED", state: "off" });

    const again = await runMagnt(["flags", "disable", "TELEGRAM_NOTIFICATIONS_ENABLED"], { cwd: project.dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing to do");
  });

  it("disable on a project without .dev.vars does not create one", async () => {
    const project = localProject();
    wrangler();
    expect((await runMagnt(["flags", "disable", "TELEGRAM_PREVIEW_MODE"], { cwd: project.dir })).code).toBe(0);
    expect(existsSync(project.devVars)).toBe(false);
  });
});

describe("magnt flags (remote)", () => {
  it("requires an explicit --config (exit 2, nothing spawned)", async () => {
    const { calls } = wrangler();
    const run = await runMagnt(["flags", "list", "--remote", "--json"], { cwd: tempProject({ realId: true }) });
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
    expect(run.stderr).toContain("explicit --config");
  });

  it("refuses a config with the placeholder database id (exit 2, nothing spawned)", async () => {
    const { calls } = wrangler();
    const run = await runMagnt(["flags", "enable", "TELEGRAM_PREVIEW_MODE", "--remote", "--config", "wrangler.jsonc", "--yes"], { cwd: tempProject() });
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
    expect(run.stderr).toContain("placeholder");
  });

  it("list: secret set / not set from wrangler secret list, ending with the dashboard-variable warning", async () => {
    const { calls } = wrangler({ secrets: ["TELEGRAM_NOTIFICATIONS_ENABLED", "TELEGRAM_BOT_TOKEN"] });
    const run = await runMagnt(["flags", "list", "--remote", "--config", "wrangler.jsonc"], { cwd: tempProject({ realId: true }), env: { NO_COLOR: "1" } });
    expect(run.code).toBe(0);
    expect(calls[0]!.args).toEqual(["secret", "list", "--config", "wrangler.jsonc", "--format", "json"]);
    expect(run.stdout).toContain("secret_set");
    expect(run.stdout).toContain("not_set");
    expect(run.stderr.trim().split("\n").at(-1)).toContain("dashboard variable");
  });

  it("enable: checks remote migrations and secrets, then puts the value on stdin without a newline", async () => {
    const fake = wrangler({ secrets: ["TELEGRAM_BOT_TOKEN", "TELEGRAM_OWNER_CHAT_ID"] });
    const run = await runMagnt(["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--remote", "--config", "wrangler.jsonc", "--yes", "--json"], {
      cwd: tempProject({ realId: true }),
    });
    expect(run.code).toBe(0);
    const put = fake.calls.find((call) => call.args[1] === "put")!;
    expect(put.args).toEqual(["secret", "put", "TELEGRAM_NOTIFICATIONS_ENABLED", "--config", "wrangler.jsonc"]);
    expect(put.options.shell).toBe(false);
    expect(fake.calls.find((call) => call.args[0] === "d1")!.args).toContain("--remote");
    expect(fake.stdin.at(-1)).toBe("true");
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ state: "secret_set" });
  });

  it("explains Cloudflare error 10053 (a dashboard variable) and exits 1", async () => {
    wrangler({ put: { code: 1, stderr: "✘ [ERROR] A request to the Cloudflare API failed.\n  Binding name 'TELEGRAM_PREVIEW_MODE' already in use. [code: 10053]\n" } });
    const run = await runMagnt(["flags", "enable", "TELEGRAM_PREVIEW_MODE", "--remote", "--config", "wrangler.jsonc", "--yes"], {
      cwd: tempProject({ realId: true }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("dashboard variable named TELEGRAM_PREVIEW_MODE");
    expect(run.stderr).toContain("delete that variable in the Cloudflare dashboard");
  });

  it("refuses the goal flag remotely while the main flag is not set", async () => {
    const fake = wrangler({ secrets: [] });
    const run = await runMagnt(["flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--remote", "--config", "wrangler.jsonc", "--yes"], {
      cwd: tempProject({ realId: true }),
    });
    expect(run.code).toBe(1);
    expect(fake.calls.some((call) => call.args[1] === "put")).toBe(false);
  });

  it("disable: secret delete with CI=1 when set, nothing when not set", async () => {
    const fake = wrangler({ secrets: ["TELEGRAM_PREVIEW_MODE"] });
    const project = tempProject({ realId: true });
    expect((await runMagnt(["flags", "disable", "TELEGRAM_PREVIEW_MODE", "--remote", "--config", "wrangler.jsonc", "--yes"], { cwd: project })).code).toBe(0);
    const remove = fake.calls.find((call) => call.args[1] === "delete")!;
    expect(remove.args).toEqual(["secret", "delete", "TELEGRAM_PREVIEW_MODE", "--config", "wrangler.jsonc"]);
    expect(remove.options.env?.CI).toBe("1");

    const none = wrangler({ secrets: [] });
    expect((await runMagnt(["flags", "disable", "TELEGRAM_PREVIEW_MODE", "--remote", "--config", "wrangler.jsonc"], { cwd: project })).code).toBe(0);
    expect(none.calls.some((call) => call.args[1] === "delete")).toBe(false);
  });

  it("disabling DIALOGUE_ENABLED on core says what stops there, and that the flags left set do nothing (07 §1)", async () => {
    const project = tempProject();
    const core = readFileSync(join(REPO_ROOT_FOR_FLAGS, "wrangler.core.jsonc"), "utf8").replace("00000000-0000-0000-0000-000000000000", "3f2a8c1e-5b7d-4e9f-a1c3-5d7e9f1a3b5c");
    writeFileSync(join(project, "wrangler.core.jsonc"), core);
    const fake = wrangler({ secrets: ["DIALOGUE_ENABLED", "DIALOGUE_REPLIES_ENABLED", "DIALOGUE_READ_RECEIPTS_ENABLED", "OWNER_MCP_ENABLED"] });
    const run = await runMagnt(["flags", "disable", "DIALOGUE_ENABLED", "--remote", "--config", "wrangler.core.jsonc", "--yes", "--json"], { cwd: project });
    expect(run.code).toBe(0);
    expect(fake.calls.filter((call) => call.args[1] === "delete").map((call) => call.args[2])).toEqual(["DIALOGUE_ENABLED"]);
    const stops = run.stderr.split("\n").find((line) => line.startsWith("with DIALOGUE_ENABLED off on the core Worker"));
    for (const text of ["fetch_contact_reply is gone", "owner_publish_reply and owner_revoke_dialogue are gone", "reads are not recorded", "no read receipts"]) {
      expect(stops).toContain(text);
    }
    for (const dependent of ["DIALOGUE_REPLIES_ENABLED", "DIALOGUE_READ_RECEIPTS_ENABLED"]) {
      expect(run.stderr).toContain(`${dependent} is still on and needs DIALOGUE_ENABLED: it stays set but does nothing while DIALOGUE_ENABLED is off`);
    }
    expect(run.stderr).not.toContain("OWNER_MCP_ENABLED is still on");
    expect(JSON.parse(run.lines[0]!)).toMatchObject({
      flag: "DIALOGUE_ENABLED",
      state: "not_set",
      checks: [
        { check: "dependent flag DIALOGUE_REPLIES_ENABLED off", ok: false },
        { check: "dependent flag DIALOGUE_READ_RECEIPTS_ENABLED off", ok: false },
      ],
    });
  });

  it("DIALOGUE_REPLIES_ENABLED on core needs DIALOGUE_ENABLED, OWNER_MCP_ENABLED and OWNER_MCP_WRITE_ENABLED set (07 §1)", async () => {
    const project = tempProject();
    const core = readFileSync(join(REPO_ROOT_FOR_FLAGS, "wrangler.core.jsonc"), "utf8").replace("00000000-0000-0000-0000-000000000000", "3f2a8c1e-5b7d-4e9f-a1c3-5d7e9f1a3b5c");
    writeFileSync(join(project, "wrangler.core.jsonc"), core);
    const args = ["flags", "enable", "DIALOGUE_REPLIES_ENABLED", "--remote", "--config", "wrangler.core.jsonc", "--yes"];
    wrangler({ secrets: ["DIALOGUE_ENABLED", "OWNER_MCP_ENABLED"] });
    const refused = await runMagnt(args, { cwd: project });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("flag OWNER_MCP_WRITE_ENABLED on");
    const fake = wrangler({ secrets: ["DIALOGUE_ENABLED", "OWNER_MCP_ENABLED", "OWNER_MCP_WRITE_ENABLED"] });
    expect((await runMagnt(args, { cwd: project })).code).toBe(0);
    expect(fake.calls.find((call) => call.args[1] === "put")!.args).toEqual(["secret", "put", "DIALOGUE_REPLIES_ENABLED", "--config", "wrangler.core.jsonc"]);
  });
});

describe("magnt flags --owner (the local split run's .dev.vars)", () => {
  /** A project with the deployable configs next to the local one (the split run reads core's cron from wrangler.core.jsonc). */
  function splitProject(devVars?: string): { dir: string; user: string; generated: string } {
    const dir = tempProject();
    for (const file of ["wrangler.core.jsonc", "wrangler.gateway.jsonc", "wrangler.owner.jsonc"]) {
      writeFileSync(join(dir, file), readFileSync(join(REPO_ROOT_FOR_FLAGS, file), "utf8"));
    }
    if (devVars !== undefined) writeFileSync(join(dir, ".dev.vars"), devVars);
    return { dir, user: join(dir, ".dev.vars"), generated: join(dir, ".wrangler", "magnt-dev-owner", ".dev.vars") };
  }
  const ALL = [...ALL_APPLIED, "0006_owner_state.sql", "0007_dialogue.sql"];

  it("list --json: all eight flags as an array, each with the Workers that read it, from the generated file (created as magnt dev --owner would)", async () => {
    const project = splitProject();
    wrangler({ applied: ALL });
    const run = await runMagnt(["flags", "list", "--owner", "--json"], { cwd: project.dir });
    expect(run.code, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as { role: string; mode: string; flags: { flag: string; state: string; read_by: string[] }[] };
    expect(listed).toMatchObject({ role: "split", mode: "local" });
    expect(Array.isArray(listed.flags)).toBe(true);
    expect(listed.flags.map((row) => [row.flag, row.state, row.read_by])).toEqual([
      ["TELEGRAM_NOTIFICATIONS_ENABLED", "on", ["core"]],
      ["TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "off", ["core"]],
      ["TELEGRAM_PREVIEW_MODE", "off", ["core"]],
      ["OWNER_MCP_ENABLED", "on", ["core", "owner_gateway"]],
      ["OWNER_MCP_WRITE_ENABLED", "on", ["core", "owner_gateway"]],
      ["DIALOGUE_ENABLED", "on", ["core"]],
      ["DIALOGUE_REPLIES_ENABLED", "on", ["core"]],
      ["DIALOGUE_READ_RECEIPTS_ENABLED", "on", ["core"]],
    ]);
    expect(existsSync(project.generated)).toBe(true);
    expect(existsSync(project.user)).toBe(false);
    expect(run.stderr).toContain(`created ${project.generated} with generated local-only values`);
    // No generated value is printed.
    for (const [name, value] of parseDevVars(read(project.generated))) if (!name.endsWith("_ENABLED")) expect(run.stdout + run.stderr).not.toContain(value);
  });

  it("enable/disable --owner edit the generated file only, with the restart hint; the user's .dev.vars without owner secrets stays as it is", async () => {
    const mine = "TELEGRAM_BOT_TOKEN=123:abc\n";
    const project = splitProject(mine);
    wrangler({ applied: ALL });
    const enabled = await runMagnt(["flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--owner", "--yes"], { cwd: project.dir });
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout).toContain(`TELEGRAM_GOAL_NOTIFICATIONS_ENABLED enabled (true) in ${project.generated}`);
    expect(enabled.stderr).toContain("restart magnt dev --owner if it is running");
    expect(parseDevVars(read(project.generated)).get("TELEGRAM_GOAL_NOTIFICATIONS_ENABLED")).toBe("true");
    const disabled = await runMagnt(["flags", "disable", "DIALOGUE_ENABLED", "--owner", "--yes"], { cwd: project.dir });
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).toContain("with DIALOGUE_ENABLED off on the core Worker of the local split run:");
    expect(disabled.stderr).toContain("DIALOGUE_REPLIES_ENABLED is still on and needs DIALOGUE_ENABLED");
    expect(parseDevVars(read(project.generated)).has("DIALOGUE_ENABLED")).toBe(false);
    expect(read(project.user)).toBe(mine);
  });

  it("enable --owner checks every prerequisite of every Worker that reads the flag (core's migration, the gateway's GitHub client), changing nothing when one fails", async () => {
    const project = splitProject("OWNER_GITHUB_ID=12345\nOWNER_TOKEN_SIGNING_KEY=x\n");
    wrangler({ applied: ALL_APPLIED });
    const run = await runMagnt(["flags", "enable", "OWNER_MCP_ENABLED", "--owner", "--yes", "--json"], { cwd: project.dir });
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout.trim().split("\n")[0]!) as { role: string; checks: { check: string; ok: boolean }[] };
    expect(result.role).toBe("split");
    expect(result.checks.filter((check) => !check.ok).map((check) => check.check)).toEqual([
      "migration 0006_owner_state.sql applied",
      "secret GITHUB_CLIENT_ID present",
      "secret GITHUB_CLIENT_SECRET present",
    ]);
    // The user's .dev.vars holds owner secrets: it is the split run's, and nothing was generated.
    expect(read(project.user)).toBe("OWNER_GITHUB_ID=12345\nOWNER_TOKEN_SIGNING_KEY=x\n");
    expect(existsSync(project.generated)).toBe(false);
  });

  it("the notification flag's cron is core's (wrangler.core.jsonc)", async () => {
    const project = splitProject();
    wrangler({ applied: ALL });
    await runMagnt(["flags", "disable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--owner", "--yes"], { cwd: project.dir });
    const run = await runMagnt(["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--owner", "--yes", "--json"], { cwd: project.dir });
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { checks: { check: string }[] }).checks.map((check) => check.check)).toContain('cron "* * * * *" in wrangler.core.jsonc');
  });

  it.each([
    [["--remote", "--config", "wrangler.core.jsonc"], "--owner manages the local split run's .dev.vars"],
    [["--env", "staging"], "takes no --env"],
  ])("--owner %j → exit 2, nothing spawned or written", async (extra, message) => {
    const project = splitProject();
    const fake = wrangler();
    const run = await runMagnt(["flags", "list", "--owner", ...extra], { cwd: project.dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(fake.calls).toHaveLength(0);
    expect(existsSync(project.generated)).toBe(false);
  });
});
