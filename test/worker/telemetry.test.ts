/**
 * The telemetry event (01 §9–§10): field rules, sanitising, the User-Agent
 * classifier, sensitive-path redaction, the edge privacy canary, the Analytics
 * Engine point (01 §13) and the outcomes only the MCP wrapper sets (01 §9.2).
 */
import { describe, expect, it } from "vitest";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { callDoor, captureAnalytics, captureConsole, doorEnv } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { assertNoCanaryInTelemetry, Canaries } from "../helpers/privacy";
import { MODERN, modernMeta, modernRequest, readMessages } from "../helpers/mcp";
import { useSiteOrigin } from "../fakes/site-origin";
import { classifyUserAgent } from "../../worker/edge/ua";
import { sanitizeText, truncateCodePoints, parseStrictInteger } from "../../worker/edge/sanitize";
import { isSensitivePath } from "../../worker/edge/telemetry";
import { createDoor, type Route } from "../../worker/edge/pipeline";
import { defineTool, failure, type ToolContext } from "../../worker/lib/tool-definition";
import { mcpRejections } from "../../worker/mcp/http";
import { registerTools } from "../../worker/mcp/register-tools";
import { serveMcp, type McpServing } from "../../worker/mcp/serve";

describe("User-Agent classifier (01 §10)", () => {
  it.each([
    ["Mozilla/5.0 (compatible; GPTBot/1.2)", "bot", "GPTBot"],
    ["Mozilla/5.0 ChatGPT-User/1.0", "bot", "ChatGPT-User"],
    ["OAI-SearchBot/1.0", "bot", "OAI-SearchBot"],
    ["ClaudeBot/1.0", "bot", "ClaudeBot"],
    ["Claude-Web/1.0", "bot", "Claude-Web"],
    ["anthropic-ai", "bot", "Anthropic"],
    ["PerplexityBot/1.0", "bot", "PerplexityBot"],
    ["Googlebot/2.1", "bot", "Googlebot"],
    ["bingbot/2.0", "bot", "Bingbot"],
    ["YandexBot/3.0", "bot", "YandexBot"],
    ["DuckDuckBot/1.1", "bot", "DuckDuckBot"],
    ["Bytespider", "bot", "ByteSpider"],
    ["facebookexternalhit/1.1", "bot", "Facebook"],
    ["Twitterbot/1.0", "bot", "Twitterbot"],
    ["LinkedInBot/1.0", "bot", "LinkedInBot"],
    ["curl/8.5.0", "bot", "curl"],
    ["Wget/1.21", "bot", "wget"],
    ["python-requests/2.31", "bot", "python-requests"],
    ["python-httpx/0.27", "bot", "python-httpx"],
    ["GPTBot and Googlebot", "bot", "GPTBot"],
    ["SomeBot/1.0", "probable-bot", "unidentified"],
    ["my-crawler", "probable-bot", "unidentified"],
    ["Spider", "probable-bot", "unidentified"],
    ["scraper 1", "probable-bot", "unidentified"],
    ["HeadlessChrome/120", "probable-bot", "unidentified"],
    ["Apache-HttpClient/4.5", "probable-bot", "unidentified"],
    ["aiohttp/3.9", "probable-bot", "unidentified"],
    ["okhttp/4.12", "probable-bot", "unidentified"],
    ["Go-http-client/2.0", "probable-bot", "unidentified"],
    ["Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", "browser-or-unknown", "unknown"],
    ["", "browser-or-unknown", "unknown"],
    ["curl", "browser-or-unknown", "unknown"],
  ])("%s → %s / %s", (userAgent, clientKind, clientName) => {
    expect(classifyUserAgent(userAgent)).toEqual({ clientKind, clientName });
  });
});

describe("sanitising (01 §9.5)", () => {
  it("removes control characters, C1 controls and line separators", () => {
    expect(sanitizeText("a\u0000b\u001fc\u007fd\u0085e\u009ff\u2028g\u2029h\ni\tj", 100)).toBe("abcdefghij");
  });
  it("makes non-strings null", () => {
    expect(sanitizeText(42, 10)).toBeNull();
    expect(sanitizeText(undefined, 10)).toBeNull();
    expect(sanitizeText({ name: "x" }, 10)).toBeNull();
  });
  it("cuts by code points and never splits a surrogate pair", () => {
    expect(truncateCodePoints("😀😀😀", 2)).toBe("😀😀");
    expect(truncateCodePoints("a😀b", 2)).toBe("a😀");
    expect(truncateCodePoints("abc", 5)).toBe("abc");
    const cut = truncateCodePoints("x".repeat(5) + "😀".repeat(10), 6);
    expect(cut).toBe("xxxxx😀");
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/); // no lone high surrogate
  });
  it("parses header numbers strictly", () => {
    expect(parseStrictInteger("13335")).toBe(13335);
    expect(parseStrictInteger("13335abc")).toBeNull();
    expect(parseStrictInteger("1e3")).toBeNull();
    expect(parseStrictInteger("")).toBeNull();
    expect(parseStrictInteger(null)).toBeNull();
  });
});

describe("the event (01 §9.1)", () => {
  it.each(["/mcp", "/mcp/server-card", "/mcp/x", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json", "/a2a", "/a2a/"])(
    "blanks query and referrer on the sensitive path %s",
    (path) => {
      expect(isSensitivePath("monolith", path)).toBe(true);
    },
  );

  it("keeps query and referrer on static paths and blanks them on sensitive ones", async () => {
    useSiteOrigin({ "/page.html": { body: "x" } });
    const logs = captureConsole();
    await callDoor("/page.html?utm=1", { headers: { referer: "https://ref.example/a" } });
    await callDoor("/mcp/server-card?secret=1", { headers: { referer: "https://ref.example/secret" } });
    const [page, card] = logs.events();
    expect(page).toMatchObject({ query: "?utm=1", referrer: "https://ref.example/a" });
    expect(card).toMatchObject({ query: "", referrer: "" });
  });

  it("sanitises and caps the User-Agent, marks controlled tests and never verifies identity", async () => {
    const logs = captureConsole();
    await callDoor("/__magnt_probe", { headers: { "user-agent": `MAGNT-Controlled-Test/0.2 ${"x".repeat(2000)}` } });
    await callDoor("/__magnt_probe", { headers: { "user-agent": "magnt-controlled-test/0.2" } });
    const [controlled, lowerCase] = logs.events().map((event) => assertValidEvent(event));
    expect(controlled!.controlled_test).toBe(true);
    expect([...controlled!.userAgent]).toHaveLength(1000);
    expect(lowerCase!.controlled_test).toBe(false);
    expect(controlled!.identity_verified).toBe(false);
  });

  it("records whole-millisecond durations, the request time and a fresh UUID per request", async () => {
    const logs = captureConsole();
    await callDoor("/__magnt_probe");
    await callDoor("/__magnt_probe");
    const [a, b] = logs.events();
    expect(Number.isInteger(a!.duration_ms)).toBe(true);
    expect(a!.event_id).not.toBe(b!.event_id);
    expect(Date.parse(a!.time)).not.toBeNaN();
  });

  it("ignores x-magnt-edge-* headers in the monolith role", async () => {
    const logs = captureConsole();
    await callDoor("/__magnt_probe", { headers: { "x-magnt-edge-country": "XX", "x-magnt-edge-asn": "1" } });
    expect(logs.events()[0]).toMatchObject({ country: "", asn: null });
  });
});

describe("edge privacy canary (10 §3)", () => {
  it("never logs bodies, sensitive queries and referrers, client addresses or cookies, nor writes them to Analytics Engine", async () => {
    useSiteOrigin({ "/index.html": { body: "x" } });
    const canaries = new Canaries();
    const logs = captureConsole();
    const analytics = captureAnalytics();
    const sensitive = ["/mcp", "/mcp/server-card", "/mcp/other", "/.well-known/ai-catalog.json", "/.well-known/mcp/server-card.json", "/a2a", "/a2a/"];
    for (const path of sensitive) {
      await callDoor(`${path}?q=${canaries.make(`query${path}`)}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          referer: `https://ref.example/?r=${canaries.make(`referrer${path}`)}`,
          "cf-connecting-ip": canaries.make(`ip${path}`),
          cookie: `session=${canaries.make(`cookie${path}`)}`,
          authorization: `Bearer ${canaries.make(`auth${path}`)}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: canaries.make(`method${path}`), params: { text: canaries.make(`body${path}`) } }),
      });
    }
    // Rejected requests log no body either.
    await callDoor("https://evil.example/mcp", { method: "POST", body: canaries.make("hostRejectedBody") });
    await callDoor("/mcp", { method: "POST", headers: { origin: "https://evil.example" }, body: canaries.make("originRejectedBody") });
    await callDoor("/mcp", { method: "POST", body: canaries.make("oversizedBody") + "x".repeat(25_000) });
    await callDoor("/", { method: "POST", body: canaries.make("staticPostBody") });

    expect(logs.events().length).toBe(sensitive.length + 4);
    expect(analytics.points).toHaveLength(sensitive.length + 4);
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });
  });
});

describe("Analytics Engine point (01 §13)", () => {
  it("writes exactly the allow-listed dimensions of the request's event, once per request", async () => {
    const logs = captureConsole();
    const analytics = captureAnalytics();
    await callDoor("/__magnt_probe?utm=1", { headers: { "user-agent": "curl/8.5", referer: "https://ref.example/a" } });
    await modernRequest("tools/call", { name: "about_magnt", arguments: {} });
    const events = logs.events();
    expect(events).toHaveLength(2);
    expect(analytics.points).toEqual(
      events.map((event) => ({
        blobs: [
          event.path, event.method, event.event_type, event.outcome, event.mcp_method ?? "", event.tool_name ?? "",
          event.clientKind, event.clientName, event.country, event.colo,
        ],
        doubles: [1, event.status, event.duration_ms],
        indexes: [event.host],
      })),
    );
    expect(analytics.points[1]!.blobs!.slice(0, 6)).toEqual(["/mcp", "POST", "mcp_request", "success", "tools/call", "about_magnt"]);
  });

  it("never lets a throwing binding change the answer", async () => {
    const response = await callDoor("/__magnt_probe", undefined, {
      ANALYTICS: {
        writeDataPoint() {
          throw new Error("analytics down");
        },
      },
    });
    expect(response.status).toBe(200);
  });
});

describe("outcomes only the MCP wrapper sets (01 §9.2)", () => {
  // The custom tools below are outside the closed tool list of 01 §9.2, so their events carry
  // `tool_name: "unknown"` (worker/contracts/events.ts toolNameLabel).
  const noArguments = z.object({}).strict();
  const annotations = { title: "t", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

  /** A tool that fails without naming its result. */
  const quietFailure = defineTool<typeof noArguments, string>({
    name: "quiet_failure", title: "Quiet failure", description: "Fails without a tool_result.", annotations,
    inputSchema: noArguments,
    run: async () => failure({ status: "nope" }, {}),
  });
  /** A tool that fails and names its result: the wrapper must keep it. */
  const namedFailure = defineTool<typeof noArguments, string>({
    name: "named_failure", title: "Named failure", description: "Fails with a tool_result.", annotations,
    inputSchema: noArguments,
    run: async () => failure({ status: "storage_unavailable" }, { tool_result: "storage_unavailable" }),
  });

  /** A door whose only route is `POST /mcp`, served by `serveMcp` with `createServer`. */
  function customDoor(createServer: McpServing["createServer"]) {
    const serving: McpServing = { tools: [quietFailure, namedFailure], createServer };
    const route: Route = { eventType: "mcp_request", checkOrigin: true, methods: { POST: (req) => serveMcp(req, serving) }, ...mcpRejections };
    return createDoor("monolith", () => route);
  }

  const TOOL_CONTEXT: ToolContext = {
    env: doorEnv(),
    origin: "https://magnt.ru",
    client: { name: null, version: null, protocolVersion: null },
    controlledTest: false,
    checkPublicWrite: async () => ({ limited: false }),
    registeredTools: [quietFailure.name, namedFailure.name],
  };

  /** Builds this request's server with the custom tools, the way the public server registers its own. */
  function serverWithTools(onToolOutcome: Parameters<McpServing["createServer"]>[1]): McpServer {
    const server = new McpServer({ name: "custom", version: "0.0.1" }, { capabilities: { tools: { listChanged: false } } });
    registerTools(server, [quietFailure, namedFailure], TOOL_CONTEXT, onToolOutcome);
    return server;
  }

  /** A modern (2026-07-28) request through `door`. */
  async function call(door: ReturnType<typeof customDoor>, method: string, params: Record<string, unknown>) {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    };
    const request = new Request("https://magnt.ru/mcp", {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: modernMeta() } }),
    });
    const ctx = createExecutionContext();
    const response = await door.fetch(request, doorEnv(), ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("labels an isError result without a tool_result unclassified_tool_error, and keeps a named one", async () => {
    const door = customDoor((_info, onToolOutcome) => serverWithTools(onToolOutcome));
    const logs = captureConsole();
    const quiet = await call(door, "tools/call", { name: "quiet_failure", arguments: {} });
    const [quietMessage] = await readMessages(quiet);
    expect(quietMessage!.result).toMatchObject({ isError: true, structuredContent: { status: "nope" } });
    const named = await call(door, "tools/call", { name: "named_failure", arguments: {} });
    const [namedMessage] = await readMessages(named);
    expect(namedMessage!.result).toMatchObject({ isError: true });
    const [quietEvent, namedEvent] = logs.events();
    expect(logs.events()).toHaveLength(2);
    expect(quietEvent).toMatchObject({ mcp_method: "tools/call", tool_name: "unknown", outcome: "tool_error", tool_result: "unclassified_tool_error", rpc_error_code: null });
    expect(namedEvent).toMatchObject({ tool_name: "unknown", outcome: "tool_error", tool_result: "storage_unavailable" });
  });

  it("labels a tool that throws unclassified_tool_error and keeps its error text out of the logs", async () => {
    const canaries = new Canaries();
    const thrown = canaries.make("thrownByTool");
    const throwing = defineTool<typeof noArguments, string>({
      name: "throwing_tool", title: "Throwing", description: "Throws.", annotations, inputSchema: noArguments,
      run: async () => {
        throw new Error(thrown);
      },
    });
    const serving: McpServing = {
      tools: [throwing],
      createServer: (_info, onToolOutcome) => {
        const server = new McpServer({ name: "custom", version: "0.0.1" }, { capabilities: { tools: { listChanged: false } } });
        registerTools(server, [throwing], { ...TOOL_CONTEXT, registeredTools: [throwing.name] }, onToolOutcome);
        return server;
      },
    };
    const route: Route = { eventType: "mcp_request", checkOrigin: true, methods: { POST: (req) => serveMcp(req, serving) }, ...mcpRejections };
    const logs = captureConsole();
    const response = await call(createDoor("monolith", () => route), "tools/call", { name: "throwing_tool", arguments: {} });
    const [message] = await readMessages(response);
    // A throwing tool answers one fixed failure; the exception text never reaches the visitor.
    expect(message!.result).toMatchObject({ isError: true, structuredContent: { status: "tool_failed" } });
    expect(JSON.stringify(message)).not.toContain(thrown);
    expect(logs.events()).toHaveLength(1);
    expect(logs.events()[0]).toMatchObject({ tool_name: "unknown", outcome: "tool_error", tool_result: "unclassified_tool_error" });
    await canaries.assertAbsentFrom(logs.lines());
  });

  it.each([
    ["a text body", "text/plain; charset=utf-8", "upstream exploded"],
    ["a JSON body without a JSON-RPC error", "application/json", JSON.stringify({ failed: true })],
    ["an empty body", "application/json", ""],
  ])("labels an SDK answer ≥ 500 with %s handler_error", async (_label, contentType, body) => {
    // The SDK's own 5xx answers always carry a JSON-RPC error; this server's
    // transport answers a bare 502 instead, the case 01 §9.2 calls handler_error.
    class BareFailureServer extends McpServer {
      override async connect(transport: Parameters<McpServer["connect"]>[0]): Promise<void> {
        Object.assign(transport, { handleMessage: async () => new Response(body, { status: 502, headers: { "content-type": contentType } }) });
      }
    }
    const door = customDoor(() => new BareFailureServer({ name: "custom", version: "0.0.1" }, { capabilities: { tools: { listChanged: false } } }));
    const logs = captureConsole();
    const response = await call(door, "tools/call", { name: "quiet_failure", arguments: {} });
    expect(response.status).toBe(502);
    expect(await response.text()).toBe(body);
    expect(logs.events()).toHaveLength(1);
    expect(logs.events()[0]).toMatchObject({ status: 502, outcome: "handler_error", rpc_error_code: null, tool_name: "unknown", tool_result: null });
  });

  it("answers a server factory that throws with the SDK's 500 / -32603: protocol_error, not handler_error", async () => {
    const canaries = new Canaries();
    const message = canaries.make("factoryError");
    const door = customDoor(() => {
      throw new Error(message);
    });
    const logs = captureConsole();
    const response = await call(door, "tools/call", { name: "quiet_failure", arguments: {} });
    expect(response.status).toBe(500);
    const [answer] = await readMessages(response);
    expect(answer!.error).toMatchObject({ code: -32603 });
    expect(logs.events()).toHaveLength(1);
    // A JSON-RPC error was parsed from the body, so 01 §9.2 keeps protocol_error.
    expect(logs.events()[0]).toMatchObject({ status: 500, outcome: "protocol_error", rpc_error_code: -32603, tool_name: "unknown", tool_result: null });
    await canaries.assertAbsentFrom(logs.lines());
  });
});
