/**
 * Reading the SDK's answer for telemetry (01 §9.2) without ever waiting on a
 * stream that may not end.
 *
 * - JSON bodies always end, so they are read: from their bytes (json-outcome.ts)
 *   unless the caller needs the text or that reader leaves them to `JSON.parse`.
 * - `text/event-stream` bodies are read only when the request was a single
 *   allow-listed method that is answered with one response (every allow-listed
 *   method except `subscriptions/listen`); on the 2025 lane the SDK closes such
 *   a stream right after the response.
 * - Everything else (`subscriptions/listen`, streams for other methods) is
 *   handed back unread with `outcome: stream_opened`.
 *
 * The door's own headers are added here, in the one copy a read answer needs
 * anyway (its body was consumed), rather than in a second copy afterwards.
 */
import { MCP_STREAMING_METHODS, type Outcome } from "../contracts/events";
import { withHeaders } from "../edge/responses";
import { messageFacts, readJsonOutcome, type MessageFacts } from "./json-outcome";
import { sentResponses, type SentMessages } from "./sent-messages";

/** As `Response.text()` decodes: UTF-8, a leading BOM dropped, invalid bytes replaced. */
const decoder = new TextDecoder();

interface ReadMcpResponse {
  /** The response to return, with the added headers: a copy of the original when unread, or rebuilt from the bytes read. */
  response: Response;
  outcome: Outcome | null;
  rpcErrorCode: number | null;
  /** The protocol version a successful `initialize` answered with. */
  initializeVersion: string | null;
  /** The body as read (decoded), or null when it was handed back unread or read from its bytes alone. */
  text: string | null;
}

/**
 * `wantText`: the caller needs the body as text (to keep a listing). Without
 * it a JSON answer carrying the one response its server sent (`sent`,
 * sent-messages.ts) is not read at all: its outcome is that response's, and
 * the door's headers are set on it in place (the SDK builds its answers with
 * the `Response` constructor, whose headers are mutable; only a `fetch()`
 * answer's are not). Any other JSON body is read from its bytes
 * (json-outcome.ts), neither decoded nor parsed unless that reader gives up on it.
 */
export async function readMcpResponse(
  response: Response,
  methodLabel: string | null,
  addHeaders: Record<string, string>,
  wantText: boolean,
  sent: SentMessages,
): Promise<ReadMcpResponse> {
  // Copied only when handed back unread: a read answer is rebuilt from its bytes below, in its one copy.
  const unread = (outcome: Outcome | null): ReadMcpResponse => ({ response: withHeaders(response, addHeaders), outcome, rpcErrorCode: null, initializeVersion: null, text: null });
  if (response.status === 202 || response.status === 204) return unread("notification_accepted");
  const contentType = (response.headers.get("content-type") ?? "").toLowerCase();
  const isStream = contentType.startsWith("text/event-stream");
  const answersOnce =
    methodLabel !== null && methodLabel !== "unknown" && !MCP_STREAMING_METHODS.includes(methodLabel);
  if (isStream && !answersOnce) return unread("stream_opened");
  if (!isStream && !contentType.includes("json")) return unread(null);

  // A JSON answer is the serialisation of the one response the server sent (a 5xx may be the SDK's own, so it is read).
  const responses = sentResponses(sent);
  if (!isStream && !wantText && responses.length === 1 && response.status < 500) {
    for (const [name, value] of Object.entries(addHeaders)) response.headers.set(name, value);
    return { response, text: null, ...classifyMessages(responses) };
  }

  // The bytes are read once and handed back as they are: decoded for reading only, never encoded again.
  const bytes = await response.arrayBuffer();
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(addHeaders)) headers.set(name, value);
  const rebuilt = new Response(bytes, { status: response.status, statusText: response.statusText, headers });
  if (!isStream && !wantText) {
    const read = readJsonOutcome(new Uint8Array(bytes));
    if (read.kind === "read") return { response: rebuilt, text: null, ...classifyMessages(read.messages) };
  }
  const text = decoder.decode(bytes);
  const messages = isStream ? parseEventStream(text) : parseJsonMessages(text);
  return { response: rebuilt, text, ...classifyMessages(messages.map(messageFacts)) };
}

function classifyMessages(messages: readonly (MessageFacts | null)[]): Omit<ReadMcpResponse, "response" | "text"> {
  let outcome: Outcome | null = null;
  let rpcErrorCode: number | null = null;
  let initializeVersion: string | null = null;
  for (const message of messages) {
    if (message === null) continue;
    if (message.error !== null) {
      outcome = "protocol_error";
      if (rpcErrorCode === null && message.error.code !== null) rpcErrorCode = message.error.code;
    } else if (message.result !== null) {
      if (message.result.isError) {
        if (outcome !== "protocol_error") outcome = "tool_error";
      } else if (outcome === null) {
        outcome = "success";
      }
      if (message.result.protocolVersion !== null) initializeVersion = message.result.protocolVersion;
    }
  }
  return { outcome, rpcErrorCode, initializeVersion };
}

function parseJsonMessages(text: string): unknown[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : [value];
  } catch {
    return [];
  }
}

/** Joins each event's `data:` lines and parses it as one JSON-RPC message. */
function parseEventStream(text: string): unknown[] {
  const messages: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (data === "") continue;
    try {
      messages.push(JSON.parse(data));
    } catch {
      // A non-JSON event carries no outcome.
    }
  }
  return messages;
}
