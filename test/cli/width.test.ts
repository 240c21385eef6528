/**
 * 80 columns everywhere (issue 22, 08 §3): every command's human output and
 * every `--help` is rendered at 80 and at 120 columns (`COLUMNS`, stdout not
 * a TTY, as in a pipe) and no line may be wider. The data is chosen to be
 * wide: long summaries, long goals, long probe values, a failing probe.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { createProgram } from "../../cli/program";
import { displayWidth } from "../../cli/lib/terminal-text";
import { startFakeDoor, type FakeDoor } from "./fake-door";
import { d1Rows, installFakeWrangler, REPO_ROOT, repoMigrationNames, runMagnt, sqlOf, tempProject, type Captured, type FakeAnswer } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const WIDTHS = [80, 120] as const;
const LONG = "a visitor who writes a great deal about what they need, in one long sentence without any line break at all, ".repeat(3);
const CONTACT_ID = "mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
const SIGNAL_ID = "ts_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b";

/** Every line of stdout and stderr wider than `width`, with its width (empty when all fit). */
function wideLines(run: Captured, width: number): string[] {
  return `${run.stdout}\n${run.stderr}`
    .split("\n")
    .filter((line) => displayWidth(line) > width)
    .map((line) => `${displayWidth(line)}: ${line}`);
}

async function at(width: number, argv: string[], options: { cwd?: string } = {}): Promise<Captured> {
  return runMagnt(argv, { env: { COLUMNS: String(width), NO_COLOR: "1" }, ...options });
}

/** Every command path of the program: `[]` (the root), `["review"]`, `["flags", "enable"]`, … */
function commandPaths(): string[][] {
  const program = createProgram({
    stdout: { write: () => true },
    stderr: { write: () => true },
    stdin: {},
    env: {},
    cwd: REPO_ROOT,
    wranglerTimeoutMs: { local: 1, remote: 1 },
    signals: { on: () => undefined, off: () => undefined },
  });
  const walk = (command: CommandUnknownOpts, path: string[]): string[][] => [path, ...command.commands.flatMap((child) => walk(child, [...path, child.name()]))];
  return walk(program, []);
}

/** A Wrangler that answers each D1 query of the owner's commands with wide rows. */
function wideDatabase(): void {
  const rows = (sql: string): FakeAnswer => {
    if (sql.includes("d1_migrations")) return d1Rows(repoMigrationNames().map((name) => ({ name })));
    if (sql.includes("FROM contacts")) {
      return d1Rows([
        { contact_id: CONTACT_ID, created_at: "2026-05-01T10:00:00.000Z", review_status: "new", intent: "collaboration", summary: LONG, what_you_need_from_human: LONG, agent_identity: LONG, operator: LONG, reply_to: "https://example.com/a/very/long/reply/address", found_via: "search", previous_contact_id: null },
      ]);
    }
    if (sql.includes("FROM task_signals")) return d1Rows([{ signal_id: SIGNAL_ID, created_at: "2026-05-01T10:00:00.000Z", goal: LONG, blocker: LONG, tried: LONG, learned: LONG, status: "visible" }]);
    if (sql.includes("FROM observed_task_signals")) return d1Rows([{ observation_id: "ob_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", created_at: "2026-05-01T10:00:00.000Z", goal: LONG, blocker: LONG, tried: LONG }]);
    if (sql.includes("FROM owner_drafts")) return d1Rows([{ draft_id: "dr_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", contact_id: CONTACT_ID, revision: 3, created_at: "2026-05-01T10:00:00.000Z", updated_at: "2026-05-01T10:00:00.000Z", body: LONG }]);
    if (sql.includes("notification_state")) {
      const state = [{ activated_at: "2026-05-01T09:00:00.000Z", chat_pinned: 1, lease_expires_at: null, backoff_until: null, consecutive_failures: 0 }];
      const counts = [{ state: "failed", n: 2 }];
      const outbox = [
        { outbox_id: "ob_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", source_kind: "contact", source_id: CONTACT_ID, state: "failed", attempts: 7, next_attempt_at: "2026-05-01T10:00:00.000Z", last_attempt_at: "2026-05-01T10:01:00.000Z", last_error_code: "telegram_http_5xx", last_http_status: 502, delivered_at: null, telegram_message_id: null, created_at: "2026-05-01T10:00:00.000Z" },
      ];
      return { code: 0, stdout: JSON.stringify([state, counts, outbox].map((results) => ({ results, success: true, meta: {} }))) };
    }
    return d1Rows([]);
  };
  installFakeWrangler(spawnMock, (args) => (args[0] === "d1" ? rows(sqlOf(args) ?? "") : { code: 0 }));
}

describe.each(WIDTHS)("at %i columns", (width) => {
  it.each(commandPaths().map((path) => [path.join(" ") || "(root)", path] as const))("magnt %s --help fits", async (_name, path) => {
    const run = await at(width, [...path, "--help"]);
    expect(run.code).toBe(0);
    expect(wideLines(run, width)).toEqual([]);
  });

  it("help wraps to this width, not to a fixed one (the epilogues too)", async () => {
    for (const path of [["review"], ["flags", "enable"], ["dev"]]) {
      const run = await at(width, [...path, "--help"]);
      const longest = Math.max(...run.stdout.split("\n").map(displayWidth));
      expect(longest, path.join(" ")).toBeLessThanOrEqual(width);
      expect(longest, path.join(" ")).toBeGreaterThan(width - 15);
    }
  });

  it.each([
    ["an unknown option", ["review", "contacts", "--limt", "5"]],
    ["an unknown command", ["frobnicate"]],
    ["a misspelled flag name", ["flags", "enable", "dialogue_enabled", "--yes"]],
    ["a bad option value", ["review", "contacts", "--limit", "0"]],
  ])("a usage error (%s) fits and points to --help", async (_name, argv) => {
    const run = await at(width, argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Run "magnt[^"]* --help" for usage\./);
    expect(run.stderr).not.toContain("Options:");
    expect(wideLines(run, width)).toEqual([]);
  });

  it("outside the repository: what was looked for and how to run it, fitted", async () => {
    const run = await at(width, ["migrate", "--list"], { cwd: "/" });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("no Wrangler config wrangler.local.jsonc in /");
    expect(run.stderr).toContain("npm ci");
    expect(run.stderr).toContain("--config");
  });

  describe("probe-check", () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    it("a failing probe with long values fits", async () => {
      server = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8; a-long-parameter=that-makes-the-value-wide", "cache-control": "public, max-age=31536000, immutable" });
        res.end(JSON.stringify({ ok: true, mcp_door_version: "something-else-entirely-and-long", unexpected_field_with_a_long_name: 1, another_unexpected_field: 2 }));
      });
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as AddressInfo;
      const run = await at(width, ["probe-check", `http://127.0.0.1:${port}/`]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("content_type");
      expect(wideLines(run, width)).toEqual([]);
    });
  });

  describe("smoke", () => {
    let door: FakeDoor | undefined;
    afterEach(async () => {
      await door?.close();
      door = undefined;
    });

    it("every step line fits", async () => {
      door = await startFakeDoor();
      const run = await at(width, ["smoke", door.url, "--legacy", "--submit-test", "--shared-memory-test"]);
      expect(run.code).toBe(0);
      expect(wideLines(run, width)).toEqual([]);
    });
  });

  it("flags list fits (the local .dev.vars, and --owner)", async () => {
    const dir = tempProject();
    // The split run reads the deployable configs next to the local one.
    for (const file of ["wrangler.core.jsonc", "wrangler.gateway.jsonc", "wrangler.owner.jsonc"]) copyFileSync(join(REPO_ROOT, file), join(dir, file));
    wideDatabase();
    for (const argv of [["flags", "list"], ["flags", "list", "--owner"]]) {
      const run = await at(width, argv, { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      expect(wideLines(run, width)).toEqual([]);
    }
  });

  it("flags enable and disable fit (the .dev.vars path, the restart hint, the dependants' warning)", async () => {
    const dir = tempProject();
    writeFileSync(join(dir, ".dev.vars"), "TELEGRAM_BOT_TOKEN=123:abc\nTELEGRAM_OWNER_CHAT_ID=42\n");
    wideDatabase();
    for (const argv of [["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"], ["flags", "enable", "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED", "--yes"], ["flags", "disable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"]]) {
      const run = await at(width, argv, { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      expect(wideLines(run, width)).toEqual([]);
    }
  });

  it("migrate --list fits", async () => {
    wideDatabase();
    const run = await at(width, ["migrate", "--list"]);
    expect(run.code, run.stderr).toBe(0);
    expect(wideLines(run, width)).toEqual([]);
  });

  // The owners' lists (issue 22 item 3 is another branch's; these guard the width only).
  it.each([
    ["review contacts", ["review", "contacts"]],
    ["review signals", ["review", "signals"]],
    ["review observed", ["review", "observed"]],
    ["review drafts", ["review", "drafts"]],
    ["review contacts <id>", ["review", "contacts", CONTACT_ID]],
    ["outbox", ["outbox"]],
  ])("%s fits", async (_name, argv) => {
    wideDatabase();
    const run = await at(width, argv);
    expect(run.code, run.stderr).toBe(0);
    expect(wideLines(run, width)).toEqual([]);
  });

  // s22metrics owns `magnt metrics` (issue 22 item 2); its title line is 84 columns on this branch.
  it("metrics on the project's fixtures fits", async () => {
    const fixtures = join(REPO_ROOT, "test", "fixtures", "metrics");
    const run = await at(width, ["metrics", join(fixtures, "gateway.ndjson"), join(fixtures, "core.json")]);
    expect(run.code, run.stderr).toBe(0);
    expect(wideLines(run, width)).toEqual([]);
  });
});
