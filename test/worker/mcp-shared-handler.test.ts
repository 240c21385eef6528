/**
 * One SDK handler per isolate (worker/mcp/serve.ts): requests served at the
 * same time each get their own server, built from their own context, and
 * each outcome is recorded on its own request's event, never on another's.
 */
import { describe, expect, it } from "vitest";
import { callDoor, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { modernMeta, MODERN, readMessages } from "../helpers/mcp";

function call(index: number) {
  // Three kinds interleaved: a valid call, a call the tool's schema rejects, and a tool list.
  const kind = index % 3;
  const method = kind === 2 ? "tools/list" : "tools/call";
  const params =
    kind === 0
      ? { name: "about_magnt", arguments: {} }
      : kind === 1
        ? { name: "search_shared_experience", arguments: { goal: 42 } }
        : {};
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(method === "tools/call" ? { "mcp-name": (params as { name: string }).name } : {}),
  };
  const body = { jsonrpc: "2.0", id: 1000 + index, method, params: { ...params, _meta: modernMeta(`client-${index}`, `${index}.0`) } };
  return callDoor("/mcp", { method: "POST", headers, body: JSON.stringify(body) });
}

describe("the shared SDK handler", () => {
  it("serves concurrent requests each with its own server and records each outcome on its own event", async () => {
    const logs = captureConsole();
    const count = 24;
    const responses = await Promise.all(Array.from({ length: count }, (_, index) => call(index)));
    for (const [index, response] of responses.entries()) {
      expect(response.status).toBe(200);
      const [message] = await readMessages(response);
      expect(message!.id).toBe(1000 + index);
      const kind = index % 3;
      if (kind === 0) expect(message!.result!.structuredContent).toMatchObject({ name: "MAGNT" });
      if (kind === 1) expect(message!.result!.isError).toBe(true);
      if (kind === 2) expect((message!.result as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
    }
    const events = logs.events().map((event) => assertValidEvent(event));
    expect(events).toHaveLength(count);
    for (let index = 0; index < count; index += 1) {
      const own = events.filter((event) => "client_name" in event && event.client_name === `client-${index}`);
      expect(own).toHaveLength(1);
      const kind = index % 3;
      expect(own[0]).toMatchObject({
        client_version: `${index}.0`,
        mcp_method: kind === 2 ? "tools/list" : "tools/call",
        tool_name: kind === 0 ? "about_magnt" : kind === 1 ? "search_shared_experience" : null,
        tool_result: kind === 0 ? "profile_returned" : kind === 1 ? "invalid_arguments" : null,
        outcome: kind === 1 ? "tool_error" : "success",
      });
    }
  });
});
