/**
 * (b) The built CLI's `smoke` as a child process against `magnt dev`: plain,
 * `--submit-test`, `--shared-memory-test`, both in auto (2026-07-28) and
 * `--legacy` (2025-11-25) modes; `--json` lines; a wrong URL → exit 3; the
 * synthetic task text, the test contact's summary and the profile's prose
 * never appear in any smoke output (canary, checked against what the door
 * actually stored and serves); SIGTERM to `magnt dev` is forwarded and ends
 * the door with exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { PROFILE_RESOURCE_URI } from "../../worker/contracts";
import { freePort, jsonLines, magnt, MAGNT_BIN, portAnswers, removeTempDirs, startDoor, stopAllDoors, tempDir, type CliRun, type Door } from "./helpers";

let door: Door | undefined;
let state = "";
/** Every smoke run of this file, for the canary check. */
const outputs: CliRun[] = [];

async function smoke(args: string[]): Promise<CliRun> {
  const run = await magnt(["smoke", door!.mcp, ...args]);
  outputs.push(run);
  return run;
}

beforeAll(async () => {
  state = tempDir("smoke");
  const port = await freePort();
  door = await startDoor(process.execPath, [MAGNT_BIN, "dev", "--port", String(port), "--persist-to", state], port);
});

afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

describe("magnt smoke against magnt dev", () => {
  it("plain (auto): five steps pass at 2026-07-28", async () => {
    const run = await smoke([]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("protocol_version: 2026-07-28  era: modern");
    expect(run.stdout).toContain("smoke passed (5 steps)");
  });

  it("--submit-test (auto)", async () => {
    const run = await smoke(["--submit-test"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/propose_contact_retry\s+contact_id: mc_[0-9a-f-]{36}\s+duplicate_retry_verified: true/);
  });

  it("--shared-memory-test (auto)", async () => {
    const run = await smoke(["--shared-memory-test"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("test_cohort_match_verified: true");
    expect(run.stdout).toContain("ordinary_cohort_isolated: true");
  });

  it("both flags, --json: every line parses; steps, then the summary", async () => {
    const run = await smoke(["--submit-test", "--shared-memory-test", "--json"]);
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines).toHaveLength(13);
    expect(lines.slice(0, 12).every((line) => line.status === "passed")).toBe(true);
    expect(lines[0]).toEqual({ step: "connect", status: "passed", protocol_version: "2026-07-28", era: "modern" });
    expect(lines[8]).toMatchObject({ step: "contribute", result: "accepted", signal_id: expect.stringMatching(/^ts_/) });
    expect(lines[9]).toMatchObject({ step: "contribute_retry", result: "duplicate", signal_id: lines[8]!.signal_id });
    expect(lines[12]).toEqual({ summary: { ok: true, steps: 12, failed: 0 } });
  });

  it("--legacy with both flags negotiates 2025-11-25 and passes", async () => {
    const run = await smoke(["--legacy", "--submit-test", "--shared-memory-test", "--json"]);
    expect(run.code).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines[0]).toEqual({ step: "connect", status: "passed", protocol_version: "2025-11-25", era: "legacy" });
    expect(lines.at(-1)).toEqual({ summary: { ok: true, steps: 12, failed: 0 } });
  });

  it("a wrong URL → exit 3 with a clear message", async () => {
    const port = await freePort();
    const run = await magnt(["smoke", `http://127.0.0.1:${port}/mcp`]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`magnt: smoke failed at step connect: cannot reach http://127.0.0.1:${port}/mcp: ECONNREFUSED`);
    expect(run.stdout).toMatch(/list_tools\s+skipped/);
  });

  it("canary: no synthetic task token appears in any smoke output", async () => {
    const review = await magnt(["review", "observed", "--include-tests", "--limit", "1000", "--json", "--persist-to", state]);
    expect(review.code).toBe(0);
    const observed = JSON.parse(review.stdout) as { goal: string; blocker: string | null; tried: string | null }[];
    // Three searches per --shared-memory-test run, three such runs above.
    expect(observed.length).toBeGreaterThanOrEqual(9);
    const tokens = observed.flatMap((row) => [row.goal, row.blocker ?? "", row.tried ?? ""].join(" ").split(/\s+/)).filter((token) => token.length === 12);
    expect(tokens.length).toBeGreaterThanOrEqual(9 * 11);
    for (const run of outputs) {
      for (const token of tokens) {
        expect(run.stdout).not.toContain(token);
        expect(run.stderr).not.toContain(token);
      }
    }
  });

  it("canary: neither the test contact's summary nor the profile's prose appears in any smoke output", async () => {
    const review = await magnt(["review", "contacts", "--include-tests", "--limit", "1000", "--json", "--persist-to", state]);
    expect(review.code).toBe(0);
    const contacts = (JSON.parse(review.stdout) as { found_via: string | null; summary: string }[]).filter((row) => row.found_via === "magnt smoke");
    // --submit-test ran three times above (auto, both flags --json, --legacy).
    expect(contacts.length).toBeGreaterThanOrEqual(3);
    const prose = proseOf(await readProfile(door!.mcp));
    expect(prose.length).toBeGreaterThanOrEqual(3);
    const fragments = [...new Set([...contacts.map((row) => row.summary), ...prose].flatMap(fourWordWindows))];
    for (const run of outputs) {
      for (const fragment of fragments) {
        expect(run.stdout).not.toContain(fragment);
        expect(run.stderr).not.toContain(fragment);
      }
    }
  });

  it("SIGTERM to magnt dev is forwarded to Wrangler: the door stops and magnt exits 0", async () => {
    const { child, port } = door!;
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect.poll(() => portAnswers(port), { timeout: 10_000 }).toBe(false);
  });
});

/** The profile exactly as the door serves it, read with the official client (no smoke code involved). */
async function readProfile(mcpUrl: string): Promise<unknown> {
  const client = new Client({ name: "e2e-canary", version: "0.0.0" }, { versionNegotiation: { mode: "legacy" } });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
    const first = (await client.readResource({ uri: PROFILE_RESOURCE_URI })).contents[0];
    if (first === undefined || !("text" in first) || typeof first.text !== "string") throw new Error("profile has no text");
    return JSON.parse(first.text) as unknown;
  } finally {
    await client.close();
  }
}

/** Every string of four or more words in a JSON value: the profile's prose. */
function proseOf(value: unknown): string[] {
  if (typeof value === "string") return value.trim().split(/\s+/).length >= 4 ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(proseOf);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(proseOf);
  return [];
}

/** Every run of four consecutive words (a partial echo counts as a leak too). */
function fourWordWindows(text: string): string[] {
  const words = text.split(/\s+/).filter((word) => word !== "");
  return Array.from({ length: Math.max(0, words.length - 3) }, (_, i) => words.slice(i, i + 4).join(" "));
}
