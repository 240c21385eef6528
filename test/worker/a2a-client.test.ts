/**
 * The official A2A client, `@a2a-js/sdk` 1.3.0, against the door (04 DoD):
 * from the v1.0 card and from the legacy card, and its own 0.3 transport.
 * (`@a2a-js/sdk` 0.3.14 is in a2a-client-v03.test.ts.)
 *
 * The SDK's client entry point runs inside workerd as it is (no Node
 * built-ins are needed on these paths), so it is driven here in the real
 * Workers runtime with a `fetch` that dispatches into the worker in-process.
 */
import { describe, expect, it } from "vitest";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { Role, type AgentCard, type Message, type SendMessageRequest } from "@a2a-js/sdk";
import { callDoor, captureConsole, ORIGIN } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { pointerData } from "../fakes/a2a";

const MCP_URL = `${ORIGIN}/mcp`;

/** Every request the SDK makes goes into the worker; the A2A-Version header it sent is recorded. */
function recordingFetch() {
  const sent: { method: string; path: string; version: string | null }[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    sent.push({
      method: request.method,
      path: new URL(request.url).pathname,
      version: request.headers.get("A2A-Version"),
    });
    return callDoor(request);
  }) as typeof fetch;
  return { fetchImpl, sent };
}

function factoryFor(fetchImpl: typeof fetch, legacyCompat = false): ClientFactory {
  const compat = legacyCompat ? { legacyCompat: { enabled: true } } : {};
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, ...compat })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, ...compat }),
    }),
  );
}

const LEGACY_CARD_PATH = "/.well-known/agent.json";

function request(text: string, contextId = ""): SendMessageRequest {
  return {
    tenant: "",
    message: {
      messageId: crypto.randomUUID(),
      contextId,
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

async function connect(): Promise<{ client: Client; sent: ReturnType<typeof recordingFetch>["sent"] }> {
  const { fetchImpl, sent } = recordingFetch();
  const client = await factoryFor(fetchImpl).createFromUrl(ORIGIN);
  return { client, sent };
}

function expectPointer(message: Message, contextId: string | null): void {
  expect(message.role).toBe(Role.ROLE_AGENT);
  if (contextId !== null) expect(message.contextId).toBe(contextId);
  else expect(message.contextId).toMatch(/^[0-9a-f-]{36}$/);
  const [text, data] = message.parts;
  expect(text?.content?.$case).toBe("text");
  expect(String(text?.content?.value)).toContain(MCP_URL);
  expect(data?.content).toEqual({
    $case: "data",
    value: pointerData(ORIGIN),
  });
}

/** Runs `call`, expecting the SDK to throw its typed error for `code`. */
async function expectSdkError(call: () => Promise<unknown>, name: string, code: number): Promise<Error> {
  const error = await call().then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe(name);
  expect((error as { envelopeCode?: number }).envelopeCode).toBe(code);
  return error as Error;
}

describe("@a2a-js/sdk 1.3.0 client", () => {
  it("resolves the card and picks the JSON-RPC 1.0 interface", async () => {
    const { fetchImpl, sent } = recordingFetch();
    const card: AgentCard = await new DefaultAgentCardResolver({ fetchImpl }).resolve(ORIGIN);
    expect(card.name).toBe("MAGNT");
    expect(card.supportedInterfaces).toEqual([{ url: `${ORIGIN}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]);
    expect(sent).toEqual([{ method: "GET", path: "/.well-known/agent-card.json", version: "1.0" }]);
  });

  it("sendMessage gets the direct pointer message with contextId echoed", async () => {
    const { client, sent } = await connect();
    const logs = captureConsole();
    const result = await client.sendMessage(request("Where is your MCP server?", "conversation-7"));
    expect("messageId" in result).toBe(true);
    expectPointer(result as Message, "conversation-7");
    expect(sent.at(-1)).toEqual({ method: "POST", path: "/a2a", version: "1.0" });
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({ outcome: "success", a2a_protocol_version: "1.0", a2a_method: "SendMessage" });
  });

  it("sendMessage without contextId gets a fresh one", async () => {
    const { client } = await connect();
    expectPointer((await client.sendMessage(request("hi"))) as Message, null);
  });

  it("getTask and cancelTask are TaskNotFound", async () => {
    const { client } = await connect();
    const error = await expectSdkError(() => client.getTask({ tenant: "", id: "task-1" }), "TaskNotFoundError", -32001);
    expect((error as { data?: unknown }).data).toEqual([
      expect.objectContaining({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }),
    ]);
    await expectSdkError(() => client.cancelTask({ tenant: "", id: "task-1", metadata: undefined }), "TaskNotFoundError", -32001);
  });

  it("listTasks is an empty page", async () => {
    const { client } = await connect();
    const page = await client.listTasks({
      tenant: "",
      contextId: "",
      status: 0,
      pageSize: undefined,
      pageToken: "",
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: undefined,
    });
    expect(page.tasks).toEqual([]);
  });

  it("streaming falls back to SendMessage because the card says streaming: false", async () => {
    const { client, sent } = await connect();
    const logs = captureConsole();
    const events = [];
    for await (const event of client.sendMessageStream(request("stream please", "ctx-stream"))) events.push(event);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload?.$case).toBe("message");
    expectPointer(events[0]!.payload!.value as Message, "ctx-stream");
    expect(logs.events().map((event) => event.a2a_method)).toEqual(["SendMessage"]);
    expect(sent.filter((entry) => entry.method === "POST")).toHaveLength(1);
  });

  it("resubscribeTask (SubscribeToTask) is UnsupportedOperation as JSON, not SSE", async () => {
    const { client } = await connect();
    await expectSdkError(
      async () => {
        for await (const _event of client.resubscribeTask({ tenant: "", id: "task-1" })) {
          // No event is expected: the first read throws.
        }
      },
      "UnsupportedOperationError",
      -32004,
    );
  });

  it("push configuration is refused: locally for create, by the door for delete", async () => {
    const { client, sent } = await connect();
    const before = sent.length;
    expect(() =>
      client.createTaskPushNotificationConfig({ tenant: "", id: "", taskId: "t", url: "https://x.example", token: "", authentication: undefined }),
    ).toThrow(expect.objectContaining({ name: "PushNotificationNotSupportedError" }));
    expect(sent.length).toBe(before);
    await expectSdkError(
      () => client.deleteTaskPushNotificationConfig({ tenant: "", taskId: "t", id: "c" }),
      "PushNotificationNotSupportedError",
      -32003,
    );
  });

  it("a raw header-less 1.0 call is VersionNotSupported naming the MCP URL", async () => {
    const { fetchImpl, sent } = recordingFetch();
    const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(ORIGIN);
    // The transport used directly (not through Client) sends no A2A-Version header.
    const transport = await new JsonRpcTransportFactory({ fetchImpl }).create(`${ORIGIN}/a2a`, card);
    const logs = captureConsole();
    const error = await expectSdkError(() => transport.sendMessage(request("hi")), "VersionNotSupportedError", -32009);
    expect(sent.at(-1)?.version).toBeNull();
    expect(error.message).toContain(MCP_URL);
    expect(logs.events()[0]).toMatchObject({ a2a_protocol_version: "0.3", a2a_method: "SendMessage", rpc_error_code: -32009 });
  });

  it.each([
    ["default options", false],
    ["legacyCompat enabled", true],
  ] as const)("from the legacy card (%s) it still picks the 1.0 interface and learns the MCP URL", async (_label, legacyCompat) => {
    const { fetchImpl, sent } = recordingFetch();
    const client = await factoryFor(fetchImpl, legacyCompat).createFromUrl(ORIGIN, LEGACY_CARD_PATH);
    const logs = captureConsole();
    expectPointer((await client.sendMessage(request("hi", "from-legacy-card"))) as Message, "from-legacy-card");
    expect(sent).toEqual([
      { method: "GET", path: LEGACY_CARD_PATH, version: "1.0" },
      { method: "POST", path: "/a2a", version: "1.0" },
    ]);
    expect(logs.events()[0]).toMatchObject({ outcome: "success", a2a_protocol_version: "1.0", a2a_method: "SendMessage" });
  });

  it("its 0.3 transport (message/send, no header) gets the pointer in 0.3 shape and learns the MCP URL", async () => {
    const { fetchImpl, sent } = recordingFetch();
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${ORIGIN}/a2a`, fetchImpl });
    const logs = captureConsole();
    // The SDK translates the 0.3 Message (kind, role "agent", kinded parts) into its 1.0 model.
    expectPointer((await legacy.sendMessage(request("hi", "legacy-ctx"))) as Message, "legacy-ctx");
    expect(sent.at(-1)).toEqual({ method: "POST", path: "/a2a", version: null });
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({ outcome: "success", a2a_protocol_version: "0.3", a2a_method: "message/send" });
  });

  it("its 0.3 transport announcing A2A-Version: 0.3 gets the same answer", async () => {
    const { fetchImpl } = recordingFetch();
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${ORIGIN}/a2a`, fetchImpl });
    const result = await legacy.sendMessage(request("hi"), { serviceParameters: { "A2A-Version": "0.3" } });
    expectPointer(result as Message, null);
  });

  it("every other 0.3 call is VersionNotSupported naming the MCP URL", async () => {
    const { fetchImpl } = recordingFetch();
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${ORIGIN}/a2a`, fetchImpl });
    const logs = captureConsole();
    const error = await expectSdkError(() => legacy.getTask({ tenant: "", id: "task-1" }), "VersionNotSupportedError", -32009);
    expect(error.message).toContain(MCP_URL);
    expect(logs.events()[0]).toMatchObject({ a2a_protocol_version: "0.3", a2a_method: "tasks/get", rpc_error_code: -32009 });
  });
});
