/**
 * The split route tables in the real runtime: the gateway (the pool's main
 * Worker, reached as `SELF`) row by row against 01 §2.1, with its own event
 * and whatever core saw for each row; and core (the magnt-core auxiliary
 * Worker, reached over the gateway's real `CORE` binding) against 01 §2.2.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MCP_DOOR_VERSION } from "../../worker/contracts/versions";
import { useSiteOrigin } from "../fakes/site-origin";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { readMessages } from "../helpers/mcp";
import { coreEvents, coreTaps, gatewaySelf, ORIGIN } from "./helpers";

interface Row {
  path: string;
  method: string;
  status: number;
  eventType: string;
  allow?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Answered by the (fake) site origin: its status and headers pass through unchanged. */
  upstream?: boolean;
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const TOOLS_LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
const CARD_PATHS = ["/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json"];
const AGENT_CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"];

/** 01 §2.1 for the gateway: `/mcp` is `http`, and only its POST reaches core. */
const GATEWAY_ROWS: Row[] = [
  { path: "/mcp", method: "POST", status: 200, eventType: "http", headers: MCP_HEADERS, body: TOOLS_LIST },
  { path: "/mcp", method: "OPTIONS", status: 204, eventType: "http" },
  { path: "/mcp", method: "OPTIONS", status: 204, eventType: "http", headers: { origin: ORIGIN, "access-control-request-method": "POST" } },
  { path: "/mcp", method: "GET", status: 405, eventType: "http", allow: "POST, OPTIONS" },
  { path: "/mcp", method: "DELETE", status: 405, eventType: "http", allow: "POST, OPTIONS" },
  { path: "/mcp", method: "PUT", status: 405, eventType: "http", allow: "POST, OPTIONS", body: TOOLS_LIST },
  { path: "/mcp", method: "HEAD", status: 405, eventType: "http", allow: "POST, OPTIONS" },
  ...CARD_PATHS.flatMap((path): Row[] => [
    { path, method: "GET", status: 200, eventType: "mcp_card" },
    { path, method: "HEAD", status: 200, eventType: "mcp_card" },
    { path, method: "OPTIONS", status: 204, eventType: "mcp_card" },
    { path, method: "POST", status: 405, eventType: "mcp_card", allow: "GET, HEAD, OPTIONS", body: "{}" },
    { path, method: "DELETE", status: 405, eventType: "mcp_card", allow: "GET, HEAD, OPTIONS" },
  ]),
  { path: "/mcp/other", method: "GET", status: 404, eventType: "http" },
  { path: "/mcp/other", method: "POST", status: 404, eventType: "http", headers: MCP_HEADERS, body: TOOLS_LIST },
  { path: "/mcp/", method: "GET", status: 404, eventType: "http" },
  { path: "/mcp/", method: "POST", status: 404, eventType: "http", headers: MCP_HEADERS, body: TOOLS_LIST },
  ...AGENT_CARD_PATHS.flatMap((path): Row[] => [
    { path, method: "GET", status: 200, eventType: "a2a_card" },
    { path, method: "HEAD", status: 200, eventType: "a2a_card" },
    { path, method: "OPTIONS", status: 204, eventType: "a2a_card" },
    { path, method: "POST", status: 405, eventType: "a2a_card", allow: "GET, HEAD, OPTIONS", body: "{}" },
    { path, method: "PUT", status: 405, eventType: "a2a_card", allow: "GET, HEAD, OPTIONS" },
  ]),
  ...["/a2a", "/a2a/"].flatMap((path): Row[] => [
    { path, method: "OPTIONS", status: 204, eventType: "a2a_request" },
    { path, method: "GET", status: 405, eventType: "a2a_request", allow: "POST, OPTIONS" },
    { path, method: "HEAD", status: 405, eventType: "a2a_request", allow: "POST, OPTIONS" },
    { path, method: "DELETE", status: 405, eventType: "a2a_request", allow: "POST, OPTIONS" },
  ]),
  { path: "/__magnt_probe", method: "POST", status: 405, eventType: "http", allow: "GET, HEAD", body: "" },
  { path: "/__magnt_probe", method: "OPTIONS", status: 405, eventType: "http", allow: "GET, HEAD" },
  { path: "/sse", method: "GET", status: 404, eventType: "http" },
  { path: "/sse", method: "POST", status: 404, eventType: "http", body: "{}" },
  { path: "/sse/stream", method: "GET", status: 404, eventType: "http" },
  { path: "/", method: "GET", status: 200, eventType: "http", upstream: true },
  { path: "/index.html", method: "HEAD", status: 200, eventType: "http", upstream: true },
  { path: "/MCP", method: "GET", status: 404, eventType: "http", upstream: true },
  { path: "/anything", method: "POST", status: 405, eventType: "http", allow: "GET, HEAD", body: "x" },
  { path: "/anything", method: "OPTIONS", status: 405, eventType: "http", allow: "GET, HEAD" },
  { path: "/anything", method: "PATCH", status: 405, eventType: "http", allow: "GET, HEAD" },
];

function requestInit(row: Pick<Row, "method" | "headers" | "body">): RequestInit {
  const init: RequestInit = { method: row.method };
  if (row.headers) init.headers = row.headers;
  if (row.body !== undefined) init.body = row.body;
  return init;
}

function forwardedRow(row: Pick<Row, "path" | "method">): boolean {
  return row.path === "/mcp" && row.method === "POST";
}

describe("gateway route table (01 §2.1, §2.3)", () => {
  it.each(GATEWAY_ROWS)("$method $path → $status ($eventType)", async (row) => {
    const site = useSiteOrigin({ "/index.html": { body: "<h1>site</h1>" } });
    const logs = captureConsole();
    const response = await gatewaySelf().fetch(new Request(`${ORIGIN}${row.path}`, requestInit(row)));

    expect(response.status).toBe(row.status);
    expect(response.headers.get("x-magnt-observer")).toBe("1");
    if (row.allow) expect(response.headers.get("allow")).toBe(row.allow);
    if (row.status >= 400 && !row.upstream) expect(response.headers.get("cache-control")).toBe("no-store");
    if (row.path === "/mcp") expect(response.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
    if (row.upstream) expect(response.headers.get("x-magnt-origin")).toBe("github-raw");
    if (row.upstream) expect(site.requests).toHaveLength(1);
    else expect(site.requests).toHaveLength(0);
    const messages = forwardedRow(row) ? await readMessages(response.clone()) : [];
    const body = await response.text();
    if (row.method === "HEAD") expect(body).toBe("");

    // Exactly one gateway event, schema-valid (the strict http schema admits no MCP field).
    const events = logs.events();
    expect(events).toHaveLength(1);
    const event = assertValidEvent(events[0]);
    expect(event).toMatchObject({ role: "gateway", event_type: row.eventType, status: row.status, method: row.method });
    if (row.status === 405) expect(event.outcome).toBe("method_not_allowed");

    const forwarded = forwardedRow(row);
    const seenByCore = await coreTaps().requests();
    const coreLog = await coreEvents();
    if (!forwarded) {
      // The gateway answers every other row itself: core is never asked.
      expect(event.forwarded_to_core).toBeUndefined();
      expect(seenByCore).toEqual([]);
      expect(coreLog).toEqual([]);
      return;
    }
    expect(event.forwarded_to_core).toBe(true);
    for (const field of ["mcp_protocol_version", "mcp_method", "client_name", "client_version", "tool_name", "resource_name", "rpc_error_code", "tool_result"]) {
      expect(event, field).not.toHaveProperty(field);
    }
    expect(seenByCore.map(({ method, url }) => ({ method, url }))).toEqual([{ method: "POST", url: `${ORIGIN}/mcp` }]);
    expect(coreLog).toHaveLength(1);
    const coreEvent = assertValidEvent(coreLog[0]);
    expect(coreEvent).toMatchObject({ role: "core", event_type: "mcp_request", method: "POST", path: "/mcp", status: 200, outcome: "success", mcp_method: "tools/list" });
    expect(coreEvent.forwarded_to_core).toBeUndefined();
    expect(messages.map((message) => (message.result?.tools as unknown[]).length)).toEqual([4]);
  });

  it("forwards a POST /mcp with an allowed browser Origin and returns core's CORS answer", async () => {
    const response = await gatewaySelf().fetch(
      new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, origin: ORIGIN }, body: TOOLS_LIST }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(response.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
    expect((await coreTaps().requests()).map(({ headers }) => new Headers(headers).get("origin"))).toEqual([ORIGIN]);
  });

  it("refuses a foreign Origin, a foreign Host and an oversized body at the gateway, before core", async () => {
    const logs = captureConsole();
    const foreign = await gatewaySelf().fetch(
      new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, origin: "https://evil.example" }, body: TOOLS_LIST }),
    );
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Origin not allowed" } });
    const host = await gatewaySelf().fetch(new Request("https://evil.example/mcp", { method: "POST", headers: MCP_HEADERS, body: TOOLS_LIST }));
    expect(host.status).toBe(403);
    const big = await gatewaySelf().fetch(new Request(`${ORIGIN}/mcp`, { method: "POST", headers: MCP_HEADERS, body: "x".repeat(24_577) }));
    expect(big.status).toBe(413);
    expect(big.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
    expect(logs.events().map((event) => event.outcome)).toEqual(["origin_rejected", "host_rejected", "body_too_large"]);
    expect(await coreTaps().requests()).toEqual([]);
    expect(await coreEvents()).toEqual([]);
  });
});

/** Every public path the gateway or monolith serves, none of which core serves. */
const CORE_404_PATHS = [
  "/",
  "/index.html",
  "/MCP",
  "/mcp/",
  "/mcp/other",
  ...CARD_PATHS,
  ...AGENT_CARD_PATHS,
  "/a2a",
  "/a2a/",
  "/sse",
  "/sse/stream",
  "/__magnt_probe/",
  "/anything",
];

describe("core route table (01 §2.2)", () => {
  const core = () => env.CORE!;

  it.each(CORE_404_PATHS)("answers 404 on %s to every method", async (path) => {
    for (const method of ["GET", "HEAD", "POST", "OPTIONS", "PUT", "DELETE"]) {
      const init: RequestInit = { method, ...(method === "POST" || method === "PUT" ? { headers: MCP_HEADERS, body: TOOLS_LIST } : {}) };
      const response = await core().fetch(new Request(`${ORIGIN}${path}`, init));
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.headers.get("x-magnt-observer")).toBe("1");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.text()).toBe(method === "HEAD" ? "" : "Not found");
    }
    const events = await coreEvents();
    expect(events).toHaveLength(6);
    for (const event of events) {
      expect(assertValidEvent(event)).toMatchObject({ role: "core", event_type: "http", path, status: 404 });
    }
  });

  it("serves /mcp like the monolith, with role core", async () => {
    const post = await core().fetch(new Request(`${ORIGIN}/mcp`, { method: "POST", headers: MCP_HEADERS, body: TOOLS_LIST }));
    expect(post.status).toBe(200);
    expect(post.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
    const preflight = await core().fetch(new Request(`${ORIGIN}/mcp`, { method: "OPTIONS", headers: { origin: ORIGIN } }));
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const get = await core().fetch(new Request(`${ORIGIN}/mcp`));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    const foreign = await core().fetch(new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, origin: "https://evil.example" }, body: TOOLS_LIST }));
    expect(foreign.status).toBe(403);
    const events = (await coreEvents()).map(assertValidEvent);
    expect(events.map(({ role, event_type, status }) => ({ role, event_type, status }))).toEqual([
      { role: "core", event_type: "mcp_request", status: 200 },
      { role: "core", event_type: "mcp_request", status: 204 },
      { role: "core", event_type: "mcp_request", status: 405 },
      { role: "core", event_type: "mcp_request", status: 403 },
    ]);
  });

  it("serves its own probe as magnt-core (GET, HEAD; 405 otherwise)", async () => {
    const get = await core().fetch(new Request(`${ORIGIN}/__magnt_probe`));
    expect(get.status).toBe(200);
    const probe = (await get.json()) as Record<string, unknown>;
    expect(probe).toMatchObject({ ok: true, role: "core", service: "magnt-core", contact_storage_configured: true, shared_memory_storage_configured: true, dialogue_enabled: false });
    expect(probe).not.toHaveProperty("core_reachable");
    const head = await core().fetch(new Request(`${ORIGIN}/__magnt_probe`, { method: "HEAD" }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await core().fetch(new Request(`${ORIGIN}/__magnt_probe`, { method: "POST", body: "" }));
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });
});
