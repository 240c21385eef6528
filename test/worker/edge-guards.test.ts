/**
 * Host allow-list, browser Origin validation, CORS and the 24 KiB POST limit
 * (01 §3–§5), through the real pipeline.
 */
import { describe, expect, it } from "vitest";
import { callDoor, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { useSiteOrigin } from "../fakes/site-origin";

const MCP_POST = {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
};

/** A body stream of `size` bytes in 1 KiB chunks, with no Content-Length. */
function chunkedBody(size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(1024, size - sent)).fill(0x61);
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

describe("host allow-list (01 §3)", () => {
  it.each([
    ["https://magnt.ru/mcp", 200],
    ["https://www.magnt.ru/mcp", 200],
    ["https://MAGNT.ru/mcp", 200],
    ["http://localhost:8787/mcp", 200],
    ["http://127.0.0.1:9/mcp", 200],
    ["http://[::1]:8787/mcp", 200],
    ["https://evil.example/mcp", 403],
    ["https://magnt.ru.evil.example/mcp", 403],
  ])("%s → %i", async (url, status) => {
    const response = await callDoor(url, MCP_POST);
    expect(response.status).toBe(status);
  });

  it("answers a foreign host on /mcp with a JSON-RPC error and elsewhere with text", async () => {
    const logs = captureConsole();
    const mcp = await callDoor("https://evil.example/mcp", MCP_POST);
    expect(mcp.headers.get("content-type")).toBe("application/json");
    expect(await mcp.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Host not allowed" } });
    const page = await callDoor("https://evil.example/");
    expect(page.status).toBe(403);
    expect(page.headers.get("content-type")).toContain("text/plain");
    expect(await page.text()).toBe("Forbidden");
    expect(logs.events().map((event) => event.outcome)).toEqual(["host_rejected", "host_rejected"]);
  });

  it("adds ALLOWED_HOSTS entries trimmed and lower-cased", async () => {
    const response = await callDoor("https://door.example/__magnt_probe", undefined, { ALLOWED_HOSTS: " Door.Example , ,other.example" });
    expect(response.status).toBe(200);
  });
});

describe("browser Origin validation on /mcp (01 §4)", () => {
  it.each([
    [undefined, 200],
    ["https://magnt.ru", 200],
    ["https://www.magnt.ru", 200],
    ["http://localhost:5173", 200],
    ["http://127.0.0.1:3000", 200],
    ["http://[::1]:3000", 200],
    ["null", 403],
    ["https://evil.example", 403],
    ["https://untrusted.example", 403],
    ["http://magnt.ru", 403],
    ["https://localhost", 200],
    ["https://magnt.ru/", 403],
    ["https://magnt.ru/path", 403],
    ["https://magnt.ru?x=1", 403],
    ["https://user@magnt.ru", 403],
    ["not a url", 403],
    ["magnt.ru", 403],
  ])("Origin %s → %i", async (origin, status) => {
    const logs = captureConsole();
    const headers: Record<string, string> = { ...MCP_POST.headers };
    if (origin !== undefined) headers.origin = origin;
    const response = await callDoor("/mcp", { ...MCP_POST, headers });
    expect(response.status).toBe(status);
    if (status === 403) {
      expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Origin not allowed" } });
      expect(logs.events()[0]?.outcome).toBe("origin_rejected");
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
    } else if (origin !== undefined) {
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
      expect(response.headers.get("vary")).toBe("Origin");
    }
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("is not applied to static files, the probe, cards or /a2a", async () => {
    useSiteOrigin({ "/index.html": { body: "<h1>site</h1>" } });
    for (const path of ["/", "/__magnt_probe", "/mcp/server-card", "/.well-known/agent-card.json"]) {
      const response = await callDoor(path, { headers: { origin: "https://evil.example" } });
      expect(response.status, path).not.toBe(403);
    }
  });

  it("answers a preflight with an allowed Origin with the exact CORS headers", async () => {
    const response = await callDoor("/mcp", { method: "OPTIONS", headers: { origin: "http://localhost:5173" } });
    expect(response.status).toBe(204);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "access-control-allow-origin": "http://localhost:5173",
      vary: "Origin",
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-allow-headers": "Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name",
      "access-control-expose-headers": "MCP-Protocol-Version",
      "access-control-max-age": "600",
    });
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("answers a preflight without Origin with 204 and no CORS headers", async () => {
    const response = await callDoor("/mcp", { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect([...response.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);
  });

  it("refuses a preflight from a disallowed Origin", async () => {
    const response = await callDoor("/mcp", { method: "OPTIONS", headers: { origin: "https://evil.example" } });
    expect(response.status).toBe(403);
  });
});

describe("24 KiB POST body limit (01 §5)", () => {
  const LIMIT = 24 * 1024;

  it("refuses a declared Content-Length of 24 577 without reading", async () => {
    const logs = captureConsole();
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(LIMIT + 1));
        controller.close();
      },
    });
    const request = new Request("https://magnt.ru/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(LIMIT + 1) },
      body,
      duplex: "half",
    } as RequestInit);
    const response = await callDoor(request);
    expect(response.status).toBe(413);
    expect(await response.text()).toBe("Request body exceeds 24 KiB");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(pulled).toBeLessThanOrEqual(1); // the stream's first pull may run when the request is built, never more
    expect(logs.events()[0]).toMatchObject({ status: 413, outcome: "body_too_large", event_type: "mcp_request" });
  });

  it("answers an oversized POST /mcp from an allowed Origin with the CORS headers", async () => {
    const response = await callDoor("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://magnt.ru" },
      body: "a".repeat(LIMIT + 1),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://magnt.ru");
    expect(response.headers.get("vary")).toBe("Origin");
    expect(response.headers.get("x-magnt-mcp-version")).not.toBeNull();
    const noOrigin = await callDoor("/mcp", { method: "POST", headers: { "content-type": "application/json" }, body: "a".repeat(LIMIT + 1) });
    expect(noOrigin.status).toBe(413);
    expect(noOrigin.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses a chunked 25 KiB body without Content-Length and cancels the reader", async () => {
    let cancelled = false;
    const source = chunkedBody(25 * 1024);
    const reader = source.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request("https://magnt.ru/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(request.headers.get("content-length")).toBeNull();
    const response = await callDoor(request);
    expect(response.status).toBe(413);
    expect(cancelled).toBe(true);
  });

  it("accepts exactly 24 576 bytes", async () => {
    const padding = " ".repeat(LIMIT - MCP_POST.body.length);
    const body = MCP_POST.body + padding;
    expect(new TextEncoder().encode(body).byteLength).toBe(LIMIT);
    const response = await callDoor("/mcp", { ...MCP_POST, body });
    expect(response.status).toBe(200);
  });

  it("answers an oversized body with a wrong Content-Type with 413, not 415", async () => {
    const response = await callDoor("/mcp", { method: "POST", headers: { "content-type": "text/plain" }, body: "x".repeat(LIMIT + 10) });
    expect(response.status).toBe(413);
  });

  it("applies to every POST, including paths that answer 405 or 404", async () => {
    for (const path of ["/", "/__magnt_probe", "/mcp/other", "/sse"]) {
      const response = await callDoor(path, { method: "POST", body: "x".repeat(LIMIT + 1) });
      expect(response.status, path).toBe(413);
    }
  });

  it("emits exactly one schema-valid event per rejected request", async () => {
    const logs = captureConsole();
    await callDoor("https://evil.example/mcp", MCP_POST);
    await callDoor("/mcp", { ...MCP_POST, headers: { ...MCP_POST.headers, origin: "null" } });
    await callDoor("/mcp", { method: "POST", body: "x".repeat(LIMIT + 1) });
    await callDoor("/mcp", { method: "GET" });
    const events = logs.events();
    expect(events.map((event) => [event.status, event.outcome])).toEqual([
      [403, "host_rejected"],
      [403, "origin_rejected"],
      [413, "body_too_large"],
      [405, "method_not_allowed"],
    ]);
    for (const event of events) assertValidEvent(event);
  });
});
