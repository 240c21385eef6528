/**
 * A JSON answer's outcome taken from the response its server sent
 * (worker/mcp/sent-messages.ts, 01 §9.2, decision 220) against its reference:
 * the answer itself, read here by the rules of 01 §9.2. Over the door's real
 * public server on both lanes — results, tool errors, the SDK's protocol
 * errors, answers the SDK gives before any server runs — every event's
 * `outcome` and `rpc_error_code` are what the answer's own messages say.
 *
 * And the path is shown to be taken (so the comparison is not vacuous): an
 * answer whose server sent one response is handed back as the `Response` the
 * SDK built, with the door's headers set on it, never read; without that
 * response the same answer is read and rebuilt, with the same outcome and bytes.
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { readMcpResponse } from "../../worker/mcp/response-reading";
import { watchSentMessages, type SentMessages } from "../../worker/mcp/sent-messages";
import { captureConsole } from "../helpers/door";
import { modernMeta, modernRequest, rawPost, readMessages, type JsonRpcMessage } from "../helpers/mcp";
import { seedSignal } from "../helpers/signals";

/** 01 §9.2 read off the answer's messages: an error wins, then a tool error, then success. */
function referenceOutcome(messages: readonly JsonRpcMessage[]): { outcome: string | null; rpc_error_code: number | null } {
  let outcome: string | null = null;
  let code: number | null = null;
  for (const message of messages) {
    if (message.error !== undefined) {
      outcome = "protocol_error";
      code ??= message.error.code;
    } else if (message.result !== undefined) {
      if (message.result.isError === true) {
        if (outcome !== "protocol_error") outcome = "tool_error";
      } else {
        outcome ??= "success";
      }
    }
  }
  return { outcome, rpc_error_code: code };
}

const LEGACY_HEADERS = { "mcp-protocol-version": "2025-11-25" };
const legacy = (method: string, params: Record<string, unknown>) => rawPost(JSON.stringify({ jsonrpc: "2.0", id: 3, method, params }), LEGACY_HEADERS);

const CASES: readonly [string, () => Promise<Response>][] = [
  ["a search with matches", () => modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: "sentmessages deploy a worker" } })],
  ["a search without matches", () => modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: "quokkanowhere" } })],
  ["a search with invalid arguments", () => modernRequest("tools/call", { name: "search_shared_experience", arguments: { goal: 7 } })],
  ["a contribution with an unknown field", () => modernRequest("tools/call", { name: "contribute_task_signal", arguments: { goal: "x", colour: "red" } })],
  ["a contact with a missing field", () => modernRequest("tools/call", { name: "propose_contact", arguments: { message: "hello" } })],
  ["about_magnt", () => modernRequest("tools/call", { name: "about_magnt", arguments: {} })],
  ["an unknown tool", () => modernRequest("tools/call", { name: "no_such_tool", arguments: {} })],
  ["tools/list", () => modernRequest("tools/list", {})],
  ["ping", () => modernRequest("ping", {})],
  ["server/discover", () => modernRequest("server/discover", {})],
  ["the profile resource", () => modernRequest("resources/read", { uri: "magnt://profile" })],
  ["an unknown resource", () => modernRequest("resources/read", { uri: "magnt://nothing" })],
  ["an unknown method", () => modernRequest("prompts/get", { name: "x" })],
  ["a header that disagrees with _meta", () => modernRequest("tools/list", {}, { headers: { "mcp-protocol-version": "2025-11-25" } })],
  ["malformed JSON", () => rawPost("{not json", { "mcp-protocol-version": "2026-07-28" })],
  ["2025 lane: initialize", () => legacy("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sent", version: "1" } })],
  ["2025 lane: a search", () => legacy("tools/call", { name: "search_shared_experience", arguments: { goal: "sentmessages deploy" } })],
  ["2025 lane: invalid arguments", () => legacy("tools/call", { name: "search_shared_experience", arguments: {} })],
  ["2025 lane: an unknown tool", () => legacy("tools/call", { name: "no_such_tool", arguments: {} })],
];

let seeded = false;

describe("the outcome of an answer (01 §9.2)", () => {
  it.each(CASES)("is what the answer's messages say: %s", async (_label, send) => {
    // Seeded once: storage persists across this file's tests.
    if (!seeded) await seedSignal({ signalId: "ts_sent-1", goal: "sentmessages deploy a worker", createdAt: "2026-01-01T00:00:00.000Z" });
    seeded = true;
    const logs = captureConsole();
    const response = await send();
    const reference = referenceOutcome(await readMessages(response));
    expect(reference.outcome).not.toBeNull();
    const events = logs.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject(reference);
  });
});

describe("a JSON answer whose server sent its one response", () => {
  const schema = z.strictObject({ fail: z.boolean() });
  /** The SDK's own handler with a server of one tool, the server's sends watched into `sent`. */
  function handler(sent: SentMessages) {
    return createMcpHandler(() => {
      const server = new McpServer({ name: "sent", version: "1.0.0" }, { capabilities: { tools: { listChanged: false } } });
      server.registerTool("t", { inputSchema: schema }, async ({ fail }) => ({ content: [{ type: "text", text: "x" }], ...(fail ? { isError: true } : {}) }));
      return watchSentMessages(server, sent);
    }, { legacy: "stateless" });
  }

  function call(args: Record<string, unknown>, id: number) {
    return new Request("https://magnt.ru/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t" },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t", arguments: args, _meta: modernMeta() } }),
    });
  }

  it.each([
    ["a result", { fail: false }, "success"],
    ["a tool error", { fail: true }, "tool_error"],
    ["rejected arguments", { fail: "no" }, "tool_error"],
  ] as const)("is handed back unread, its headers set in place: %s", async (_label, args, outcome) => {
    const sent: SentMessages = [];
    const response = await handler(sent).fetch(call(args, 11));
    expect(sent).toHaveLength(1);
    const reference = response.clone();

    const observed = await readMcpResponse(response, "tools/call", { "x-magnt-test": "1" }, false, sent);
    expect(observed.response).toBe(response);
    expect(observed.response.headers.get("x-magnt-test")).toBe("1");
    expect(observed).toMatchObject({ outcome, rpcErrorCode: null, text: null });

    // Without the sent response the same answer is read: the same outcome and the same bytes, in a copy.
    const read = await readMcpResponse(reference, "tools/call", { "x-magnt-test": "1" }, false, []);
    expect(read.response).not.toBe(reference);
    expect({ outcome: read.outcome, rpcErrorCode: read.rpcErrorCode }).toEqual({ outcome: observed.outcome, rpcErrorCode: observed.rpcErrorCode });
    expect(await read.response.text()).toBe(await observed.response.text());
    expect([...read.response.headers]).toEqual([...observed.response.headers]);
  });

  it("is read when the caller needs its text (a listing to keep)", async () => {
    const sent: SentMessages = [];
    const response = await handler(sent).fetch(call({ fail: false }, 12));
    const read = await readMcpResponse(response, "tools/call", {}, true, sent);
    expect(read.response).not.toBe(response);
    expect(read.text).toContain('"id":12');
    expect(read.outcome).toBe("success");
  });
});
