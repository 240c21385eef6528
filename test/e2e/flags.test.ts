/**
 * `magnt flags` end to end (08 §9, 08 DoD): the built CLI against a
 * temporary local state — a copy of the local config in a temp directory
 * (its own `.dev.vars`) and a `--persist-to` D1 — with real Wrangler calls
 * for the migration checks.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { magnt, removeTempDirs, REPO_ROOT, tempDir } from "./helpers";

let dir: string;
let state: string;
let config: string;
const SECRETS = "# kept as written\nTELEGRAM_BOT_TOKEN=123456:e2eFakeToken\nTELEGRAM_OWNER_CHAT_ID=4242\n";

const local = (...args: string[]) => [...args, "--config", config, "--persist-to", state];

async function listed(): Promise<Record<string, string>> {
  const run = await magnt(local("flags", "list", "--json"));
  expect(run.code, run.stderr).toBe(0);
  const { flags } = JSON.parse(run.stdout) as { flags: { flag: string; state: string }[] };
  return Object.fromEntries(flags.map((flag) => [flag.flag, flag.state]));
}

beforeAll(() => {
  dir = tempDir("flags");
  state = tempDir("flags-state");
  config = join(dir, "wrangler.local.jsonc");
  writeFileSync(
    config,
    readFileSync(join(REPO_ROOT, "wrangler.local.jsonc"), "utf8")
      .replace('"main": "worker/entries/monolith.ts"', `"main": ${JSON.stringify(join(REPO_ROOT, "worker/entries/monolith.ts"))}`)
      .replace('"migrations_dir": "migrations"', `"migrations_dir": ${JSON.stringify(join(REPO_ROOT, "migrations"))}`),
  );
});

afterAll(() => removeTempDirs());

describe("magnt flags against a temporary local state", () => {
  it("lists every flag of the monolith as off on a fresh state", async () => {
    expect(await listed()).toEqual({
      TELEGRAM_NOTIFICATIONS_ENABLED: "off",
      TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: "off",
      TELEGRAM_PREVIEW_MODE: "off",
      DIALOGUE_ENABLED: "off",
      DIALOGUE_READ_RECEIPTS_ENABLED: "off",
    });
  });

  it("refuses the goal flag while the main flag is off and the migrations are missing, changing nothing", async () => {
    const run = await magnt(local("flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--yes", "--json"));
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split("\n");
    const result = JSON.parse(lines[0]!) as { checks: { check: string; ok: boolean }[] };
    expect(result.checks.filter((check) => !check.ok).map((check) => check.check)).toEqual([
      "migration 0003_observed_task_signals.sql applied",
      "migration 0004_owner_notifications.sql applied",
      "migration 0005_goal_notifications.sql applied",
      "flag TELEGRAM_NOTIFICATIONS_ENABLED on",
    ]);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ error: { code: "check_failed" } });
    expect((await listed()).TELEGRAM_GOAL_NOTIFICATIONS_ENABLED).toBe("off");
  });

  it("enables both Telegram flags once migrations and secrets exist, keeping .dev.vars private and its lines", async () => {
    expect((await magnt(local("migrate", "--quiet"))).code).toBe(0);
    writeFileSync(join(dir, ".dev.vars"), SECRETS, { mode: 0o644 });
    for (const flag of ["TELEGRAM_NOTIFICATIONS_ENABLED", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "TELEGRAM_PREVIEW_MODE"]) {
      const run = await magnt(local("flags", "enable", flag, "--yes"));
      expect(run.code, run.stderr).toBe(0);
    }
    expect(await listed()).toMatchObject({ TELEGRAM_NOTIFICATIONS_ENABLED: "on", TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: "on", TELEGRAM_PREVIEW_MODE: "on" });
    const text = readFileSync(join(dir, ".dev.vars"), "utf8");
    expect(text.startsWith(SECRETS)).toBe(true);
    expect(text).toContain("TELEGRAM_PREVIEW_MODE=metadata_only\n");
    expect(statSync(join(dir, ".dev.vars")).mode & 0o777).toBe(0o600);
  });

  it("refuses the dialogue flag while its key is missing, and says so, changing nothing", async () => {
    const before = readFileSync(join(dir, ".dev.vars"), "utf8");
    const run = await magnt(local("flags", "enable", "DIALOGUE_ENABLED", "--yes"));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("DIALOGUE_TOKEN_KEY");
    expect(readFileSync(join(dir, ".dev.vars"), "utf8")).toBe(before);
  });

  it("never prompts without a TTY", async () => {
    const run = await magnt(local("flags", "disable", "TELEGRAM_PREVIEW_MODE"));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("confirmation required: pass --yes");
  });

  it("disables with a warning about the dependent flag, and disabling again succeeds", async () => {
    const run = await magnt(local("flags", "disable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"));
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("TELEGRAM_GOAL_NOTIFICATIONS_ENABLED is still on");
    expect(await listed()).toMatchObject({ TELEGRAM_NOTIFICATIONS_ENABLED: "off", TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: "on" });
    expect((await magnt(local("flags", "disable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"))).code).toBe(0);
    expect(readFileSync(join(dir, ".dev.vars"), "utf8").startsWith(SECRETS)).toBe(true);
  });

  it("remote without an explicit --config is a usage error", async () => {
    const run = await magnt(["flags", "list", "--remote"]);
    expect(run.code).toBe(2);
  });
});
