/**
 * The JSON-RPC errors of the A2A bridge (04 §5).
 *
 * Every message here is fixed text or built from `PUBLIC_ORIGIN`: an error
 * never quotes request content (method names, versions, ids, message parts),
 * so a visitor cannot make the door repeat a payload back, and the telemetry
 * can record the code without ever seeing text that came from outside.
 */
import { A2A_PROTOCOL_VERSION } from "../contracts/versions";
import type { A2aUrls } from "./urls";

/** `google.rpc.ErrorInfo`, the one detail every A2A-specific error carries. */
interface ErrorInfoDetail {
  readonly "@type": "type.googleapis.com/google.rpc.ErrorInfo";
  readonly reason: string;
  readonly domain: "a2a-protocol.org";
  readonly metadata: Readonly<Record<string, string>>;
}

/** `google.rpc.BadRequest`, the detail of `-32602` naming the missing fields. */
interface BadRequestDetail {
  readonly "@type": "type.googleapis.com/google.rpc.BadRequest";
  readonly fieldViolations: readonly { readonly field: string; readonly description: "required" }[];
}

export interface JsonRpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: readonly (ErrorInfoDetail | BadRequestDetail)[];
}

/** The A2A-specific codes and their `ErrorInfo.reason` (04 §5). */
const A2A_ERROR_REASONS = {
  [-32001]: "TASK_NOT_FOUND",
  [-32003]: "PUSH_NOTIFICATION_NOT_SUPPORTED",
  [-32004]: "UNSUPPORTED_OPERATION",
  [-32005]: "CONTENT_TYPE_NOT_SUPPORTED",
  [-32009]: "VERSION_NOT_SUPPORTED",
} as const;
type A2aErrorCode = keyof typeof A2A_ERROR_REASONS;

/**
 * The single builder of A2A-specific errors: the code decides the reason, so
 * a code and its ErrorInfo can never disagree.
 */
function a2aError(code: A2aErrorCode, message: string, metadata: Record<string, string> = {}): JsonRpcError {
  return {
    code,
    message,
    data: [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: A2A_ERROR_REASONS[code],
        domain: "a2a-protocol.org",
        metadata,
      },
    ],
  };
}

/** Standard JSON-RPC errors carry no `data` (04 §5). */
function plainError(code: -32700 | -32600 | -32601, message: string): JsonRpcError {
  return { code, message };
}

/** The JSON paths `-32602` may name (04 §4); a closed list, so no request text can appear. */
export type RequiredField = "message" | "message.messageId" | "message.role" | "message.parts" | "id";

export const rpcErrors = {
  parseError: () => plainError(-32700, "Parse error: the body is not valid JSON"),
  payloadTooLarge: () => plainError(-32600, "Request payload too large"),
  batchNotSupported: () => plainError(-32600, "batch requests are not supported"),
  invalidRequest: () =>
    plainError(
      -32600,
      'Invalid Request: expected one JSON-RPC 2.0 object with "jsonrpc": "2.0", a string "method", ' +
        'an "id" that is a string, an integer or null, and "params" absent or an object',
    ),
  methodNotFound: (urls: A2aUrls) =>
    plainError(
      -32601,
      `Method not found. This A2A ${A2A_PROTOCOL_VERSION} endpoint only answers SendMessage with a pointer: ` +
        `MAGNT's tools are MCP tools at ${urls.mcp}`,
    ),
  invalidParams: (missing: readonly RequiredField[]): JsonRpcError => ({
    code: -32602,
    message: "Invalid params: required fields are missing",
    data: [
      {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        fieldViolations: missing.map((field) => ({ field, description: "required" as const })),
      },
    ],
  }),
  taskNotFound: () => a2aError(-32001, "Task not found: this endpoint creates no tasks"),
  pushNotificationNotSupported: () => a2aError(-32003, "Push notifications are not supported"),
  unsupportedOperation: () =>
    a2aError(-32004, "This operation is not supported: this endpoint answers SendMessage only, with a direct message"),
  contentTypeNotSupported: () =>
    a2aError(-32005, "Content type not supported: send the JSON-RPC request as application/json"),
  versionNotSupported: (urls: A2aUrls) =>
    a2aError(
      -32009,
      `A2A version not supported: this endpoint serves A2A ${A2A_PROTOCOL_VERSION} (send the header ` +
        `A2A-Version: ${A2A_PROTOCOL_VERSION}); of A2A 0.3 it answers only message/send. ` +
        `MAGNT's tools are MCP tools at ${urls.mcp}`,
      { supportedVersions: A2A_PROTOCOL_VERSION, mcpUrl: urls.mcp },
    ),
} as const;
