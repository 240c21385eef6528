/**
 * Step 8 of the POST processing order: the A2A 1.0 method table (04 §4) and
 * the one 0.3 method the bridge answers (04 §6).
 *
 * The bridge has no task store, so every task method answers from a fixed
 * table: lookups find nothing, lists are empty, streaming and push are
 * unsupported. Anything not in the table — including 0.3 names such as
 * `message/send` sent with a 1.0 header — is `-32601` naming the MCP URL.
 *
 * A 0.3 client (no version, or `0.x`) gets its `message/send` answered with
 * the same pointer in 0.3 shape, so that the clients which read the legacy
 * card learn where MCP is from the answer they expect; every other 0.3 call
 * stays `-32009`, which names the MCP URL too.
 */
import type { A2A_V1_METHODS } from "../contracts/events";
import type { JsonObject } from "./envelope";
import { rpcErrors, type JsonRpcError } from "./errors";
import { checkSendMessage, pointerMessage, pointerMessageV03 } from "./send-message";
import type { A2aUrls } from "./urls";

export type MethodAnswer =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: JsonRpcError };

type MethodHandler = (params: JsonObject, urls: A2aUrls) => MethodAnswer;
type A2aV1Method = (typeof A2A_V1_METHODS)[number];

const fail = (error: JsonRpcError): MethodAnswer => ({ ok: false, error });
const succeed = (result: unknown): MethodAnswer => ({ ok: true, result });

/**
 * `SendMessage` and 0.3 `message/send`: one shape check and one decision, so
 * the two dialects cannot drift apart; only the rendering of the pointer differs.
 */
function sendMessageAs(render: (urls: A2aUrls, contextId: string | null) => unknown): MethodHandler {
  return (params, urls) => {
    const check = checkSendMessage(params);
    if (!check.valid) return fail(rpcErrors.invalidParams(check.missing));
    if (check.hasTaskId) return fail(rpcErrors.taskNotFound());
    return succeed(render(urls, check.contextId));
  };
}

const sendMessage = sendMessageAs(pointerMessage);
const sendMessageV03 = sendMessageAs(pointerMessageV03);

/** `GetTask`, `CancelTask`: the id is required; no task ever exists. */
function taskLookup(params: JsonObject): MethodAnswer {
  if (typeof params.id !== "string" || params.id === "") return fail(rpcErrors.invalidParams(["id"]));
  return fail(rpcErrors.taskNotFound());
}

const EMPTY_TASK_LIST = { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 } as const;

const unsupported: MethodHandler = () => fail(rpcErrors.unsupportedOperation());
const pushUnsupported: MethodHandler = () => fail(rpcErrors.pushNotificationNotSupported());

/**
 * Complete over the v1.0 names (the `Record` makes a missing row a type
 * error). A `Map`, not an object lookup, so `constructor` or `__proto__` as a
 * method name cannot reach a prototype member.
 */
const METHOD_TABLE: ReadonlyMap<string, MethodHandler> = new Map(
  Object.entries({
    SendMessage: sendMessage,
    SendStreamingMessage: unsupported,
    SubscribeToTask: unsupported,
    GetTask: taskLookup,
    CancelTask: taskLookup,
    ListTasks: () => succeed(EMPTY_TASK_LIST),
    CreateTaskPushNotificationConfig: pushUnsupported,
    GetTaskPushNotificationConfig: pushUnsupported,
    ListTaskPushNotificationConfigs: pushUnsupported,
    DeleteTaskPushNotificationConfig: pushUnsupported,
    GetExtendedAgentCard: unsupported,
  } satisfies Record<A2aV1Method, MethodHandler>),
);

/** A request that announced A2A 1.0 (04 §4). */
export function dispatch(method: string, params: JsonObject, urls: A2aUrls): MethodAnswer {
  const handler = METHOD_TABLE.get(method);
  return handler ? handler(params, urls) : fail(rpcErrors.methodNotFound(urls));
}

/** The one A2A 0.3 method answered (04 §6); the 0.3 name is exact, as on the wire. */
const V03_SEND_MESSAGE = "message/send";

/** A request that announced no version or a 0.x one (04 §6). */
export function dispatchV03(method: string, params: JsonObject, urls: A2aUrls): MethodAnswer {
  return method === V03_SEND_MESSAGE ? sendMessageV03(params, urls) : fail(rpcErrors.versionNotSupported(urls));
}
