/**
 * The kept `tools/list` answers (worker/mcp/listing-cache.ts, 02 §3): a kept
 * answer is byte for byte what the SDK answers the same request, for any id,
 * on both lanes, with the door's own headers for the request's origin; a
 * request the SDK would refuse is never answered from it; telemetry is the
 * same either way. The oracle is the same door with nothing kept (its serving
 * has no `answerKey`), so every listing there is the SDK's own answer.
 */
import { describe, expect, it } from "vitest";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { captureConsole, doorEnv, ORIGIN } from "../helpers/door";
import { MODERN, modernMeta } from "../helpers/mcp";
import type { Env } from "../../worker/config/env";
import { createDoor } from "../../worker/edge/pipeline";
import { publicRoutes } from "../../worker/entries/public-routes";
import { localProbe } from "../../worker/site/probe";
import { dialogueServed, publicServing } from "../../worker/mcp/public-server";
import { serveMcp, type McpServing } from "../../worker/mcp/serve";
import { scopeD1 } from "../../worker/storage/d1-retry";

type Overrides = Partial<Record<keyof Env, unknown>>;

/** A monolith whose public serving is `adapt`ed: with servers counted, or with nothing kept. */
function monolith(adapt: (serving: McpServing) => McpServing) {
  const door = createDoor(
    "monolith",
    publicRoutes({ mcpPost: (req) => serveMcp(req, adapt(publicServing(req))), mcpEventType: "mcp_request", probe: localProbe(dialogueServed) }),
    scopeD1,
  );
  return async (request: Request, overrides: Overrides = {}) => {
    const ctx = createExecutionContext();
    const response = await door.fetch(request, doorEnv(overrides), ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
}

/** A door that keeps listings under a key of its own (no other test's answers), counting the servers it builds. */
function keepingDoor() {
  const nonce = crypto.randomUUID();
  const counter = { servers: 0 };
  const fetch = monolith((serving) => ({
    ...serving,
    answerKey: `${serving.answerKey}\n${nonce}`,
    createServer: (info, onToolOutcome) => {
      counter.servers += 1;
      return serving.createServer(info, onToolOutcome);
    },
  }));
  return { fetch, counter };
}

/** The oracle: the SDK answers every listing. */
const sdkDoor = monolith((serving) => ({ ...serving, answerKey: undefined }));

/** Status, every header and the body, as a client receives them. */
async function wire(response: Response): Promise<string> {
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
  return `${response.status}\n${headers}\n\n${await response.text()}`;
}

const MODERN_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/list",
};
const LEGACY_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

function modernListing(id: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { ...MODERN_HEADERS, ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list", params: { _meta: modernMeta() } }),
  });
}

function modernAbout(id: unknown): Request {
  return new Request(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { ...MODERN_HEADERS, "mcp-method": "tools/call", "mcp-name": "about_magnt" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "about_magnt", arguments: {}, _meta: modernMeta() } }),
  });
}

function legacyAbout(id: unknown): Request {
  return new Request(`${ORIGIN}/mcp`, { method: "POST", headers: LEGACY_HEADERS, body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "about_magnt", arguments: {} } }) });
}

function legacyListing(id: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { ...LEGACY_HEADERS, ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list", params: {} }) });
}

const IDS = [1, 2, 42, 9007199254740991, -3, "abc", "", 'a "quoted" id with \\ and \u2028 and кириллица'] as const;

describe("kept tools/list answers", () => {
  it.each([
    ["tools/list, modern lane (JSON)", modernListing],
    ["tools/list, 2025 lane (SSE)", legacyListing],
    ["about_magnt, modern lane (JSON)", modernAbout],
    ["about_magnt, 2025 lane (SSE)", legacyAbout],
  ] as const)("%s: the same bytes as the SDK's for every id, and the SDK is asked once", async (_lane, listing) => {
    const { fetch, counter } = keepingDoor();
    for (const id of IDS) {
      const kept = await wire(await fetch(listing(id)));
      expect(kept).toBe(await wire(await sdkDoor(listing(id))));
    }
    // One listing per id kind (a number or a string): the SDK is asked once for each.
    expect(counter.servers).toBe(2);
  });

  it("answers with the door's headers for each request's origin, and per tool set and origin", async () => {
    const { fetch, counter } = keepingDoor();
    await fetch(modernListing(1));
    for (const headers of [{ origin: ORIGIN }, {}, { origin: "http://localhost:8787" }] as Record<string, string>[]) {
      expect(await wire(await fetch(modernListing(5, headers)))).toBe(await wire(await sdkDoor(modernListing(5, headers))));
    }
    expect(counter.servers).toBe(1);
    // Another tool set and another origin are other listings: each asks the SDK once.
    for (const overrides of [{ DIALOGUE_ENABLED: "true" }, { PUBLIC_ORIGIN: "https://door.example" }] as const) {
      for (const id of [1, 2]) expect(await wire(await fetch(modernListing(id), overrides))).toBe(await wire(await sdkDoor(modernListing(id), overrides)));
    }
    expect(counter.servers).toBe(3);
  });

  it("never answers a request the SDK refuses, though its body is that of a kept one", async () => {
    const { fetch, counter } = keepingDoor();
    await fetch(modernListing(1));
    await fetch(legacyListing(1));
    const refused = [
      modernListing(1, { "mcp-method": "tools/call" }),
      modernListing(1, { "mcp-protocol-version": "2025-11-25" }),
      legacyListing(1, { accept: "text/html" }),
      legacyListing(1, { "mcp-protocol-version": "1999-01-01" }),
    ];
    for (const request of refused) {
      // Asked twice: the second time takes the first time's path (the SDK again), never a kept answer.
      const built: number[] = [];
      for (let round = 0; round < 2; round += 1) {
        const before = counter.servers;
        const answer = await fetch(request.clone());
        built.push(counter.servers - before);
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(await wire(answer)).toBe(await wire(await sdkDoor(request.clone())));
      }
      expect(built[1]).toBe(built[0]);
    }
  });

  it("keeps nothing for ids the SDK refuses, batches and notifications", async () => {
    const { fetch, counter } = keepingDoor();
    const post = (body: unknown, headers: Record<string, string> = LEGACY_HEADERS) =>
      new Request(`${ORIGIN}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
    const bodies = [
      { jsonrpc: "2.0", id: 1.5, method: "tools/list", params: {} },
      { jsonrpc: "2.0", id: null, method: "tools/list", params: {} },
      { jsonrpc: "2.0", id: { nested: 1 }, method: "tools/list", params: {} },
      [{ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }],
    ];
    for (const body of bodies) {
      const built: number[] = [];
      for (let round = 0; round < 2; round += 1) {
        const before = counter.servers;
        expect(await wire(await fetch(post(body)))).toBe(await wire(await sdkDoor(post(body))));
        built.push(counter.servers - before);
      }
      expect(built[1]).toBe(built[0]);
    }
  });

  it.each([
    ["tools/list", modernListing, { mcp_method: "tools/list", tool_name: null }],
    ["about_magnt", modernAbout, { mcp_method: "tools/call", tool_name: "about_magnt", tool_result: "profile_returned", validation_status: "valid" }],
  ] as const)("records the same telemetry for a kept %s answer as for the SDK's", async (_label, make, expected) => {
    const { fetch, counter } = keepingDoor();
    const logs = captureConsole();
    await fetch(make(1));
    await fetch(make(2));
    expect(counter.servers).toBe(1);
    const [first, second] = logs.events().map(({ event_id: _id, time: _time, duration_ms: _duration, ...rest }) => rest);
    expect(logs.events()).toHaveLength(2);
    expect(second).toEqual(first);
    expect(first).toMatchObject({ ...expected, outcome: "success", rpc_error_code: null, status: 200 });
  });

  it("keeps a profile per storage binding, and never a call with arguments or of another tool", async () => {
    const { fetch, counter } = keepingDoor();
    for (const overrides of [{}, { CONTACTS: undefined }] as Overrides[]) {
      for (const id of [1, 2]) expect(await wire(await fetch(modernAbout(id), overrides))).toBe(await wire(await sdkDoor(modernAbout(id), overrides)));
    }
    expect(counter.servers).toBe(2);
    const call = (name: string, args: unknown) =>
      new Request(`${ORIGIN}/mcp`, { method: "POST", headers: LEGACY_HEADERS, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }) });
    for (const [name, args] of [["about_magnt", { extra: 1 }], ["search_shared_experience", { goal: "zebrakept nothing" }]] as const) {
      const before = counter.servers;
      for (let round = 0; round < 2; round += 1) await fetch(call(name, args));
      expect(counter.servers - before).toBe(2);
    }
  });

  it("holds a bounded number of listings, the oldest dropped first", async () => {
    const { fetch, counter } = keepingDoor();
    // Each client name is a listing of its own (clientInfo is part of the body the SDK checks).
    const named = (name: string) =>
      new Request(`${ORIGIN}/mcp`, {
        method: "POST",
        headers: MODERN_HEADERS,
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: modernMeta(name) } }),
      });
    for (let index = 0; index < 40; index += 1) await fetch(named(`client-${index}`));
    expect(counter.servers).toBe(40);
    await fetch(named("client-39"));
    expect(counter.servers).toBe(40);
    await fetch(named("client-0"));
    expect(counter.servers).toBe(41);
  });
});
