/**
 * What a user does (issue 3): start the door as the README says, then connect
 * over real HTTP with MCP clients none of us wrote — the v2 client pinned to
 * 2026-07-28 and in auto mode, and the 2025-generation v1 client. The door's
 * own log stream (wrangler dev's output) is checked for every text sent.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLIC_TOOL_NAMES } from "../../worker/contracts";
import { freePort, removeTempDirs, startDoorWithNpm, stopAllDoors, tempDir, waitFor, type Door } from "./helpers";

let door: Door;
const canaries: string[] = [];
const canary = (label: string) => {
  const value = `CANARY${label}${crypto.randomUUID().replaceAll("-", "")}`;
  canaries.push(value);
  return value;
};

beforeAll(async () => {
  door = await startDoorWithNpm(await freePort(), tempDir("mcp-http"));
});

afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

async function v2(mode: "auto" | { pin: string }) {
  const client = new Client({ name: "e2e-v2", version: "2.4.0" }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(door.mcp)));
  return client;
}

async function v1() {
  const client = new ClientV1({ name: "e2e-v1", version: "1.32.2" });
  await client.connect(new TransportV1(new URL(door.mcp)));
  return client;
}

type AnyClient = Awaited<ReturnType<typeof v2>> | Awaited<ReturnType<typeof v1>>;

describe.each([
  ["v2 pinned 2026-07-28", () => v2({ pin: "2026-07-28" })],
  ["v2 auto", () => v2("auto")],
  ["v1 (2025-11-25)", () => v1()],
])("%s over real HTTP", (_label, connect) => {
  it("lists the public tools, reads the profile and gets a receipt that a retry repeats", async () => {
    const client: AnyClient = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...PUBLIC_TOOL_NAMES]);
    const read = await client.readResource({ uri: "magnt://profile" });
    const profile = JSON.parse((read.contents[0] as { text: string }).text);
    expect(profile.contact.mcp).toBe(`http://localhost:${door.port}/mcp`);
    const args = { summary: canary("summary"), reply_to: canary("replyto"), submission_id: crypto.randomUUID(), is_test: true };
    const first = (await client.callTool({ name: "propose_contact", arguments: args })).structuredContent as Record<string, unknown>;
    expect(first).toMatchObject({ status: "accepted_for_human_review", duplicate: false });
    const retry = (await client.callTool({ name: "propose_contact", arguments: args })).structuredContent as Record<string, unknown>;
    expect(retry).toMatchObject({ contact_id: first.contact_id, duplicate: true });
    await client.close();
  });
});

describe("retry semantics over real HTTP", () => {
  it("50 concurrent identical submissions → one receipt, exactly one duplicate: false", async () => {
    const client = await v2({ pin: "2026-07-28" });
    const args = { summary: canary("concurrent"), submission_id: crypto.randomUUID(), is_test: true };
    const results = await Promise.all(Array.from({ length: 50 }, () => client.callTool({ name: "propose_contact", arguments: args })));
    const receipts = results.map((result) => result.structuredContent as Record<string, unknown>);
    expect(new Set(receipts.map((receipt) => receipt.contact_id)).size).toBe(1);
    expect(receipts.filter((receipt) => receipt.duplicate === false)).toHaveLength(1);
    await client.close();
  });

  it("a shared-memory round trip works in the test cohort", async () => {
    const client = await v2("auto");
    const goal = `${canary("goal")} e2e roundtrip`;
    const before = (await client.callTool({ name: "search_shared_experience", arguments: { goal, is_test: true } })).structuredContent as Record<string, any>;
    expect(before.status).toBe("no_relevant_experience");
    const published = (await client.callTool({
      name: "contribute_task_signal",
      arguments: { goal, learned: canary("learned"), is_test: true, search_receipt: before.search_receipt },
    })).structuredContent as Record<string, any>;
    expect(published.status).toBe("accepted");
    const after = (await client.callTool({ name: "search_shared_experience", arguments: { goal, is_test: true } })).structuredContent as Record<string, any>;
    expect(after.matches.map((match: { signal_id: string }) => match.signal_id)).toContain(published.signal_id);
    await client.close();
  });
});

describe("the door's real log stream", () => {
  it("has one JSON event per request and never any text sent in a tool argument", async () => {
    // 3 clients × (first call + retry) + 50 concurrent calls: one event each.
    const EXPECTED_PROPOSE_EVENTS = 3 * 2 + 50;
    const proposeEvents = () =>
      door
        .output()
        .split("\n")
        .map((line) => line.slice(line.indexOf("{")))
        .filter((line) => line.startsWith('{"event_id"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((event) => event.tool_name === "propose_contact");
    // wrangler flushes the worker's lines asynchronously: wait for them (bounded), never a fixed sleep.
    const events = await waitFor(
      () => {
        const seen = proposeEvents();
        return seen.length >= EXPECTED_PROPOSE_EVENTS ? seen : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, describe: () => `${proposeEvents().length} propose_contact events so far` },
    );
    expect(events).toHaveLength(EXPECTED_PROPOSE_EVENTS);
    expect(new Set(events.map((event) => event.event_id)).size).toBe(EXPECTED_PROPOSE_EVENTS);
    const output = door.output();
    expect(canaries.length).toBeGreaterThan(0);
    for (const value of canaries) expect(output).not.toContain(value);
  });
});
