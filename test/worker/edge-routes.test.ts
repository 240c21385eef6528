/**
 * The monolith's route table (01 §2.1), row by row: path × method → status,
 * Allow header, event_type, and exactly one schema-valid event per request.
 */
import { describe, expect, it } from "vitest";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { createDoor, type Handler } from "../../worker/edge/pipeline";
import { publicRoutes } from "../../worker/entries/public-routes";
import { callDoor, captureConsole, doorEnv } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { MCP_DOOR_VERSION } from "../../worker/contracts/versions";
import { useSiteOrigin } from "../fakes/site-origin";

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

const ROWS: Row[] = [
  { path: "/mcp", method: "POST", status: 200, eventType: "mcp_request", headers: MCP_HEADERS, body: TOOLS_LIST },
  { path: "/mcp", method: "OPTIONS", status: 204, eventType: "mcp_request" },
  { path: "/mcp", method: "GET", status: 405, eventType: "mcp_request", allow: "POST, OPTIONS" },
  { path: "/mcp", method: "DELETE", status: 405, eventType: "mcp_request", allow: "POST, OPTIONS" },
  { path: "/mcp", method: "PUT", status: 405, eventType: "mcp_request", allow: "POST, OPTIONS" },
  { path: "/mcp", method: "HEAD", status: 405, eventType: "mcp_request", allow: "POST, OPTIONS" },
  ...["/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json"].flatMap((path): Row[] => [
    { path, method: "GET", status: 200, eventType: "mcp_card" },
    { path, method: "HEAD", status: 200, eventType: "mcp_card" },
    { path, method: "OPTIONS", status: 204, eventType: "mcp_card" },
    { path, method: "POST", status: 405, eventType: "mcp_card", allow: "GET, HEAD, OPTIONS", body: "{}" },
    { path, method: "DELETE", status: 405, eventType: "mcp_card", allow: "GET, HEAD, OPTIONS" },
  ]),
  { path: "/mcp/other", method: "GET", status: 404, eventType: "http" },
  { path: "/mcp/other", method: "POST", status: 404, eventType: "http", body: "{}" },
  { path: "/mcp/", method: "GET", status: 404, eventType: "http" },
  ...["/.well-known/agent-card.json", "/.well-known/agent.json"].flatMap((path): Row[] => [
    { path, method: "POST", status: 405, eventType: "a2a_card", allow: "GET, HEAD, OPTIONS", body: "{}" },
    { path, method: "PUT", status: 405, eventType: "a2a_card", allow: "GET, HEAD, OPTIONS" },
  ]),
  ...["/a2a", "/a2a/"].flatMap((path): Row[] => [
    { path, method: "GET", status: 405, eventType: "a2a_request", allow: "POST, OPTIONS" },
    { path, method: "HEAD", status: 405, eventType: "a2a_request", allow: "POST, OPTIONS" },
    { path, method: "DELETE", status: 405, eventType: "a2a_request", allow: "POST, OPTIONS" },
  ]),
  { path: "/__magnt_probe", method: "GET", status: 200, eventType: "http" },
  { path: "/__magnt_probe", method: "HEAD", status: 200, eventType: "http" },
  { path: "/__magnt_probe", method: "POST", status: 405, eventType: "http", allow: "GET, HEAD", body: "" },
  { path: "/__magnt_probe", method: "OPTIONS", status: 405, eventType: "http", allow: "GET, HEAD" },
  { path: "/sse", method: "GET", status: 404, eventType: "http" },
  { path: "/sse", method: "POST", status: 404, eventType: "http", body: "{}" },
  { path: "/sse/stream", method: "GET", status: 404, eventType: "http" },
  { path: "/", method: "GET", status: 200, eventType: "http" },
  { path: "/index.html", method: "HEAD", status: 200, eventType: "http" },
  { path: "/MCP", method: "GET", status: 404, eventType: "http", upstream: true },
  { path: "/anything", method: "POST", status: 405, eventType: "http", allow: "GET, HEAD", body: "x" },
  { path: "/anything", method: "OPTIONS", status: 405, eventType: "http", allow: "GET, HEAD" },
  { path: "/anything", method: "PATCH", status: 405, eventType: "http", allow: "GET, HEAD" },
];

describe("monolith route table (01 §2.1)", () => {
  it.each(ROWS)("$method $path → $status ($eventType)", async (row) => {
    useSiteOrigin({ "/index.html": { body: "<h1>site</h1>" } });
    const logs = captureConsole();
    const init: RequestInit = { method: row.method };
    if (row.headers) init.headers = row.headers;
    if (row.body !== undefined) init.body = row.body;
    const response = await callDoor(row.path, init);

    expect(response.status).toBe(row.status);
    expect(response.headers.get("x-magnt-observer")).toBe("1");
    if (row.allow) expect(response.headers.get("allow")).toBe(row.allow);
    if (row.status >= 400 && !row.upstream) expect(response.headers.get("cache-control")).toBe("no-store");
    if (row.method === "HEAD") expect(await response.text()).toBe("");

    const events = logs.events();
    expect(events).toHaveLength(1);
    const event = assertValidEvent(events[0]);
    expect(event.event_type).toBe(row.eventType);
    expect(event.status).toBe(row.status);
    expect(event.method).toBe(row.method);
    if (row.status === 405) expect(event.outcome).toBe("method_not_allowed");
  });

  it("answers every /mcp response with no-store and the door version", async () => {
    for (const method of ["GET", "OPTIONS"]) {
      const response = await callDoor("/mcp", { method });
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("x-magnt-mcp-version")).toBe("0.2.0");
    }
  });

  it("turns an exception escaping a handler into one 503 event with outcome internal_error", async () => {
    const logs = captureConsole();
    // A PUBLIC_ORIGIN whose every property access throws makes the Server Card handler throw.
    const exploding = new Proxy({}, { get: () => { throw new Error("CANARY-exception-text"); } });
    const response = await callDoor("/mcp/server-card", undefined, { PUBLIC_ORIGIN: exploding });
    expect(response.status).toBe(503);
    expect(await response.text()).toBe("Service temporarily unavailable");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-magnt-observer")).toBe("1");
    const events = logs.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 503, outcome: "internal_error" });
    expect(logs.lines().join("\n")).not.toContain("CANARY-exception-text");
  });

  /** The real route table, with one route's handlers replaced by one that throws. */
  async function throwingRoute(path: string, init: RequestInit): Promise<Response> {
    const explode: Handler = () => {
      throw new Error("CANARY-exception-text");
    };
    const table = publicRoutes({ mcpPost: explode, mcpEventType: "mcp_request", probe: explode });
    const door = createDoor("monolith", (requested) => {
      const route = table(requested);
      return requested === path ? { ...route, methods: Object.fromEntries(Object.keys(route.methods).map((m) => [m, explode])) } : route;
    });
    const ctx = createExecutionContext();
    const response = await door.fetch(new Request(`https://magnt.ru${path}`, init), doorEnv(), ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("keeps /mcp's required headers (and CORS for an allowed Origin) on a 503 from an escaped exception", async () => {
    const logs = captureConsole();
    const post = { method: "POST", headers: { "content-type": "application/json", origin: "https://magnt.ru" }, body: "{}" };
    const response = await throwingRoute("/mcp", post);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe("Service temporarily unavailable");
    expect(response.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("access-control-allow-origin")).toBe("https://magnt.ru");
    const noOrigin = await throwingRoute("/mcp", { ...post, headers: { "content-type": "application/json" } });
    expect(noOrigin.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
    expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull();
    expect(logs.events().map((event) => event.outcome)).toEqual(["internal_error", "internal_error"]);
    expect(logs.lines().join("\n")).not.toContain("CANARY-exception-text");
  });

  it("keeps /a2a's required headers on a 503 from an escaped exception", async () => {
    for (const path of ["/a2a", "/a2a/"]) {
      const response = await throwingRoute(path, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(response.status, path).toBe(503);
      expect(response.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(response.headers.get("cache-control"), path).toBe("no-store");
      expect(await response.text(), path).toBe("Service temporarily unavailable");
    }
  });
});
