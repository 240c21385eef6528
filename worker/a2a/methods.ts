/**
 * Step 8 of the POST processing order: the A2A 1.0 method table (04 §4).
 *
 * The bridge has no task store, so every task method answers from a fixed
 * table: lookups find nothing, lists are empty, streaming and push are
 * unsupported. Anything not in the table — including 0.3 names such as
 * `message/send` sent with a 1.0 header — is `-32601` naming the MCP URL.
 */
import type { A2A_V1_METHODS } from "../contracts/events";
import type { JsonObject } from "./envelope";
import { rpcErrors, type JsonRpcError } from "./errors";
import { checkSendMessage, pointerMessage } from "./send-message";
import type { A2aUrls } from "./urls";

export type MethodAnswer =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: JsonRpcError };

type MethodHandler = (params: JsonObject, urls: A2aUrls) => MethodAnswer;
type A2aV1Method = (typeof A2A_V1_METHODS)[number];

const fail = (error: JsonRpcError): MethodAnswer => ({ ok: false, error });
const succeed = (result: unknown): MethodAnswer => ({ ok: true, result });

function sendMessage(params: JsonObject, urls: A2aUrls): MethodAnswer {
  const check = checkSendMessage(params);
  if (!check.valid) return fail(rpcErrors.invalidParams(check.missing));
  if (check.hasTaskId) return fail(rpcErrors.taskNotFound());
  return succeed(pointerMessage(urls, check.contextId));
}

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

export function dispatch(method: string, params: JsonObject, urls: A2aUrls): MethodAnswer {
  const handler = METHOD_TABLE.get(method);
  return handler ? handler(params, urls) : fail(rpcErrors.methodNotFound(urls));
}
