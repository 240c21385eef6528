/**
 * The official A2A 0.3 client, `@a2a-js/sdk` 0.3.14 (installed as the alias
 * `a2a-sdk-v03`), against the door (04 §1, §6): discovery from the legacy
 * card at `/.well-known/agent.json`, then `message/send`, answered with the
 * pointer to MCP in 0.3 shape.
 *
 * Like the 1.3.0 client, its client entry point runs inside workerd as it is,
 * so it is driven in the real Workers runtime with a `fetch` that dispatches
 * into the worker in-process.
 */
import { describe, expect, it } from "vitest";
import {
  A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "a2a-sdk-v03/client";
import type { Message, MessageSendParams, Task } from "a2a-sdk-v03";
import { callDoor, captureConsole, ORIGIN } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { pointerData } from "../fakes/a2a";

const MCP_URL = `${ORIGIN}/mcp`;
const LEGACY_CARD_PATH = "/.well-known/agent.json";
const LEGACY_CARD_URL = `${ORIGIN}${LEGACY_CARD_PATH}`;

/** Every request the SDK makes goes into the worker; the A2A-Version header it sent is recorded. */
function recordingFetch() {
  const sent: { method: string; path: string; version: string | null }[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    sent.push({ method: request.method, path: new URL(request.url).pathname, version: request.headers.get("A2A-Version") });
    return callDoor(request);
  }) as typeof fetch;
  return { fetchImpl, sent };
}

function factoryFor(fetchImpl: typeof fetch): ClientFactory {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
}

function params(text: string, message: Partial<Message> = {}): MessageSendParams {
  return {
    message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text }], ...message },
  };
}

/** The 0.3 pointer: a bare Message with kinded parts whose data part holds the MCP URL. */
function expectPointer(result: Message | Task, contextId: string | null): void {
  expect(result.kind).toBe("message");
  const message = result as Message;
  expect(message.role).toBe("agent");
  if (contextId !== null) expect(message.contextId).toBe(contextId);
  else expect(message.contextId).toMatch(/^[0-9a-f-]{36}$/);
  const [text, data, ...rest] = message.parts;
  expect(rest).toEqual([]);
  expect(text?.kind).toBe("text");
  expect(text?.kind === "text" ? text.text : "").toContain(MCP_URL);
  expect(data).toEqual({
    kind: "data",
    data: pointerData(ORIGIN),
  });
}

describe("@a2a-js/sdk 0.3.14 A2AClient", () => {
  it("fromCardUrl on the legacy card reaches POST /a2a and learns the MCP URL from message/send", async () => {
    const { fetchImpl, sent } = recordingFetch();
    const client = await A2AClient.fromCardUrl(LEGACY_CARD_URL, { fetchImpl });
    const logs = captureConsole();
    const response = await client.sendMessage(params("Where is your MCP server?", { contextId: "conversation-03" }));
    if (!("result" in response)) throw new Error(`expected a result, got ${JSON.stringify(response.error)}`);
    expectPointer(response.result, "conversation-03");
    expect(sent).toEqual([
      { method: "GET", path: LEGACY_CARD_PATH, version: null },
      { method: "POST", path: "/a2a", version: null },
    ]);
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({
      event_type: "a2a_request",
      outcome: "success",
      a2a_protocol_version: "0.3",
      a2a_method: "message/send",
    });
  });

  it("reads the card it needs: url, preferredTransport, protocolVersion, capabilities", async () => {
    const { fetchImpl } = recordingFetch();
    const logs = captureConsole();
    const client = await A2AClient.fromCardUrl(LEGACY_CARD_URL, { fetchImpl });
    const card = await client.getAgentCard();
    expect(card).toMatchObject({
      url: `${ORIGIN}/a2a`,
      preferredTransport: "JSONRPC",
      protocolVersion: "0.3.0",
      capabilities: { streaming: false, pushNotifications: false },
    });
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({ event_type: "a2a_card", outcome: "http_success", path: LEGACY_CARD_PATH });
  });

  it("sendMessage without contextId gets a fresh one", async () => {
    const { fetchImpl } = recordingFetch();
    const client = await A2AClient.fromCardUrl(LEGACY_CARD_URL, { fetchImpl });
    const response = await client.sendMessage(params("hi"));
    if (!("result" in response)) throw new Error("expected a result");
    expectPointer(response.result, null);
  });

  it("sendMessage continuing a task is TaskNotFound", async () => {
    const { fetchImpl } = recordingFetch();
    const client = await A2AClient.fromCardUrl(LEGACY_CARD_URL, { fetchImpl });
    const response = await client.sendMessage(params("hi", { taskId: "task-1" }));
    expect("error" in response && response.error.code).toBe(-32001);
  });

  it("getTask is -32009, whose message names the MCP URL", async () => {
    const { fetchImpl } = recordingFetch();
    const client = await A2AClient.fromCardUrl(LEGACY_CARD_URL, { fetchImpl });
    const logs = captureConsole();
    const response = await client.getTask({ id: "task-1" });
    if (!("error" in response)) throw new Error("expected an error");
    expect(response.error.code).toBe(-32009);
    expect(response.error.message).toContain(MCP_URL);
    expect(logs.events()[0]).toMatchObject({ a2a_protocol_version: "0.3", a2a_method: "tasks/get", rpc_error_code: -32009 });
  });

  it("sendMessageStream is refused by the client itself, because the card says streaming: false", async () => {
    const { fetchImpl, sent } = recordingFetch();
    const client = await A2AClient.fromCardUrl(LEGACY_CARD_URL, { fetchImpl });
    const before = sent.length;
    await expect(async () => {
      for await (const _event of client.sendMessageStream(params("stream please"))) {
        // No event is expected: the client throws before sending.
      }
    }).rejects.toThrow(/does not support streaming/);
    expect(sent.length).toBe(before);
  });

  it("the v1.0 card is not one it can read: that is why the legacy path exists", async () => {
    const { fetchImpl } = recordingFetch();
    await expect(A2AClient.fromCardUrl(`${ORIGIN}/.well-known/agent-card.json`, { fetchImpl })).rejects.toThrow(
      "does not contain a valid 'url'",
    );
  });
});

describe("@a2a-js/sdk 0.3.14 ClientFactory", () => {
  it("createFromUrl with the legacy path picks JSON-RPC at /a2a and learns the MCP URL", async () => {
    const { fetchImpl, sent } = recordingFetch();
    const client = await factoryFor(fetchImpl).createFromUrl(ORIGIN, LEGACY_CARD_PATH);
    expectPointer(await client.sendMessage(params("What can you do?", { contextId: "factory-ctx" })), "factory-ctx");
    expect(sent.map(({ method, path }) => `${method} ${path}`)).toEqual([`GET ${LEGACY_CARD_PATH}`, "POST /a2a"]);
  });

  it("sendMessageStream falls back to message/send because the card says streaming: false", async () => {
    const { fetchImpl } = recordingFetch();
    const client = await factoryFor(fetchImpl).createFromUrl(ORIGIN, LEGACY_CARD_PATH);
    const logs = captureConsole();
    const events = [];
    for await (const event of client.sendMessageStream(params("stream please", { contextId: "ctx-stream" }))) events.push(event);
    expect(events).toHaveLength(1);
    expectPointer(events[0] as Message, "ctx-stream");
    expect(logs.events().map((event) => event.a2a_method)).toEqual(["message/send"]);
  });

  it("getTask throws the SDK's error for -32009, naming the MCP URL", async () => {
    const { fetchImpl } = recordingFetch();
    const client = await factoryFor(fetchImpl).createFromUrl(ORIGIN, LEGACY_CARD_PATH);
    await expect(client.getTask({ id: "task-1" })).rejects.toThrow(MCP_URL);
  });

  it("the v1.0 card offers it no transport: that is why the legacy path exists", async () => {
    const { fetchImpl } = recordingFetch();
    await expect(factoryFor(fetchImpl).createFromUrl(ORIGIN)).rejects.toThrow("No compatible transport found");
  });
});
