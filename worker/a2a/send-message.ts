/**
 * `SendMessage` (04 §4) and its A2A 0.3 twin `message/send` (04 §6): the
 * only methods with a result that says something.
 *
 * The bridge checks the message's shape, then answers with a fixed pointer to
 * MCP. Nothing of the incoming message is read beyond that shape check, and
 * nothing of it is echoed except a well-formed `contextId` (so the client can
 * file the answer in its conversation), stored, forwarded or logged.
 */
import { A2A_MODES } from "./agent-card";
import type { JsonObject } from "./envelope";
import { isJsonObject } from "./envelope";
import type { RequiredField } from "./errors";
import type { A2aUrls } from "./urls";

/** Longest `contextId` echoed back (04 §4), in code points. */
const CONTEXT_ID_MAX = 256;

type SendMessageCheck =
  | { readonly valid: true; readonly hasTaskId: boolean; readonly contextId: string | null }
  | { readonly valid: false; readonly missing: readonly RequiredField[] };

/**
 * The shape check: `params.message` with a `messageId` string, a `role`
 * string and a non-empty `parts` array. Empty strings count as missing, the
 * proto3 JSON reading of A2A 1.0 (an empty string is the unset default).
 */
export function checkSendMessage(params: JsonObject): SendMessageCheck {
  const message = params.message;
  if (!isJsonObject(message)) return { valid: false, missing: ["message"] };
  const missing: RequiredField[] = [];
  if (!isNonEmptyString(message.messageId)) missing.push("message.messageId");
  if (!isNonEmptyString(message.role)) missing.push("message.role");
  if (!Array.isArray(message.parts) || message.parts.length === 0) missing.push("message.parts");
  if (missing.length > 0) return { valid: false, missing };
  return { valid: true, hasTaskId: isPresent(message.taskId), contextId: echoableContextId(message.contextId) };
}

/** The client's `contextId` when it is a non-empty string of at most 256 code points, else null. */
function echoableContextId(value: unknown): string | null {
  if (!isNonEmptyString(value)) return null;
  return [...value].length <= CONTEXT_ID_MAX ? value : null;
}

/** Present in the proto3 JSON sense: neither absent, null nor the empty string. */
function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null && value !== "";
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

/** The fixed pointer text: same meaning for every visitor, quoting nothing it received. */
function pointerText(urls: A2aUrls): string {
  return (
    `MAGNT's capabilities are MCP tools at ${urls.mcp}. Connect with any MCP client over Streamable HTTP; ` +
    "no API key is needed. Start with the about_magnt tool. " +
    "This A2A endpoint does not read, store or forward the message it received."
  );
}

/** The structured pointer, identical in both dialects (04 §4, §6). */
function pointerData(urls: A2aUrls) {
  return {
    mcpUrl: urls.mcp,
    mcpTransport: "streamable-http",
    serverCardUrl: urls.serverCard,
    agentCardUrl: urls.agentCard,
  };
}

/** The `SendMessage` result: a direct agent message, never a task. */
export function pointerMessage(urls: A2aUrls, contextId: string | null) {
  const [textMode, jsonMode] = A2A_MODES;
  return {
    message: {
      messageId: crypto.randomUUID(),
      contextId: contextId ?? crypto.randomUUID(),
      role: "ROLE_AGENT",
      parts: [
        { text: pointerText(urls), mediaType: textMode },
        { data: pointerData(urls), mediaType: jsonMode },
      ],
    },
  };
}

/**
 * The A2A 0.3 `message/send` result (04 §6): the same pointer as a 0.3
 * `Message` — the result is the message itself, every object carries its
 * `kind`, the role is `agent`, and parts have no `mediaType` (0.3 has none).
 */
export function pointerMessageV03(urls: A2aUrls, contextId: string | null) {
  return {
    kind: "message",
    messageId: crypto.randomUUID(),
    contextId: contextId ?? crypto.randomUUID(),
    role: "agent",
    parts: [
      { kind: "text", text: pointerText(urls) },
      { kind: "data", data: pointerData(urls) },
    ],
  };
}
