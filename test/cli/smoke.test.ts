/**
 * `magnt smoke` (08 §6) against an in-memory door: step order and lines, the
 * `--json` JSON lines with the summary, the first failure stopping the run,
 * exit 1 vs 3, the controlled User-Agent, options, and that task tokens never
 * reach the output even when the server echoes them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { CONTROLLED_TEST_USER_AGENT, OWNER_TOOL_NAMES, PUBLIC_TOOL_NAMES, TOOL_FETCH_REPLY } from "../../worker/contracts";
import { randomToken, syntheticTask } from "../../cli/commands/smoke";
import { correctBehaviour, startFakeDoor, type FakeDoor } from "./fake-door";
import { runMagnt } from "./harness";

const ALL_FLAGS = ["--submit-test", "--shared-memory-test"];
let door: FakeDoor | undefined;
afterEach(async () => {
  await door?.close();
  door = undefined;
});

function parseLines(stdout: string): Record<string, unknown>[] {
  return stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("synthetic task", () => {
  it("tokens are 12 lower-case base-36 characters starting with a letter", () => {
    for (let i = 0; i < 200; i += 1) expect(randomToken()).toMatch(/^[a-z][a-z0-9]{11}$/);
  });
  it("goal has five tokens, blocker three, tried three", () => {
    const task = syntheticTask();
    expect(task.goal.split(" ")).toHaveLength(5);
    expect(task.blocker.split(" ")).toHaveLength(3);
    expect(task.tried.split(" ")).toHaveLength(3);
    expect(new Set(task.tokens).size).toBe(11);
  });
});

describe("magnt smoke against a correct door", () => {
  it("legacy mode: every step passes, one line each, exit 0, controlled User-Agent", async () => {
    door = await startFakeDoor();
    const run = await runMagnt(["smoke", door.url, "--legacy", ...ALL_FLAGS]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const names = run.lines.slice(0, -1).map((line) => line.split(/\s+/)[1]);
    expect(names).toEqual([
      "connect", "list_tools", "list_resources", "read_profile", "call_about_magnt",
      "propose_contact", "propose_contact_retry",
      "search_before", "contribute", "contribute_retry", "search_after", "search_ordinary",
    ]);
    expect(run.stdout).toContain("protocol_version: 2025-11-25");
    expect(run.stdout).toContain("duplicate_retry_verified: true");
    expect(run.stdout).toContain("test_cohort_match_verified: true");
    expect(run.stdout).toContain("ordinary_cohort_isolated: true");
    expect(run.stdout).not.toContain(String(correctBehaviour().profile.purpose));
    expect(new Set(door.userAgents)).toEqual(new Set([CONTROLLED_TEST_USER_AGENT]));
  });

  it("--json prints one parseable object per step and a summary, nothing else", async () => {
    door = await startFakeDoor();
    const run = await runMagnt(["smoke", door.url, "--legacy", "--json"]);
    expect(run.code).toBe(0);
    const lines = parseLines(run.stdout);
    expect(lines.map((line) => line.step ?? "summary")).toEqual(["connect", "list_tools", "list_resources", "read_profile", "call_about_magnt", "summary"]);
    expect(lines[0]).toEqual({ step: "connect", status: "passed", protocol_version: "2025-11-25", era: "legacy" });
    expect(lines.at(-1)).toEqual({ summary: { ok: true, steps: 5, failed: 0 } });
  });

  it("auto mode (the default) reaches 2026-07-28", async () => {
    door = await startFakeDoor();
    const run = await runMagnt(["smoke", door.url, "--json", ...ALL_FLAGS]);
    expect(run.code).toBe(0);
    expect(parseLines(run.stdout)[0]).toEqual({ step: "connect", status: "passed", protocol_version: "2026-07-28", era: "modern" });
  });

  it("auto mode against a door that only speaks 2025 fails the connect step (exit 1)", async () => {
    door = await startFakeDoor({ legacyOnly: true });
    const run = await runMagnt(["smoke", door.url, "--json"]);
    expect(run.code).toBe(1);
    expect(parseLines(run.stdout)[0]).toMatchObject({ step: "connect", status: "failed", message: expect.stringContaining("expected 2026-07-28 (modern)") });
  });
});

describe("failing steps", () => {
  it("an owner tool in the public list fails list_tools; later steps are skipped; exit 1", async () => {
    door = await startFakeDoor({ tools: [...PUBLIC_TOOL_NAMES, OWNER_TOOL_NAMES[0]] });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--json", ...ALL_FLAGS]);
    expect(run.code).toBe(1);
    const lines = parseLines(run.stdout);
    expect(lines[1]).toMatchObject({ step: "list_tools", status: "failed" });
    expect(lines.slice(2, -2).every((line) => line.status === "skipped")).toBe(true);
    expect(lines.at(-2)).toEqual({ summary: { ok: false, steps: 12, failed: 1 } });
    expect(lines.at(-1)).toEqual({ error: { code: "check_failed", message: expect.stringContaining("list_tools") } });
  });

  it("fetch_contact_reply is allowed and reported as dialogue: true", async () => {
    door = await startFakeDoor({ tools: [...PUBLIC_TOOL_NAMES, TOOL_FETCH_REPLY] });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--json"]);
    expect(run.code).toBe(0);
    expect(parseLines(run.stdout)[1]).toMatchObject({ step: "list_tools", dialogue: true });
  });

  it("a missing tool fails list_tools", async () => {
    door = await startFakeDoor({ tools: PUBLIC_TOOL_NAMES.slice(0, 3) });
    const run = await runMagnt(["smoke", door.url, "--legacy"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("smoke failed at step list_tools");
  });

  it("about_magnt differing from the profile fails call_about_magnt", async () => {
    door = await startFakeDoor({ about: () => ({ ...correctBehaviour().profile, name: "OTHER" }) });
    const run = await runMagnt(["smoke", door.url, "--legacy"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/✘ call_about_magnt/);
  });

  it("not_saved fails propose_contact (storage missing)", async () => {
    door = await startFakeDoor({ propose: () => ({ status: "not_saved", code: "storage_unavailable" }) });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--submit-test", "--json"]);
    expect(run.code).toBe(1);
    expect(parseLines(run.stdout)[5]).toEqual({ step: "propose_contact", status: "failed", message: "status not_saved (expected accepted_for_human_review)" });
  });

  it("a retry that is not a duplicate fails propose_contact_retry", async () => {
    const base = correctBehaviour();
    door = await startFakeDoor({ propose: (args) => ({ ...base.propose({ ...args, submission_id: Math.random() }) }) });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--submit-test"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("propose_contact_retry");
  });

  it("storage_error fails search_before (migrations not applied)", async () => {
    door = await startFakeDoor({ search: () => ({ status: "storage_error", message: "shared memory is unavailable" }) });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--shared-memory-test"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("smoke failed at step search_before");
  });

  it("a test signal visible to the ordinary cohort fails search_ordinary", async () => {
    const base = correctBehaviour();
    door = await startFakeDoor({ search: (args) => base.search({ ...args, is_test: true }), contribute: base.contribute });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--shared-memory-test"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("search_ordinary");
  });

  it("an HTTP 500 during connect is a check failure (exit 1), not unreachable", async () => {
    door = await startFakeDoor({ httpStatus: 500 });
    const run = await runMagnt(["smoke", door.url, "--json"]);
    expect(run.code).toBe(1);
    expect(parseLines(run.stdout)[0]).toMatchObject({ step: "connect", status: "failed" });
  });

  it("never prints task tokens, even when the server echoes them in an error", async () => {
    let seen: string[] = [];
    door = await startFakeDoor({
      search: (args) => {
        seen = [String(args.goal), String(args.blocker), String(args.tried)];
        return { status: `storage_error ${String(args.goal)}`, message: `echo ${String(args.goal)}` };
      },
    });
    const run = await runMagnt(["smoke", door.url, "--legacy", "--shared-memory-test"]);
    expect(run.code).toBe(1);
    expect(seen).toHaveLength(3);
    for (const token of seen.join(" ").split(" ")) {
      expect(run.stdout).not.toContain(token);
      expect(run.stderr).not.toContain(token);
    }
  });
});

describe("unreachable and options", () => {
  it("a closed port → exit 3 with a clear message and the JSON error last", async () => {
    const port = await closedPort();
    const run = await runMagnt(["smoke", `http://127.0.0.1:${port}/mcp`, "--json"]);
    expect(run.code).toBe(3);
    const lines = parseLines(run.stdout);
    expect(lines[0]).toMatchObject({ step: "connect", status: "failed", message: expect.stringContaining("ECONNREFUSED") });
    expect(lines.at(-1)).toEqual({ error: { code: "environment", message: expect.stringContaining(`cannot reach http://127.0.0.1:${port}/mcp`) } });
  });

  it("a server that accepts connections but never answers → connect timeout → exit 3", async () => {
    const silent = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const run = await runMagnt(["smoke", `http://127.0.0.1:${port}/mcp`, "--timeout", "300", "--json"]);
      expect(run.code).toBe(3);
      expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining("no HTTP answer within 300 ms") } });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it.each([["--timeout", "abc"], ["--timeout", "0"]])("%s %s → exit 2", async (...option) => {
    const run = await runMagnt(["smoke", "http://127.0.0.1:1/mcp", ...option]);
    expect(run.code).toBe(2);
  });

  it.each(["ftp://example.com/mcp", "not a url"])("url %s → exit 2", async (url) => {
    const run = await runMagnt(["smoke", url]);
    expect(run.code).toBe(2);
  });
});
