/**
 * The door's MCP answers byte for byte (issue 21 item 3): the snapshot file
 * next to this test was recorded from the code before the per-isolate caches
 * (schemas, server, `tools/list`) and the header-only answer path, so every
 * later run proves those changes left the bytes alone — on the modern lane
 * (2026-07-28, JSON) and the 2025 lane (initialize handshake, SSE), for
 * `tools/list`, `about_magnt`, a search, errors and `initialize`, with the
 * dialogue flag off and on.
 *
 * Only the per-call random `search_receipt` is replaced by a placeholder;
 * everything else (status, content type, the door's headers, the body text
 * including key order and whitespace) is compared as sent.
 */
import { describe, expect, it } from "vitest";
import { callDoor } from "../helpers/door";
import { modernRequest, rawPost } from "../helpers/mcp";
import { seedSignal } from "../helpers/signals";

const LEGACY = "2025-11-25";
const DIALOGUE_ON = { DIALOGUE_ENABLED: "true" } as const;

/** What is compared: the answer as a client sees it, the random receipt masked. */
async function answer(response: Response): Promise<string> {
  const headers = ["content-type", "cache-control", "x-magnt-mcp-version", "access-control-allow-origin", "vary", "mcp-protocol-version"]
    .map((name) => `${name}: ${response.headers.get(name) ?? "-"}`)
    .join("\n");
  const body = (await response.text()).replace(/sr_[0-9a-f]{32}/g, "sr_<receipt>");
  return `${response.status}\n${headers}\n\n${body}`;
}

function legacyBody(method: string, params: Record<string, unknown>, id: number | null = 1): string {
  return JSON.stringify(id === null ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", id, method, params });
}

const legacyHeaders = { "mcp-protocol-version": LEGACY };

let seeded = false;

/** The same two signals for every search here (seeded once: storage persists across this file's tests). */
async function seedFixture(): Promise<void> {
  if (seeded) return;
  seeded = true;
  await seedSignal({ signalId: "ts_fixture-1", goal: "zebrafixture deploy a worker", blocker: "zebrafixture binding missing", tried: "redeploy", learned: "bind first", createdAt: "2026-01-01T00:00:00.000Z" });
  await seedSignal({ signalId: "ts_fixture-2", goal: "zebrafixture migrate database", createdAt: "2026-01-02T00:00:00.000Z" });
}

describe("answer bytes, modern lane (2026-07-28)", () => {
  it.each([
    ["tools/list", {}],
    ["tools/list, origin", { headers: { origin: "https://magnt.ru" } }],
    ["tools/list, dialogue on", { overrides: DIALOGUE_ON }],
    ["server/discover", {}],
  ] as const)("%s", async (label, options) => {
    const method = label.split(",")[0]!;
    expect(await answer(await modernRequest(method, {}, options))).toMatchSnapshot();
  });

  it("about_magnt (flag off and on)", async () => {
    expect(await answer(await modernRequest("tools/call", { name: "about_magnt", arguments: {} }))).toMatchSnapshot();
    expect(await answer(await modernRequest("tools/call", { name: "about_magnt", arguments: {} }, { overrides: DIALOGUE_ON }))).toMatchSnapshot();
  });

  it("search_shared_experience: matches, no match, invalid arguments", async () => {
    await seedFixture();
    expect(await answer(await modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: "zebrafixture deploy" } }))).toMatchSnapshot();
    expect(await answer(await modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: "quokkanothing" } }))).toMatchSnapshot();
    expect(await answer(await modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: 7 } }))).toMatchSnapshot();
    expect(await answer(await modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: "x", extra: 1 } }))).toMatchSnapshot();
  });

  it("errors: unknown tool, unknown method, resource read, malformed JSON, wrong header", async () => {
    expect(await answer(await modernRequest("tools/call", { name: "no_such_tool", arguments: {} }))).toMatchSnapshot();
    expect(await answer(await modernRequest("prompts/list", {}))).toMatchSnapshot();
    expect(await answer(await modernRequest("resources/read", { uri: "magnt://profile" }))).toMatchSnapshot();
    expect(await answer(await modernRequest("resources/list", {}))).toMatchSnapshot();
    expect(await answer(await rawPost("{not json", { "mcp-protocol-version": "2026-07-28" }))).toMatchSnapshot();
    expect(await answer(await modernRequest("tools/list", {}, { headers: { "mcp-method": "tools/call" } }))).toMatchSnapshot();
  });
});

describe("answer bytes, 2025 lane", () => {
  const initialize = (version: string) =>
    rawPost(legacyBody("initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "bytes-legacy", version: "1.0" } }));

  it("initialize at each 2025 revision and an unknown one", async () => {
    for (const version of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-01-01"]) expect(await answer(await initialize(version))).toMatchSnapshot();
  });

  it("initialized notification, tools/list, about_magnt, search, errors", async () => {
    await seedFixture();
    expect(await answer(await rawPost(legacyBody("notifications/initialized", {}, null), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("tools/list", {}), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("tools/list", {}), legacyHeaders, DIALOGUE_ON))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("tools/call", { name: "about_magnt", arguments: {} }), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("tools/call", { name: "search_shared_experience", arguments: { goal: "zebrafixture migrate" } }), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("tools/call", { name: "search_shared_experience", arguments: {} }), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("tools/call", { name: "no_such_tool", arguments: {} }), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("resources/read", { uri: "magnt://profile" }), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(legacyBody("ping", {}), legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost(`[${legacyBody("tools/list", {})},${legacyBody("ping", {}, 2)}]`, legacyHeaders))).toMatchSnapshot();
    expect(await answer(await rawPost("{not json", legacyHeaders))).toMatchSnapshot();
  });

  it("a JSON-only Accept header and GET /mcp", async () => {
    expect(await answer(await rawPost(legacyBody("tools/list", {}), { ...legacyHeaders, accept: "application/json" }))).toMatchSnapshot();
    expect(await answer(await callDoor("/mcp", { method: "GET", headers: { accept: "text/event-stream" } }))).toMatchSnapshot();
  });
});
