/**
 * Privacy invariant of the A2A bridge (10 §3, 01 §12, 04 §7): canaries in
 * message parts, contextId, messageId, ids, method and version strings, query
 * strings and referrers never reach a log line or an Analytics Engine point
 * (raw, lower-cased or as their SHA-256), on every path of the bridge. The
 * answers themselves echo only the JSON-RPC id and a well-formed contextId,
 * never message content.
 */
import { describe, expect, it } from "vitest";
import { callDoor, captureAnalytics, captureConsole } from "../helpers/door";
import { assertNoCanaryInTelemetry, Canaries } from "../helpers/privacy";
import { postA2a, rpc, V1_HEADERS } from "../fakes/a2a";

interface Drive {
  readonly name: string;
  /** Sends one request built with fresh canaries; returns the canaries the answer may legitimately echo. */
  readonly run: (c: Canaries) => Promise<{ response: Response; echoable: string[] }>;
}

/** A message whose every visitor-controlled string is a canary. */
function canaryMessage(c: Canaries, overrides: Record<string, unknown> = {}) {
  return {
    messageId: c.make("messageId"),
    contextId: c.make("contextId"),
    role: "ROLE_USER",
    parts: [
      { text: c.make("partText"), mediaType: "text/plain" },
      { data: { nested: { value: c.make("partData") }, [c.make("partDataKey")]: 1 }, mediaType: "application/json" },
      { url: `https://x.example/${c.make("partUrl")}`, filename: c.make("partFilename") },
    ],
    metadata: { note: c.make("messageMetadata") },
    referenceTaskIds: [c.make("referenceTaskId")],
    ...overrides,
  };
}

/** Headers and URL parts a visitor controls on every request. */
function canaryRequest(c: Canaries) {
  return {
    path: `/a2a?q=${c.make("query")}&A2A-Version=${c.make("queryVersion")}`,
    headers: { ...V1_HEADERS, Referer: `https://ref.example/${c.make("referrer")}` },
  };
}

const drives: Drive[] = [
  {
    name: "success (SendMessage)",
    run: async (c) => {
      const message = canaryMessage(c);
      const { path, headers } = canaryRequest(c);
      const id = c.make("rpcId");
      return { response: await postA2a(rpc("SendMessage", { message }, id), { path, headers }), echoable: [id, message.contextId] };
    },
  },
  {
    name: "success (0.3 message/send, no version)",
    run: async (c) => {
      const message = {
        kind: "message",
        messageId: c.make("v03MessageId"),
        contextId: c.make("v03ContextId"),
        role: "user",
        parts: [
          { kind: "text", text: c.make("v03PartText") },
          { kind: "data", data: { nested: c.make("v03PartData") } },
          { kind: "file", file: { uri: `https://x.example/${c.make("v03FileUri")}`, name: c.make("v03FileName") } },
        ],
        metadata: { note: c.make("v03Metadata") },
      };
      const path = `/a2a?q=${c.make("v03Query")}`;
      const headers = { "Content-Type": "application/json", Referer: `https://ref.example/${c.make("v03Referrer")}` };
      const id = c.make("v03RpcId");
      const response = await postA2a(rpc("message/send", { message, configuration: { blocking: true } }, id), { path, headers });
      return { response, echoable: [id, message.contextId] };
    },
  },
  {
    name: "-32001 (SendMessage with a taskId)",
    run: async (c) => {
      const message = canaryMessage(c, { taskId: c.make("taskId") });
      const { path, headers } = canaryRequest(c);
      return { response: await postA2a(rpc("SendMessage", { message }, 1), { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32602 (SendMessage without parts)",
    run: async (c) => {
      const message = canaryMessage(c, { parts: [] });
      const { path, headers } = canaryRequest(c);
      return { response: await postA2a(rpc("SendMessage", { message }, 1), { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32001 (GetTask) and -32003 / -32004 rows",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      for (const method of ["CreateTaskPushNotificationConfig", "SendStreamingMessage", "GetExtendedAgentCard", "CancelTask"]) {
        await postA2a(rpc(method, { id: c.make(`${method}Id`), message: canaryMessage(c) }, 1), { path, headers });
      }
      return { response: await postA2a(rpc("GetTask", { id: c.make("getTaskId") }, 1), { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32601 (canary method name)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      return { response: await postA2a(rpc(c.make("method"), { message: canaryMessage(c) }, 1), { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32009 (canary version header)",
    run: async (c) => {
      const { path } = canaryRequest(c);
      const headers = { "Content-Type": "application/json", "A2A-Version": c.make("headerVersion") };
      return { response: await postA2a(rpc("SendMessage", { message: canaryMessage(c) }, 1), { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32009 (canary version in the query only)",
    run: async (c) => {
      const path = `/a2a/?A2A-Version=0.${c.make("queryOnlyVersion")}`;
      return {
        response: await postA2a(rpc("SendMessage", { message: canaryMessage(c) }, 1), { path, headers: { "Content-Type": "application/json" } }),
        echoable: [],
      };
    },
  },
  {
    name: "notification (204)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      const body = { jsonrpc: "2.0", method: c.make("notificationMethod"), params: { message: canaryMessage(c) } };
      return { response: await postA2a(body, { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32600 (invalid envelope with canary id, method and params)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      const body = { jsonrpc: c.make("jsonrpc"), id: { x: c.make("objectId") }, method: c.make("badMethod"), params: [c.make("arrayParam")] };
      return { response: await postA2a(body, { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32600 (batch)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      return { response: await postA2a([rpc("SendMessage", { message: canaryMessage(c) }, c.make("batchId"))], { path, headers }), echoable: [] };
    },
  },
  {
    name: "-32700 (invalid JSON around a canary)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      return { response: await postA2a(`{"jsonrpc":"2.0","method":"${c.make("unparsed")}",`, { path, headers }), echoable: [] };
    },
  },
  {
    name: "415 / -32005 (canary content type and body)",
    run: async (c) => {
      const { path } = canaryRequest(c);
      const headers = { "Content-Type": `text/${c.make("contentType")}`, "A2A-Version": "1.0" };
      return { response: await postA2a(`plain ${c.make("plainBody")}`, { path, headers }), echoable: [] };
    },
  },
  {
    name: "413 (oversized body full of canaries)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      const message = canaryMessage(c, { parts: [{ text: c.make("hugePart").repeat(600) }] });
      return { response: await postA2a(rpc("SendMessage", { message }, 1), { path, headers }), echoable: [] };
    },
  },
  {
    name: "405 (GET with canary query and referrer)",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      return { response: await callDoor(path.replace("/a2a", "/a2a/"), { method: "GET", headers }), echoable: [] };
    },
  },
  {
    name: "OPTIONS preflight",
    run: async (c) => {
      const { path, headers } = canaryRequest(c);
      return { response: await callDoor(path, { method: "OPTIONS", headers: { ...headers, Origin: `https://${c.make("origin")}.example` } }), echoable: [] };
    },
  },
];

describe("A2A privacy canaries (10 §3)", () => {
  it.each(drives.map((drive) => [drive.name, drive] as const))("%s: nothing reaches the logs or Analytics Engine", async (_name, drive) => {
    const canaries = new Canaries();
    const logs = captureConsole();
    const analytics = captureAnalytics();
    const { response, echoable } = await drive.run(canaries);
    const body = await response.text();

    expect(logs.events().length).toBeGreaterThan(0);
    if (drive.name.startsWith("413")) expect(response.status).toBe(413);
    // One point per event, and no canary in either (the helper refuses an empty capture).
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });

    // The answer repeats nothing from the request but the id and a valid contextId.
    const mustNotEcho = canaries.all().filter((value) => !echoable.includes(value));
    for (const value of mustNotEcho) expect(body).not.toContain(value);
    for (const value of echoable) expect(body).toContain(value);
  });
});
