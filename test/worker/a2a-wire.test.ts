/**
 * The A2A endpoint on the wire (04 §2–§5): one table row per rule of the
 * processing order and of the method table, each checked for status, headers,
 * JSON-RPC answer and its single telemetry event.
 */
import { describe, expect, it } from "vitest";
import { A2A_V03_METHODS, MAX_POST_BODY_BYTES } from "../../worker/contracts/index";
import { callDoor, captureConsole, ORIGIN } from "../helpers/door";
import {
  expectEndpointHeaders,
  expectOneA2aEvent,
  pointerData,
  postA2a,
  readRpc,
  rpc,
  userMessage,
  userMessageV03,
  V03_HEADERS,
  V1_HEADERS,
  type ExpectedA2aEvent,
  type RpcAnswer,
} from "../fakes/a2a";

const MCP_URL = `${ORIGIN}/mcp`;
const CARD_URL = `${ORIGIN}/.well-known/agent-card.json`;
const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const encoder = new TextEncoder();

/** One JSON-RPC expectation: an error code (with its detail) or a result check. */
type Expect =
  | { readonly code: number; readonly reason?: string; readonly fields?: readonly string[]; readonly mentionsMcp?: boolean }
  | { readonly result: (result: Record<string, unknown>) => void };

interface WireCase {
  readonly name: string;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
  readonly path?: string;
  readonly status?: 200 | 413 | 415;
  /** The expected response id; defaults to the request's `id` (or null when the body has none). */
  readonly id?: unknown;
  readonly expect: Expect;
  readonly event: ExpectedA2aEvent;
}

/** The reasons of the A2A-specific codes (04 §5); these codes must carry exactly one ErrorInfo. */
const REASONS: Record<number, string> = {
  [-32001]: "TASK_NOT_FOUND",
  [-32003]: "PUSH_NOTIFICATION_NOT_SUPPORTED",
  [-32004]: "UNSUPPORTED_OPERATION",
  [-32005]: "CONTENT_TYPE_NOT_SUPPORTED",
  [-32009]: "VERSION_NOT_SUPPORTED",
};

function checkAnswer(answer: RpcAnswer, expected: Expect): void {
  expect(answer.jsonrpc).toBe("2.0");
  if ("result" in expected) {
    expect(answer.error).toBeUndefined();
    expected.result(answer.result!);
    return;
  }
  expect(answer.result).toBeUndefined();
  const error = answer.error!;
  expect(error.code).toBe(expected.code);
  expect(typeof error.message).toBe("string");
  if (expected.mentionsMcp) expect(error.message).toContain(MCP_URL);
  const reason = REASONS[expected.code];
  if (reason) {
    const metadata = expected.code === -32009 ? { supportedVersions: "1.0", mcpUrl: MCP_URL } : {};
    expect(error.data).toEqual([{ "@type": ERROR_INFO, reason, domain: "a2a-protocol.org", metadata }]);
  } else if (expected.code === -32602) {
    expect(error.data).toEqual([
      { "@type": BAD_REQUEST, fieldViolations: (expected.fields ?? []).map((field) => ({ field, description: "required" })) },
    ]);
  } else {
    expect(error).not.toHaveProperty("data");
  }
}

async function runCase(row: WireCase): Promise<Response> {
  const logs = captureConsole();
  const response = await postA2a(row.body, { headers: row.headers ?? V1_HEADERS, path: row.path ?? "/a2a" });
  const status = row.status ?? 200;
  expect(response.status).toBe(status);
  expectEndpointHeaders(response, true);
  const answer = await readRpc(response);
  const requestId = typeof row.body === "object" && row.body !== null && "id" in row.body ? row.body.id : null;
  expect(answer.id).toEqual(row.id === undefined ? requestId : row.id);
  checkAnswer(answer, row.expect);
  expectOneA2aEvent(logs, row.event, status);
  return response;
}

const V1 = (method: string | null) => ({ a2a_protocol_version: "1.0" as const, a2a_method: method });
const success = (method: string): ExpectedA2aEvent => ({ outcome: "success", ...V1(method) });
const rpcError = (code: number, method: string | null, version: ExpectedA2aEvent["a2a_protocol_version"] = "1.0"): ExpectedA2aEvent => ({
  outcome: "protocol_error",
  rpc_error_code: code,
  a2a_protocol_version: version,
  a2a_method: method,
});
const early = (code: number, method: string | null = null) => rpcError(code, method, null);

function expectPointerMessage(contextId: string | RegExp) {
  return (result: Record<string, unknown>) => {
    expect(Object.keys(result)).toEqual(["message"]);
    const message = result.message as Record<string, unknown>;
    expect(Object.keys(message).sort()).toEqual(["contextId", "messageId", "parts", "role"]);
    expect(message.messageId).toMatch(UUID);
    if (typeof contextId === "string") expect(message.contextId).toBe(contextId);
    else expect(message.contextId).toMatch(contextId);
    expect(message.role).toBe("ROLE_AGENT");
    const [text, data, ...rest] = message.parts as Record<string, unknown>[];
    expect(rest).toEqual([]);
    expect(text).toEqual({ text: expect.stringContaining(MCP_URL), mediaType: "text/plain" });
    expect(String(text!.text)).toMatch(/Streamable HTTP/);
    expect(String(text!.text)).toMatch(/about_magnt/);
    expect(String(text!.text)).toMatch(/does not read, store or forward/);
    expect(data).toEqual({
      data: pointerData(ORIGIN),
      mediaType: "application/json",
    });
  };
}

const sendMessage = (message: unknown, id: string | number | null = 1) => rpc("SendMessage", { message } as Record<string, unknown>, id);

/** The 0.3 `message/send` result (04 §6): the pointer as a bare 0.3 Message, `kind` on every object. */
function expectPointerMessageV03(contextId: string | RegExp) {
  return (result: Record<string, unknown>) => {
    expect(Object.keys(result).sort()).toEqual(["contextId", "kind", "messageId", "parts", "role"]);
    expect(result.kind).toBe("message");
    expect(result.messageId).toMatch(UUID);
    if (typeof contextId === "string") expect(result.contextId).toBe(contextId);
    else expect(result.contextId).toMatch(contextId);
    expect(result.role).toBe("agent");
    const [text, data, ...rest] = result.parts as Record<string, unknown>[];
    expect(rest).toEqual([]);
    expect(text).toEqual({ kind: "text", text: expect.stringContaining(MCP_URL) });
    expect(String(text!.text)).toMatch(/Streamable HTTP/);
    expect(String(text!.text)).toMatch(/about_magnt/);
    expect(String(text!.text)).toMatch(/does not read, store or forward/);
    expect(data).toEqual({
      kind: "data",
      data: pointerData(ORIGIN),
    });
  };
}

const sendMessageV03 = (message: unknown, id: string | number | null = 1) =>
  rpc("message/send", { message, configuration: { blocking: true } } as Record<string, unknown>, id);

/** §3 steps 2–7: media type, parse, batch, envelope, version. */
const processingRows: WireCase[] = [
  {
    name: "step 2: text/plain with a small non-JSON body is 415/-32005, not -32700",
    body: "hello, not json",
    headers: { "Content-Type": "text/plain", "A2A-Version": "1.0" },
    status: 415,
    id: null,
    expect: { code: -32005 },
    event: { outcome: "unsupported_media_type", a2a_protocol_version: null, a2a_method: null },
  },
  ...["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/json", "application/jsonx", "application/+json", "; charset=utf-8", "json"].map(
    (type): WireCase => ({
      name: `step 2: Content-Type ${type} is 415 even with a valid request`,
      body: sendMessage(userMessage()),
      headers: { "Content-Type": type, "A2A-Version": "1.0" },
      status: 415,
      id: null,
      expect: { code: -32005 },
      event: { outcome: "unsupported_media_type", a2a_protocol_version: null, a2a_method: null },
    }),
  ),
  ...["application/json; charset=utf-8", "APPLICATION/JSON", "Application/A2A+JSON", "application/vnd.example.rpc+json; v=1", " application/json ", ""].map(
    (type): WireCase => ({
      name: `step 2: Content-Type "${type}" is accepted`,
      body: rpc("ListTasks", {}, 5),
      headers: { "Content-Type": type, "A2A-Version": "1.0" },
      expect: { result: (result) => expect(result).toBeDefined() },
      event: success("ListTasks"),
    }),
  ),
  {
    name: "step 2: an absent Content-Type is accepted",
    body: rpc("ListTasks", {}, 6),
    headers: { "A2A-Version": "1.0" },
    expect: { result: (result) => expect(result).toBeDefined() },
    event: success("ListTasks"),
  },
  { name: "step 3: invalid JSON is -32700 with id null", body: '{"jsonrpc":"2.0","id":1,', expect: { code: -32700 }, event: early(-32700) },
  { name: "step 3: an empty body is -32700", body: "", expect: { code: -32700 }, event: early(-32700) },
  {
    name: "step 3: invalid UTF-8 is -32700",
    body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    expect: { code: -32700 },
    event: early(-32700),
  },
  {
    name: "step 4: a batch is one -32600 with id null",
    body: [rpc("SendMessage", { message: userMessage() }, 1), rpc("ListTasks", {}, 2)],
    id: null,
    expect: { code: -32600 },
    event: early(-32600),
  },
  { name: "step 4: an empty batch is -32600", body: [], id: null, expect: { code: -32600 }, event: early(-32600) },
  { name: "step 5: a JSON string is -32600", body: '"SendMessage"', expect: { code: -32600 }, event: early(-32600) },
  { name: "step 5: JSON null is -32600", body: "null", expect: { code: -32600 }, event: early(-32600) },
  {
    name: "step 5: missing jsonrpc is -32600 with the valid id echoed",
    body: { id: 7, method: "SendMessage", params: { message: userMessage() } },
    expect: { code: -32600 },
    event: early(-32600, "SendMessage"),
  },
  {
    name: 'step 5: jsonrpc "1.0" is -32600',
    body: { jsonrpc: "1.0", id: "a", method: "ListTasks" },
    expect: { code: -32600 },
    event: early(-32600, "ListTasks"),
  },
  { name: "step 5: a missing method is -32600", body: { jsonrpc: "2.0", id: 3 }, expect: { code: -32600 }, event: early(-32600) },
  {
    name: "step 5: a numeric method is -32600, unlabelled",
    body: { jsonrpc: "2.0", id: 3, method: 42 },
    expect: { code: -32600 },
    event: early(-32600),
  },
  {
    name: "step 5: an object id is -32600 with id null",
    body: { jsonrpc: "2.0", id: { x: 1 }, method: "ListTasks" },
    id: null,
    expect: { code: -32600 },
    event: early(-32600, "ListTasks"),
  },
  {
    name: "step 5: a float id is -32600 with id null",
    body: { jsonrpc: "2.0", id: 1.5, method: "ListTasks" },
    id: null,
    expect: { code: -32600 },
    event: early(-32600, "ListTasks"),
  },
  {
    name: "step 5: a boolean id is -32600 with id null",
    body: { jsonrpc: "2.0", id: true, method: "ListTasks" },
    id: null,
    expect: { code: -32600 },
    event: early(-32600, "ListTasks"),
  },
  {
    name: "step 5: array params are -32600 with the id echoed",
    body: { jsonrpc: "2.0", id: 9, method: "SendMessage", params: [userMessage()] },
    expect: { code: -32600 },
    event: early(-32600, "SendMessage"),
  },
  {
    name: "step 5: null params are -32600",
    body: { jsonrpc: "2.0", id: 9, method: "ListTasks", params: null },
    expect: { code: -32600 },
    event: early(-32600, "ListTasks"),
  },
  {
    name: "step 5: string params are -32600, an unknown method labelled unknown",
    body: { jsonrpc: "2.0", id: "s", method: "frobnicate", params: "x" },
    expect: { code: -32600 },
    event: early(-32600, "unknown"),
  },
  {
    name: "step 5: an invalid envelope without id is answered (not a notification)",
    body: { jsonrpc: "2.0", method: "ListTasks", params: [] },
    id: null,
    expect: { code: -32600 },
    event: early(-32600, "ListTasks"),
  },
  ...versionRows(),
];

/** §3 step 7: the version header and its query-parameter form. */
function versionRows(): WireCase[] {
  const rejected = (name: string, label: "0.3" | "unsupported", headers: Record<string, string>, path = "/a2a"): WireCase => ({
    name: `step 7: ${name} is -32009 naming the MCP URL (${label})`,
    body: sendMessage(userMessage(), 11),
    headers: { "Content-Type": "application/json", ...headers },
    path,
    expect: { code: -32009, mentionsMcp: true },
    event: rpcError(-32009, "SendMessage", label),
  });
  const accepted = (name: string, headers: Record<string, string>, path = "/a2a"): WireCase => ({
    name: `step 7: ${name} is accepted`,
    body: rpc("ListTasks", {}, 12),
    headers: { "Content-Type": "application/json", ...headers },
    path,
    expect: { result: (result) => expect(result).toBeDefined() },
    event: success("ListTasks"),
  });
  return [
    rejected("a missing header", "0.3", {}),
    rejected("an empty header", "0.3", { "A2A-Version": "" }),
    rejected("a blank header", "0.3", { "A2A-Version": "   " }),
    rejected("header 0.3", "0.3", { "A2A-Version": "0.3" }),
    rejected("header 0.2.5", "0.3", { "A2A-Version": "0.2.5" }),
    rejected("header 1.1", "unsupported", { "A2A-Version": "1.1" }),
    rejected("header 99.0", "unsupported", { "A2A-Version": "99.0" }),
    rejected("header 1", "unsupported", { "A2A-Version": "1" }),
    rejected("header 1.0.x", "unsupported", { "A2A-Version": "1.0.x" }),
    rejected("header 1.0, 1.0 (two headers)", "unsupported", { "A2A-Version": "1.0, 1.0" }),
    rejected("header v1.0", "unsupported", { "A2A-Version": "v1.0" }),
    accepted("header 1.0.7 (patch ignored)", { "A2A-Version": "1.0.7" }),
    accepted("header ' 1.0 ' (trimmed)", { "A2A-Version": " 1.0 " }),
    accepted("query parameter A2A-Version=1.0 without header", {}, "/a2a?A2A-Version=1.0"),
    accepted("query parameter 1.0.3 on /a2a/", {}, "/a2a/?A2A-Version=1.0.3"),
    rejected("query parameter 0.3", "0.3", {}, "/a2a?A2A-Version=0.3"),
    rejected("query parameter 2.0", "unsupported", {}, "/a2a?A2A-Version=2.0"),
    rejected("header 0.3 over query 1.0 (the header wins)", "0.3", { "A2A-Version": "0.3" }, "/a2a?A2A-Version=1.0"),
    rejected("an empty header over query 1.0 (present header wins)", "0.3", { "A2A-Version": "" }, "/a2a?A2A-Version=1.0"),
    accepted("header 1.0 over query 0.3", { "A2A-Version": "1.0" }, "/a2a?A2A-Version=0.3"),
    {
      ...rejected("a 0.3 method other than message/send without header", "0.3", {}),
      body: rpc("tasks/get", { id: "task-1" }, 13),
      event: rpcError(-32009, "tasks/get", "0.3"),
    },
  ];
}

/** §4: every row of the method table under A2A-Version 1.0. */
const methodRows: WireCase[] = [
  {
    name: "SendMessage answers a direct message and echoes contextId",
    body: sendMessage(userMessage({ contextId: "ctx-42" }), "req-1"),
    expect: { result: expectPointerMessage("ctx-42") },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage without contextId gets a new UUID",
    body: sendMessage(userMessage()),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage with an empty contextId gets a new UUID",
    body: sendMessage(userMessage({ contextId: "" })),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage echoes a contextId of exactly 256 characters",
    body: sendMessage(userMessage({ contextId: "c".repeat(256) })),
    expect: { result: expectPointerMessage("c".repeat(256)) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage counts contextId in code points (256 emoji are echoed)",
    body: sendMessage(userMessage({ contextId: "😀".repeat(256) })),
    expect: { result: expectPointerMessage("😀".repeat(256)) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage replaces a 257-character contextId with a new UUID",
    body: sendMessage(userMessage({ contextId: "c".repeat(257) })),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage replaces a non-string contextId with a new UUID",
    body: sendMessage(userMessage({ contextId: 12345 })),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage with an empty taskId is not a task reference",
    body: sendMessage(userMessage({ taskId: "" })),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage on /a2a/ is identical",
    path: "/a2a/",
    body: sendMessage(userMessage({ contextId: "slash" }), 0),
    expect: { result: expectPointerMessage("slash") },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage with id null echoes null",
    body: sendMessage(userMessage(), null),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage with a large negative integer id echoes it",
    body: sendMessage(userMessage(), -9007199254740991),
    expect: { result: expectPointerMessage(UUID) },
    event: success("SendMessage"),
  },
  {
    name: "SendMessage without params is -32602 naming message",
    body: rpc("SendMessage", undefined, 2),
    expect: { code: -32602, fields: ["message"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage with a non-object message is -32602 naming message",
    body: rpc("SendMessage", { message: "hello" }, 2),
    expect: { code: -32602, fields: ["message"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage with an empty message lists every missing field",
    body: sendMessage({}),
    expect: { code: -32602, fields: ["message.messageId", "message.role", "message.parts"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage with a numeric messageId is -32602",
    body: sendMessage(userMessage({ messageId: 5 })),
    expect: { code: -32602, fields: ["message.messageId"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage without role is -32602",
    body: sendMessage({ messageId: "m", parts: [{ text: "x" }] }),
    expect: { code: -32602, fields: ["message.role"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage with empty parts is -32602",
    body: sendMessage(userMessage({ parts: [] })),
    expect: { code: -32602, fields: ["message.parts"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage with non-array parts is -32602",
    body: sendMessage(userMessage({ parts: { text: "x" } })),
    expect: { code: -32602, fields: ["message.parts"] },
    event: rpcError(-32602, "SendMessage"),
  },
  {
    name: "SendMessage with a taskId is -32001",
    body: sendMessage(userMessage({ taskId: "task-1" })),
    expect: { code: -32001 },
    event: rpcError(-32001, "SendMessage"),
  },
  ...["SendStreamingMessage", "SubscribeToTask", "GetExtendedAgentCard"].map(
    (method): WireCase => ({
      name: `${method} is -32004 as JSON, never SSE`,
      body: rpc(method, method === "SendStreamingMessage" ? { message: userMessage() } : { id: "t" }, method),
      expect: { code: -32004 },
      event: rpcError(-32004, method),
    }),
  ),
  ...["GetTask", "CancelTask"].flatMap((method): WireCase[] => [
    {
      name: `${method} with an id is -32001`,
      body: rpc(method, { id: "task-1" }, 21),
      expect: { code: -32001 },
      event: rpcError(-32001, method),
    },
    {
      name: `${method} without params.id is -32602 naming id`,
      body: rpc(method, {}, 22),
      expect: { code: -32602, fields: ["id"] },
      event: rpcError(-32602, method),
    },
    {
      name: `${method} without params is -32602 naming id`,
      body: rpc(method, undefined, 23),
      expect: { code: -32602, fields: ["id"] },
      event: rpcError(-32602, method),
    },
  ]),
  {
    name: "ListTasks is an empty page",
    body: rpc("ListTasks", { contextId: "anything", pageSize: 50 }, 31),
    expect: { result: (result) => expect(result).toEqual({ tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 }) },
    event: success("ListTasks"),
  },
  ...[
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
  ].map(
    (method): WireCase => ({
      name: `${method} is -32003`,
      body: rpc(method, { taskId: "t", id: "c" }, 41),
      expect: { code: -32003 },
      event: rpcError(-32003, method),
    }),
  ),
  ...[...A2A_V03_METHODS].map(
    (method): WireCase => ({
      name: `the 0.3 name ${method} with a 1.0 header is -32601 naming the MCP URL`,
      body: rpc(method, {}, 51),
      expect: { code: -32601, mentionsMcp: true },
      event: rpcError(-32601, method),
    }),
  ),
  ...["frobnicate", "sendMessage", "constructor", "__proto__", "toString", ""].map(
    (method): WireCase => ({
      name: `an unknown method "${method}" is -32601, labelled unknown`,
      body: rpc(method, {}, 52),
      expect: { code: -32601, mentionsMcp: true },
      event: rpcError(-32601, "unknown"),
    }),
  ),
];

/** §6: what a 0.3 client (no version, or `0.x`) gets: `message/send` answered, everything else -32009. */
const V03 = (method: string | null) => ({ a2a_protocol_version: "0.3" as const, a2a_method: method });
const v03Rows: WireCase[] = [
  {
    name: "message/send without a version header gets the 0.3 pointer and echoes contextId",
    headers: V03_HEADERS,
    body: sendMessageV03(userMessageV03({ contextId: "ctx-03" }), "req-03"),
    expect: { result: expectPointerMessageV03("ctx-03") },
    event: { outcome: "success", ...V03("message/send") },
  },
  {
    name: "message/send without contextId gets a new UUID",
    headers: V03_HEADERS,
    body: sendMessageV03(userMessageV03()),
    expect: { result: expectPointerMessageV03(UUID) },
    event: { outcome: "success", ...V03("message/send") },
  },
  {
    name: "message/send with A2A-Version: 0.3 is the same",
    headers: { ...V03_HEADERS, "A2A-Version": "0.3" },
    body: sendMessageV03(userMessageV03({ contextId: "ctx-h" }), 2),
    expect: { result: expectPointerMessageV03("ctx-h") },
    event: { outcome: "success", ...V03("message/send") },
  },
  {
    name: "message/send with A2A-Version: 0.2.5 is the same (any 0.x)",
    headers: { ...V03_HEADERS, "A2A-Version": "0.2.5" },
    body: sendMessageV03(userMessageV03(), 3),
    expect: { result: expectPointerMessageV03(UUID) },
    event: { outcome: "success", ...V03("message/send") },
  },
  {
    name: "message/send with the query parameter 0.3 on /a2a/ is the same",
    headers: V03_HEADERS,
    path: "/a2a/?A2A-Version=0.3",
    body: sendMessageV03(userMessageV03({ contextId: "q" }), 4),
    expect: { result: expectPointerMessageV03("q") },
    event: { outcome: "success", ...V03("message/send") },
  },
  {
    name: "message/send with empty parts is -32602",
    headers: V03_HEADERS,
    body: sendMessageV03(userMessageV03({ parts: [] }), 5),
    expect: { code: -32602, fields: ["message.parts"] },
    event: rpcError(-32602, "message/send", "0.3"),
  },
  {
    name: "message/send without params is -32602 naming message",
    headers: V03_HEADERS,
    body: rpc("message/send", undefined, 6),
    expect: { code: -32602, fields: ["message"] },
    event: rpcError(-32602, "message/send", "0.3"),
  },
  {
    name: "message/send with a taskId is -32001",
    headers: V03_HEADERS,
    body: sendMessageV03(userMessageV03({ taskId: "task-1" }), 7),
    expect: { code: -32001 },
    event: rpcError(-32001, "message/send", "0.3"),
  },
  {
    name: "message/send with A2A-Version: 1.1 is -32009 (not a 0.x version)",
    headers: { ...V03_HEADERS, "A2A-Version": "1.1" },
    body: sendMessageV03(userMessageV03(), 8),
    expect: { code: -32009, mentionsMcp: true },
    event: rpcError(-32009, "message/send", "unsupported"),
  },
  ...A2A_V03_METHODS.filter((method) => method !== "message/send").map(
    (method): WireCase => ({
      name: `the 0.3 method ${method} without a version is -32009 naming the MCP URL`,
      headers: V03_HEADERS,
      body: rpc(method, { id: "task-1", message: userMessageV03() }, 61),
      expect: { code: -32009, mentionsMcp: true },
      event: rpcError(-32009, method, "0.3"),
    }),
  ),
  {
    name: "an unknown method without a version is -32009, labelled unknown",
    headers: V03_HEADERS,
    body: rpc("Message/Send", { message: userMessageV03() }, 62),
    expect: { code: -32009, mentionsMcp: true },
    event: rpcError(-32009, "unknown", "0.3"),
  },
];

describe("POST /a2a processing order (04 §3)", () => {
  it.each(processingRows.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    await runCase(row);
  });

  it("step 6: a notification is 204 with an empty body, whatever the method or version", async () => {
    const notifications: { body: unknown; headers: Record<string, string>; method: string }[] = [
      { body: { jsonrpc: "2.0", method: "SendMessage", params: { message: userMessage() } }, headers: V1_HEADERS, method: "SendMessage" },
      { body: { jsonrpc: "2.0", method: "no/such/method" }, headers: V1_HEADERS, method: "unknown" },
      { body: { jsonrpc: "2.0", method: "message/send" }, headers: { "Content-Type": "application/json" }, method: "message/send" },
      { body: { jsonrpc: "2.0", method: "ListTasks", params: {} }, headers: { "A2A-Version": "7.7" }, method: "ListTasks" },
    ];
    for (const notification of notifications) {
      const logs = captureConsole();
      const response = await postA2a(notification.body, { headers: notification.headers });
      expect(response.status).toBe(204);
      expect(await response.text()).toBe("");
      expectEndpointHeaders(response, false);
      expectOneA2aEvent(logs, { outcome: "notification_accepted", a2a_protocol_version: null, a2a_method: notification.method }, 204);
    }
  });
});

describe("A2A 1.0 method table (04 §4)", () => {
  it.each(methodRows.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    await runCase(row);
  });

  it("every SendMessage answer is new: fresh messageId and contextId each time", async () => {
    const first = await readRpc(await postA2a(sendMessage(userMessage())));
    const second = await readRpc(await postA2a(sendMessage(userMessage())));
    const a = first.result!.message as Record<string, string>;
    const b = second.result!.message as Record<string, string>;
    expect(a.messageId).not.toBe(b.messageId);
    expect(a.contextId).not.toBe(b.contextId);
  });

  it("builds every URL from PUBLIC_ORIGIN, not from the request host", async () => {
    const origin = "https://door.example.org";
    const response = await callDoor(
      "https://www.magnt.ru/a2a",
      { method: "POST", headers: V1_HEADERS, body: encoder.encode(JSON.stringify(sendMessage(userMessage()))) },
      { PUBLIC_ORIGIN: origin },
    );
    const text = await response.text();
    expect(text).toContain(`${origin}/mcp`);
    expect(text).not.toContain("www.magnt.ru");
    expect(text).not.toContain("https://magnt.ru");
    const unknown = await callDoor(
      "https://www.magnt.ru/a2a",
      { method: "POST", headers: { "Content-Type": "application/json" }, body: encoder.encode(JSON.stringify(rpc("x"))) },
      { PUBLIC_ORIGIN: origin },
    );
    const error = (await readRpc(unknown)).error!;
    expect(error.message).toContain(`${origin}/mcp`);
    expect(error.data![0]!.metadata).toEqual({ supportedVersions: "1.0", mcpUrl: `${origin}/mcp` });
  });
});

describe("A2A 0.3 compatibility (04 §6)", () => {
  it.each(v03Rows.map((row) => [row.name, row] as const))("%s", async (_name, row) => {
    await runCase(row);
  });

  it("the 0.3 pointer is built from PUBLIC_ORIGIN, not from the request host", async () => {
    const origin = "https://door.example.org";
    const response = await callDoor(
      "https://www.magnt.ru/a2a",
      { method: "POST", headers: V03_HEADERS, body: encoder.encode(JSON.stringify(sendMessageV03(userMessageV03()))) },
      { PUBLIC_ORIGIN: origin },
    );
    const text = await response.text();
    expect(text).toContain(`${origin}/mcp`);
    expect(text).not.toContain("magnt.ru");
  });
});

describe("body limit on /a2a (04 §3 step 1, 01 §5)", () => {
  const oversized = 25 * 1024;

  async function expectTooLarge(response: Response, logs: ReturnType<typeof captureConsole>) {
    expect(response.status).toBe(413);
    expectEndpointHeaders(response, true);
    expect(await readRpc(response)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Request payload too large" } });
    expectOneA2aEvent(logs, { outcome: "body_too_large", a2a_protocol_version: null, a2a_method: null }, 413);
  }

  it("a 25 KiB JSON body is 413 -32600 with id null", async () => {
    const logs = captureConsole();
    const padded = { ...sendMessage(userMessage()), pad: "x".repeat(oversized) };
    await expectTooLarge(await postA2a(padded), logs);
  });

  it("a 25 KiB text/plain body is 413, not 415", async () => {
    const logs = captureConsole();
    await expectTooLarge(await postA2a("x".repeat(oversized), { headers: { "Content-Type": "text/plain" } }), logs);
  });

  it("a chunked 25 KiB body without Content-Length is 413", async () => {
    const logs = captureConsole();
    const chunk = encoder.encode("y".repeat(1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 25) controller.close();
        else {
          sent += 1;
          controller.enqueue(chunk);
        }
      },
    });
    const request = new Request(`${ORIGIN}/a2a`, { method: "POST", headers: V1_HEADERS, body: stream });
    expect(request.headers.get("content-length")).toBeNull();
    await expectTooLarge(await callDoor(request), logs);
  });

  it("a body of exactly 24 576 bytes is processed", async () => {
    const logs = captureConsole();
    const json = JSON.stringify(rpc("ListTasks", {}, 1));
    const body = json + " ".repeat(MAX_POST_BODY_BYTES - json.length);
    expect(encoder.encode(body).byteLength).toBe(MAX_POST_BODY_BYTES);
    const response = await postA2a(body);
    expect(response.status).toBe(200);
    expect((await readRpc(response)).result).toBeDefined();
    expectOneA2aEvent(logs, success("ListTasks"));
  });
});

describe("other methods on /a2a (04 §2)", () => {
  it.each(["/a2a", "/a2a/"])("OPTIONS %s is the CORS preflight", async (path) => {
    const logs = captureConsole();
    const response = await callDoor(path, {
      method: "OPTIONS",
      headers: { Origin: "https://anything.example", "Access-Control-Request-Method": "POST" },
    });
    expect(response.status).toBe(204);
    expectEndpointHeaders(response, false);
    expect(response.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    expect(response.headers.get("access-control-allow-headers")).toBe("Content-Type, A2A-Version, A2A-Extensions");
    expect(response.headers.get("access-control-max-age")).toBe("86400");
    expect(await response.text()).toBe("");
    expectOneA2aEvent(logs, { outcome: "http_success", a2a_protocol_version: null, a2a_method: null }, 204);
  });

  it.each([
    ["GET", "/a2a"],
    ["GET", "/a2a/"],
    ["PUT", "/a2a"],
    ["DELETE", "/a2a/"],
    ["PATCH", "/a2a"],
  ])("%s %s is 405 with the JSON pointer", async (method, path) => {
    const logs = captureConsole();
    const response = await callDoor(path, { method });
    expect(response.status).toBe(405);
    expectEndpointHeaders(response, true);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect(await response.json()).toEqual({ error: "method_not_allowed", agent_card: CARD_URL, mcp: MCP_URL });
    expectOneA2aEvent(logs, { outcome: "method_not_allowed", a2a_protocol_version: null, a2a_method: null }, 405);
  });

  it("HEAD /a2a is 405 without a body", async () => {
    const logs = captureConsole();
    const response = await callDoor("/a2a", { method: "HEAD" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.text()).toBe("");
    expectOneA2aEvent(logs, { outcome: "method_not_allowed", a2a_protocol_version: null, a2a_method: null }, 405);
  });

  it("a request to a host outside the allow-list still yields a valid a2a_request event", async () => {
    const logs = captureConsole();
    const response = await callDoor("https://evil.example/a2a", {
      method: "POST",
      headers: V1_HEADERS,
      body: encoder.encode(JSON.stringify(rpc("ListTasks"))),
    });
    expect(response.status).toBe(403);
    expectOneA2aEvent(logs, { outcome: "host_rejected", a2a_protocol_version: null, a2a_method: null }, 403);
  });

  it("/a2a needs no Origin check: a foreign browser Origin is answered", async () => {
    const response = await postA2a(rpc("ListTasks"), { headers: { ...V1_HEADERS, Origin: "https://evil.example" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("paths near /a2a are not the bridge", async () => {
    for (const path of ["/a2a//", "/A2A", "/a2a/x"]) {
      const logs = captureConsole();
      await callDoor(path, { method: "POST", headers: V1_HEADERS, body: encoder.encode("{}") });
      expect(logs.events()[0]!.event_type).toBe("http");
    }
  });
});
