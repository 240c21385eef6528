/**
 * The `POST /mcp` transport (02 §1): every row of the protocol table, against
 * the SDK's own answers, with the door's headers and telemetry around them.
 */
import { describe, expect, it } from "vitest";
import { callDoor, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { modernMeta, modernRequest, MODERN, rawPost, readMessages } from "../helpers/mcp";

function initializeBody(protocolVersion: string) {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw-legacy", version: "9.9" } },
  });
}

describe("modern lane (2026-07-28)", () => {
  it("serves a direct tools/call about_magnt with no handshake as JSON", async () => {
    const logs = captureConsole();
    const response = await modernRequest("tools/call", { name: "about_magnt", arguments: {} });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-magnt-mcp-version")).toBe("0.2.0");
    expect(response.headers.get("x-magnt-observer")).toBe("1");
    const [message] = await readMessages(response);
    expect(message!.result!.structuredContent).toMatchObject({ name: "MAGNT" });
    const event = assertValidEvent(logs.events()[0]);
    expect(event).toMatchObject({
      event_type: "mcp_request",
      mcp_method: "tools/call",
      mcp_protocol_version: MODERN,
      client_name: "raw-modern",
      client_version: "1.0.0",
      tool_name: "about_magnt",
      tool_result: "profile_returned",
      outcome: "success",
      validation_status: "valid",
    });
  });

  it("answers server/discover with the supported version, server info and no list-changed capability", async () => {
    const response = await modernRequest("server/discover");
    expect(response.status).toBe(200);
    const [message] = await readMessages(response);
    const result = message!.result as Record<string, any>;
    expect(result.supportedVersions).toEqual([MODERN]);
    // 2026-07-28 carries the server identity in the result's _meta.
    expect(result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "ru.magnt/mcp-door", title: "MAGNT MCP Door", version: "0.2.0", websiteUrl: "https://magnt.ru/" });
    expect(result.capabilities.tools?.listChanged ?? false).toBe(false);
    expect(result.capabilities.resources?.listChanged ?? false).toBe(false);
    expect(result.capabilities.prompts).toBeUndefined();
    expect(result.instructions).toContain("propose_contact");
  });

  it("passes subscriptions/listen through unread and emits its one event at once", async () => {
    const logs = captureConsole();
    const response = await modernRequest("subscriptions/listen", { notifications: {} });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = logs.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ mcp_method: "subscriptions/listen", outcome: "stream_opened" });
    await response.body?.cancel();
  });

  it("rejects a header that disagrees with _meta with 400 / -32020", async () => {
    const logs = captureConsole();
    const response = await modernRequest("tools/list", {}, { headers: { "mcp-protocol-version": "2025-11-25" } });
    expect(response.status).toBe(400);
    const [message] = await readMessages(response);
    expect(message!.error!.code).toBe(-32020);
    expect(logs.events()[0]).toMatchObject({ outcome: "protocol_error", rpc_error_code: -32020 });
  });

  it("rejects an unsupported modern version with 400 / -32022 listing the supported versions", async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
    });
    const logs = captureConsole();
    const response = await rawPost(body, { "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" });
    expect(response.status).toBe(400);
    const [message] = await readMessages(response);
    expect(message!.error!.code).toBe(-32022);
    expect(JSON.stringify(message!.error!.data)).toContain(MODERN);
    expect(logs.events()[0]).toMatchObject({ outcome: "protocol_error", rpc_error_code: -32022, mcp_protocol_version: "2099-01-01" });
  });

  it("answers an unknown modern method with 404 / -32601 and labels it unknown", async () => {
    const logs = captureConsole();
    const response = await modernRequest("prompts/get", { name: "x" });
    expect(response.status).toBe(404);
    const [message] = await readMessages(response);
    expect(message!.error!.code).toBe(-32601);
    expect(logs.events()[0]).toMatchObject({ mcp_method: "unknown", outcome: "protocol_error", rpc_error_code: -32601 });
  });

  it("answers an unknown tool with JSON-RPC -32602, not a tool error", async () => {
    const logs = captureConsole();
    const response = await modernRequest("tools/call", { name: "owner_list_contacts", arguments: {} });
    const [message] = await readMessages(response);
    expect(message!.error!.code).toBe(-32602);
    expect(message!.result).toBeUndefined();
    const event = logs.events()[0]!;
    expect(event).toMatchObject({ tool_name: "unknown", outcome: "protocol_error", rpc_error_code: -32602, tool_result: null });
    expect(event.validation_status).toBeUndefined();
  });
});

describe("legacy lane (2025)", () => {
  it.each(["2025-11-25", "2025-06-18", "2025-03-26"])("answers initialize %s with that version", async (version) => {
    const logs = captureConsole();
    const response = await rawPost(initializeBody(version));
    expect(response.status).toBe(200);
    const [message] = await readMessages(response);
    const result = message!.result as Record<string, any>;
    expect(result.protocolVersion).toBe(version);
    expect(result.serverInfo).toMatchObject({ name: "ru.magnt/mcp-door", version: "0.2.0" });
    expect(result.capabilities.tools.listChanged).toBe(false);
    expect(result.capabilities.resources.listChanged).toBe(false);
    expect(logs.events()[0]).toMatchObject({ mcp_method: "initialize", mcp_protocol_version: version, client_name: "raw-legacy", client_version: "9.9" });
  });

  it.each(["2026-07-28", "1999-01-01"])("answers initialize asking for %s with 2025-11-25", async (version) => {
    const logs = captureConsole();
    const response = await rawPost(initializeBody(version));
    const [message] = await readMessages(response);
    expect((message!.result as Record<string, unknown>).protocolVersion).toBe("2025-11-25");
    expect(logs.events()[0]!.mcp_protocol_version).toBe("2025-11-25");
  });

  it("serves a legacy request without a version header (2025-03-26)", async () => {
    const response = await rawPost(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} }));
    expect(response.status).toBe(200);
    const [message] = await readMessages(response);
    expect(message!.id).toBe(7);
    expect((message!.result!.tools as unknown[]).length).toBe(4);
  });

  it("answers a legacy POST whose Accept lacks text/event-stream with 406", async () => {
    const logs = captureConsole();
    const response = await rawPost(initializeBody("2025-11-25"), { accept: "application/json" });
    expect(response.status).toBe(406);
    expect(logs.events()[0]!.outcome).toBe("protocol_error");
  });
});

describe("transport errors", () => {
  it("answers a wrong Content-Type with 415", async () => {
    const logs = captureConsole();
    const response = await rawPost(initializeBody("2025-11-25"), { "content-type": "text/plain" });
    expect(response.status).toBe(415);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(logs.events()[0]!.outcome).toBe("protocol_error");
  });

  it("answers a malformed body `{` with 400", async () => {
    const logs = captureConsole();
    const response = await rawPost("{");
    expect(response.status).toBe(400);
    expect(logs.events()[0]).toMatchObject({ mcp_method: null, outcome: "protocol_error" });
  });

  it("labels a notification's 202 as notification_accepted", async () => {
    const logs = captureConsole();
    const response = await rawPost(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), { "mcp-protocol-version": "2025-11-25" });
    expect(response.status).toBe(202);
    expect(logs.events()[0]).toMatchObject({ mcp_method: "notifications/initialized", outcome: "notification_accepted" });
  });

  it("prints nothing but the door's own event line per request (no SDK warnings)", async () => {
    const logs = captureConsole();
    await rawPost(initializeBody("2025-11-25"));
    await modernRequest("tools/list");
    await modernRequest("tools/call", { name: "about_magnt", arguments: {} });
    const lines = logs.lines();
    expect(lines).toHaveLength(3);
    expect(logs.events()).toHaveLength(3);
  });

  it("answers GET and DELETE with 405 and has no /sse endpoint", async () => {
    expect((await callDoor("/mcp", { method: "GET" })).status).toBe(405);
    expect((await callDoor("/mcp", { method: "DELETE" })).status).toBe(405);
    expect((await callDoor("/sse", { method: "GET" })).status).toBe(404);
  });
});

describe("resource_name (01 §9.2)", () => {
  it("labels resources/read of the profile magnt://profile and any other uri unknown", async () => {
    const logs = captureConsole();
    const profile = await modernRequest("resources/read", { uri: "magnt://profile" });
    expect(profile.status).toBe(200);
    const [profileMessage] = await readMessages(profile);
    expect((profileMessage!.result as { contents: { uri: string }[] }).contents[0]!.uri).toBe("magnt://profile");
    const other = await modernRequest("resources/read", { uri: "magnt://secret-other" });
    const [otherMessage] = await readMessages(other);
    expect(otherMessage!.error).toBeDefined();
    const upperCase = await modernRequest("resources/read", { uri: "MAGNT://profile" });
    await upperCase.text();
    const events = logs.events();
    for (const event of events) assertValidEvent(event);
    expect(events.map((event) => [event.mcp_method, event.resource_name])).toEqual([
      ["resources/read", "magnt://profile"],
      ["resources/read", "unknown"],
      ["resources/read", "unknown"],
    ]);
    expect(events[0]!.outcome).toBe("success");
    expect(events[1]!.outcome).toBe("protocol_error");
    expect(logs.lines().join("\n")).not.toContain("secret-other");
  });

  it("labels the legacy lane's resources/read the same way", async () => {
    const logs = captureConsole();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "magnt://profile" } });
    const response = await rawPost(body, { "mcp-protocol-version": "2025-11-25" });
    expect(response.status).toBe(200);
    await response.text();
    expect(logs.events()[0]).toMatchObject({ mcp_method: "resources/read", resource_name: "magnt://profile" });
  });

  it("is null for every other method, including a tools/call that names the profile", async () => {
    const logs = captureConsole();
    for (const [method, params] of [
      ["tools/list", {}],
      ["resources/list", {}],
      ["tools/call", { name: "about_magnt", arguments: {}, uri: "magnt://profile" }],
      ["server/discover", {}],
    ] as const) {
      await (await modernRequest(method, params)).text();
    }
    const events = logs.events();
    for (const event of events) assertValidEvent(event);
    expect(events).toHaveLength(4);
    for (const event of events) {
      expect(event).toHaveProperty("resource_name");
      expect(event.resource_name, String(event.mcp_method)).toBeNull();
    }
  });
});
