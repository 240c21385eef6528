/**
 * Public discovery through the split deployment equals the monolith's (00 §3,
 * 02 §3–§7, 01 §7): the MCP answers core gives through the gateway, the cards
 * the gateway serves itself and the gateway probe, compared byte for byte with
 * the monolith in the same runtime, and never an owner tool. Also the gateway
 * probe's view of core (01 §7): reachable, missing, throwing or answering badly.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { OWNER_TOOL_NAMES, PUBLIC_TOOL_NAMES } from "../../worker/contracts/tools";
import { readMessages } from "../helpers/mcp";
import { callGateway, callMonolith, coreTaps, MCP_URL, modernBody, modernHeaders, ORIGIN } from "./helpers";

type Json = Record<string, unknown>;

const OWNER_FLAGS_ON = { OWNER_MCP_ENABLED: "true", OWNER_MCP_WRITE_ENABLED: "true" };
const DOCUMENTS = [
  "/mcp/server-card",
  "/.well-known/mcp/server-card.json",
  "/.well-known/ai-catalog.json",
  "/.well-known/agent-card.json",
  "/.well-known/agent.json",
];
/** Modern (2026-07-28) discovery requests: [method, params]. */
const MODERN_REQUESTS: [string, Json][] = [
  ["server/discover", {}],
  ["tools/list", {}],
  ["resources/list", {}],
  ["resources/read", { uri: "magnt://profile" }],
  ["tools/call", { name: "about_magnt", arguments: {} }],
];
/** Headers that must agree between the two deployments (not Date-like ones). */
const COMPARED_HEADERS = ["content-type", "cache-control", "x-magnt-mcp-version", "x-magnt-observer", "access-control-allow-origin", "vary", "allow"];

function comparedHeaders(response: Response): Json {
  return Object.fromEntries(COMPARED_HEADERS.map((name) => [name, response.headers.get(name)]));
}

/** Fails when any owner tool name appears in a public document. */
function expectNoOwnerTool(text: string): void {
  for (const name of OWNER_TOOL_NAMES) expect(text).not.toContain(name);
  // `owner_release` is the probe's release marker (01 §7); no other owner_ word is public.
  for (const word of text.match(/owner_[a-z_]+/g) ?? []) expect(word).toBe("owner_release");
  expect(text).not.toContain("owner.magnt.ru");
}

function modernPost(method: string, params: Json): RequestInit {
  const name = typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
  return { method: "POST", headers: modernHeaders(method, name), body: modernBody(method, params) };
}

function legacyPost(body: Json): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  };
}

async function connect(fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>, mode: "legacy" | "auto") {
  const client = new Client({ name: "split-compare", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch }));
  return client;
}

describe.each([
  ["owner flags off", {}],
  ["owner flags on at the gateway", OWNER_FLAGS_ON],
])("gateway discovery equals the monolith's (%s)", (_label, gatewayOverrides) => {
  it.each(MODERN_REQUESTS)("modern %s: byte-identical answer", async (method, params) => {
    const viaGateway = await callGateway("/mcp", modernPost(method, params), gatewayOverrides);
    const viaMonolith = await callMonolith("/mcp", modernPost(method, params));
    expect(viaGateway.status).toBe(200);
    expect(viaGateway.status).toBe(viaMonolith.status);
    expect(comparedHeaders(viaGateway)).toEqual(comparedHeaders(viaMonolith));
    const body = await viaGateway.text();
    expect(body).toBe(await viaMonolith.text());
    expect(body).not.toContain('"error"');
    expectNoOwnerTool(body);
  });

  it("legacy initialize and tools/list: the same messages", async () => {
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "legacy", version: "1" } } };
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    for (const body of [initialize, list]) {
      const viaGateway = await callGateway("/mcp", legacyPost(body), gatewayOverrides);
      const viaMonolith = await callMonolith("/mcp", legacyPost(body));
      expect(comparedHeaders(viaGateway)).toEqual(comparedHeaders(viaMonolith));
      const messages = await readMessages(viaGateway);
      expect(messages).toEqual(await readMessages(viaMonolith));
      expect(messages[0]!.result).toBeDefined();
      expectNoOwnerTool(JSON.stringify(messages));
    }
  });

  it.each(DOCUMENTS)("GET and HEAD %s: byte-identical document and headers", async (path) => {
    for (const method of ["GET", "HEAD"]) {
      const viaGateway = await callGateway(path, { method }, gatewayOverrides);
      const viaMonolith = await callMonolith(path, { method });
      expect(viaGateway.status, `${method} ${path}`).toBe(200);
      expect(comparedHeaders(viaGateway)).toEqual(comparedHeaders(viaMonolith));
      const text = await viaGateway.text();
      expect(text).toBe(await viaMonolith.text());
      if (method === "GET") expect(text.length).toBeGreaterThan(0);
      expectNoOwnerTool(text);
    }
  });

  it("the probe differs from the monolith's only in role, service, time and core_reachable", async () => {
    const viaGateway = await callGateway("/__magnt_probe", undefined, gatewayOverrides);
    const viaMonolith = await callMonolith("/__magnt_probe");
    expect(comparedHeaders(viaGateway)).toEqual(comparedHeaders(viaMonolith));
    const text = await viaGateway.text();
    expectNoOwnerTool(text);
    const gatewayProbe = JSON.parse(text) as Json;
    const monolithProbe = JSON.parse(await viaMonolith.text()) as Json;
    expect(gatewayProbe).toMatchObject({ role: "gateway", service: "magnt-observer", core_reachable: true });
    expect(monolithProbe).toMatchObject({ role: "monolith", service: "magnt-observer" });
    expect(monolithProbe).not.toHaveProperty("core_reachable");
    const strip = ({ role: _r, service: _s, time: _t, core_reachable: _c, ...rest }: Json) => rest;
    expect(JSON.stringify(strip(gatewayProbe), null, 2)).toBe(JSON.stringify(strip(monolithProbe), null, 2));
  });

  it("the official client sees the same server through both", async () => {
    for (const mode of ["legacy", "auto"] as const) {
      const gateway = await connect((input, init) => callGateway(new Request(input, init), undefined, gatewayOverrides), mode);
      const monolith = await connect((input, init) => callMonolith(new Request(input, init)), mode);
      expect(gateway.getNegotiatedProtocolVersion()).toBe(monolith.getNegotiatedProtocolVersion());
      expect(gateway.getServerVersion()).toEqual(monolith.getServerVersion());
      expect(gateway.getInstructions()).toBe(monolith.getInstructions());
      const { tools } = await gateway.listTools();
      expect(tools).toEqual((await monolith.listTools()).tools);
      expect(tools.map((tool) => tool.name)).toEqual([...PUBLIC_TOOL_NAMES]);
      await gateway.close();
      await monolith.close();
    }
  });
});

describe("gateway probe (01 §7)", () => {
  const UNREACHABLE = { dialogue_enabled: false, contact_storage_configured: false, shared_memory_storage_configured: false, core_reachable: false };

  it("reports role gateway, service magnt-observer, core's storage facts and core_reachable true", async () => {
    const response = await callGateway("/__magnt_probe", { headers: { "user-agent": "ClaudeBot/1.0" }, cf: { country: "DE", colo: "FRA" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const text = await response.text();
    const probe = JSON.parse(text) as Json;
    expect(text).toBe(JSON.stringify(probe, null, 2));
    expect(probe).toMatchObject({
      ok: true,
      role: "gateway",
      service: "magnt-observer",
      contact_storage_configured: true,
      shared_memory_storage_configured: true,
      dialogue_enabled: false,
      core_reachable: true,
      origin: "raw.githubusercontent.com/redkov-dev/cortex/main",
      host: "magnt.ru",
      path: "/__magnt_probe",
      country: "DE",
      colo: "FRA",
    });
    // The facts came from core's own probe, asked over CORE.
    expect((await coreTaps().requests()).map(({ method, url }) => `${method} ${url}`)).toEqual([`GET ${ORIGIN}/__magnt_probe`]);
  });

  it("HEAD: the same headers, no body", async () => {
    const response = await callGateway("/__magnt_probe", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await response.text()).toBe("");
  });

  const failures: [string, Record<string, unknown>][] = [
    ["CORE missing", { CORE: undefined }],
    ["CORE throwing", { CORE: { fetch: () => { throw new Error("CANARY-core-down"); } } }],
    ["CORE rejecting", { CORE: { fetch: () => Promise.reject(new Error("CANARY-core-down")) } }],
    ["core answering 500", { CORE: { fetch: async () => new Response(JSON.stringify({ contact_storage_configured: true }), { status: 500 }) } }],
    ["core answering 404", { CORE: { fetch: async () => new Response("Not found", { status: 404 }) } }],
    ["core answering 200 with a non-JSON body", { CORE: { fetch: async () => new Response("<html>", { status: 200 }) } }],
  ];

  it.each(failures)("%s → core_reachable false and every storage fact false", async (_name, overrides) => {
    const response = await callGateway("/__magnt_probe", undefined, overrides);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain("CANARY");
    expect(JSON.parse(text)).toMatchObject({ ok: true, role: "gateway", service: "magnt-observer", ...UNREACHABLE });
  });

  it("takes only core's three facts, each only when exactly true, and copies nothing else", async () => {
    const stubCore = {
      fetch: async () =>
        Response.json({
          ok: true,
          role: "core",
          service: "magnt-core",
          dialogue_enabled: "true",
          contact_storage_configured: true,
          shared_memory_storage_configured: 1,
          core_reachable: false,
          host: "core.internal",
          country: "ZZ",
          secret_count: 42,
        }),
    };
    const probe = (await (await callGateway("/__magnt_probe", undefined, { CORE: stubCore })).json()) as Json;
    expect(probe).toMatchObject({
      role: "gateway",
      service: "magnt-observer",
      dialogue_enabled: false,
      contact_storage_configured: true,
      shared_memory_storage_configured: false,
      core_reachable: true,
      host: "magnt.ru",
      country: "",
    });
    expect(probe).not.toHaveProperty("secret_count");
  });
});
