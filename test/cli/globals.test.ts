/**
 * Global conventions of 08 §2–§4: version/help, usage errors (exit 2, usage
 * printed, `--json` error object last on stdout), `--local --remote`,
 * `--persist-to` with `--remote`, unexpected errors (one line, exit 3, stack
 * only with MAGNT_DEBUG=1), and the one colour predicate.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { colourEnabled, tableCell } from "../../cli/lib/output";
import { d1Rows, installFakeWrangler, runMagnt, tempProject } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

describe("version and help", () => {
  it("--version prints the package version and exits 0", async () => {
    const run = await runMagnt(["--version"]);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe("0.2.0");
  });

  it("--help exits 0 and shows every command, examples and the exit codes", async () => {
    const run = await runMagnt(["--help"]);
    expect(run.code).toBe(0);
    for (const name of ["dev", "smoke", "probe-check", "migrate", "review", "signals"]) expect(run.stdout).toContain(name);
    expect(run.stdout).not.toContain("deploy-guard");
    expect(run.stdout).toContain("Examples:");
    expect(run.stdout).toContain("Exit codes: 0 success, 1 check failed, 2 usage error, 3 environment failure.");
  });

  it.each(["smoke", "probe-check", "migrate", "review", "dev"])("%s --help has examples", async (command) => {
    const run = await runMagnt([command, "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Examples:");
  });

  it("no command at all is a usage error", async () => {
    const run = await runMagnt([]);
    expect(run.code).toBe(2);
  });
});

describe("usage errors", () => {
  it("an unknown option exits 2: the message and one line pointing to --help, not the whole help", async () => {
    const run = await runMagnt(["smoke", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--bogus'");
    expect(run.stderr).toContain('Run "magnt smoke --help" for usage.');
    expect(run.stderr).not.toContain("Options:");
    expect(run.stderr.trimEnd().split("\n").length).toBeLessThanOrEqual(3);
    expect(run.stdout).toBe("");
  });

  it.each([
    [["review", "contacts", "--limt", "5"], "(Did you mean --limit?)", "magnt review"],
    [["migrat"], "(Did you mean migrate?)", "magnt"],
    [["flags", "enable", "dialogue_enabled", "--yes"], "(Did you mean DIALOGUE_ENABLED?)", "magnt flags enable"],
    [["flags", "disable", "TELEGRAM_NOTIFICATION_ENABLED", "--yes"], "(Did you mean TELEGRAM_NOTIFICATIONS_ENABLED?)", "magnt flags disable"],
  ])("%j: the message, the suggestion and one line pointing to --help", async (argv, suggestion, command) => {
    const run = await runMagnt(argv, { cwd: tempProject() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(suggestion);
    expect(run.stderr.trimEnd().split("\n").at(-1)).toBe(`Run "${command} --help" for usage.`);
    expect(run.stderr).not.toContain("Options:");
  });

  it("an unknown command exits 2", async () => {
    const run = await runMagnt(["frobnicate"]);
    expect(run.code).toBe(2);
  });

  it("--json adds the error object as the last stdout line", async () => {
    const run = await runMagnt(["review", "contacts", "--limit", "0", "--json"]);
    expect(run.code).toBe(2);
    expect(run.lastJson()).toEqual({ error: { code: "usage", message: expect.stringContaining("--limit") } });
  });

  it("--json with a commander error also ends with the error object", async () => {
    const run = await runMagnt(["migrate", "--nope", "--json"]);
    expect(run.code).toBe(2);
    expect(run.lastJson()).toEqual({ error: { code: "usage", message: expect.stringContaining("--nope") } });
  });

  it.each([
    ["migrate"],
    ["migrate", "--list"],
    ["review", "contacts"],
    ["signals", "hide", "ts_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"],
    ["dev"],
  ])("%s with --local --remote exits 2 before spawning anything", async (...argv) => {
    const { calls } = installFakeWrangler(spawnMock, () => ({ code: 0 }));
    const run = await runMagnt([...argv, "--local", "--remote", "--json"]);
    expect(run.code).toBe(2);
    expect(run.lastJson()).toEqual({ error: { code: "usage", message: "--local and --remote cannot be used together" } });
    expect(calls).toHaveLength(0);
  });

  it("--persist-to with --remote exits 2", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => ({ code: 0 }));
    const run = await runMagnt(["review", "contacts", "--remote", "--persist-to", "/tmp/x"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--persist-to only applies to local mode");
    expect(calls).toHaveLength(0);
  });

  it("global options are accepted after the command and ignored where irrelevant (--remote for smoke)", async () => {
    const run = await runMagnt(["smoke", "not a url", "--remote", "--yes", "--quiet"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("not a valid URL");
  });
});

describe("unexpected errors", () => {
  it("print one stderr line and exit 3, with no stack", async () => {
    spawnMock.mockReset();
    spawnMock.mockImplementation(() => {
      throw new Error("kaboom\nsecond line");
    });
    const run = await runMagnt(["migrate", "--list", "--json"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toBe("magnt: unexpected error: kaboom\n");
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: "unexpected error: kaboom" } });
  });

  it("print the stack only with MAGNT_DEBUG=1", async () => {
    spawnMock.mockReset();
    spawnMock.mockImplementation(() => {
      throw new Error("kaboom");
    });
    const run = await runMagnt(["migrate", "--list"], { env: { MAGNT_DEBUG: "1" } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("magnt: unexpected error: kaboom");
    expect(run.stderr).toMatch(/\n\s+at /);
  });
});

describe("colour predicate", () => {
  const tty = true;
  it.each([
    [{}, {}, tty, true],
    [{}, {}, false, false],
    [{ json: true }, { FORCE_COLOR: "1" }, tty, false],
    [{ color: false }, { FORCE_COLOR: "1" }, tty, false],
    [{}, { NO_COLOR: "1" }, tty, false],
    [{}, { NO_COLOR: "" }, tty, true],
    [{}, { TERM: "dumb" }, tty, false],
    [{}, { FORCE_COLOR: "1" }, false, true],
    [{}, { FORCE_COLOR: "1", NO_COLOR: "1" }, false, true],
    [{}, { FORCE_COLOR: "0" }, false, false],
  ])("options %j env %j tty %s → %s", (options, env, isTTY, expected) => {
    expect(colourEnabled(options, env, isTTY)).toBe(expected);
  });

  /**
   * `review contacts` colours its table header (and `review contacts <id>` its
   * labels). The same command is run four ways, so the "no colour" assertions
   * can fail: colour must appear when forced, and vanish with --no-color,
   * --json or NO_COLOR even when FORCE_COLOR=1 / a TTY would turn it on.
   */
  const ESC = "\u001b[";
  const row = { contact_id: "mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", created_at: "2026-01-01T00:00:00.000Z", review_status: "pending", summary: "hello" };
  it.each([[["review", "contacts"]], [["review", "contacts", row.contact_id]]])("%j: colour with FORCE_COLOR=1 (no TTY) and on a TTY", async (argv) => {
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const forced = await runMagnt(argv, { env: { FORCE_COLOR: "1" }, tty: false });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(ESC);
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const tty = await runMagnt(argv, { tty: true });
    expect(tty.stdout).toContain(ESC);
  });

  it.each([[["review", "contacts"]], [["review", "contacts", row.contact_id]]])("%j: --no-color, --json and NO_COLOR print no escape code, even with FORCE_COLOR=1 on a TTY", async (argv) => {
    for (const [extra, env] of [
      [["--no-color"], { FORCE_COLOR: "1" }],
      [["--json"], { FORCE_COLOR: "1" }],
      [[], { NO_COLOR: "1" }],
      [[], { TERM: "dumb" }],
    ] as const) {
      installFakeWrangler(spawnMock, () => ({ ...d1Rows([row]), stderr: "" }));
      const run = await runMagnt([...argv, ...extra], { env: { ...env }, tty: true });
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain(ESC);
      expect(run.stderr).not.toContain(ESC);
      // The list's header names the received date; the record and --json name contact_id.
      expect(run.stdout).toContain((extra as readonly string[]).includes("--json") ? '"contact_id"' : argv.length === 2 ? "received" : "contact_id");
    }
  });

  it("smoke's ✔/✘ lines: coloured when forced, plain with --no-color", async () => {
    const forced = await runMagnt(["smoke", "http://127.0.0.1:1/mcp", "--timeout", "2000"], { env: { FORCE_COLOR: "1" } });
    expect(forced.stdout).toContain(ESC);
    const plain = await runMagnt(["smoke", "http://127.0.0.1:1/mcp", "--timeout", "2000", "--no-color"], { env: { FORCE_COLOR: "1" }, tty: true });
    expect(plain.stdout).toContain("✘ connect");
    expect(plain.stdout).not.toContain(ESC);
    expect(plain.stderr).not.toContain(ESC);
  });
});

describe("table cells", () => {
  it("cut to 60 code points with an ellipsis and mark line breaks", () => {
    expect(tableCell("a\nb\r\nc")).toBe("a⏎b⏎c");
    expect(tableCell("x".repeat(60))).toBe("x".repeat(60));
    const cut = tableCell("я".repeat(61));
    expect(Array.from(cut)).toHaveLength(60);
    expect(cut.endsWith("…")).toBe(true);
    expect(Array.from(tableCell("😀".repeat(100)))).toHaveLength(60);
    expect(tableCell(null)).toBe("");
    expect(tableCell(3)).toBe("3");
  });
});
