/**
 * What the door learns from an MCP request body before the SDK sees it (01 §9.2):
 * the allow-listed method, protocol version, self-reported client identity and,
 * for `tools/call` / `resources/read`, which tool or resource. Only these
 * sanitised labels reach telemetry; arguments are handed on untouched for the
 * validation diagnostics and never logged.
 */
import { EVENT_FIELD_MAX } from "../contracts/limits";
import { MCP_METHOD_ALLOWLIST, UNKNOWN_VALUE, type McpMethodLabel, type ResourceNameLabel } from "../contracts/events";
import { PROFILE_RESOURCE_URI } from "../contracts/tools";
import { isRecord } from "../contracts/guards";
import { sanitizeText } from "../edge/sanitize";

const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";

export interface McpRequestInfo {
  /** The raw JSON-RPC method when the body is one JSON object with a string method, else null. */
  method: string | null;
  /** The telemetry label: the method when allow-listed, `unknown` otherwise, null when unparsed. */
  methodLabel: McpMethodLabel | null;
  protocolVersion: string | null;
  clientName: string | null;
  clientVersion: string | null;
  /** `tools/call` only: the requested tool name as sent (not yet checked against the server). */
  toolName: string | null;
  /** `tools/call` only: whether `params` carries an `arguments` member, and its value. */
  toolArguments: unknown;
  /** `resources/read` only: `magnt://profile` or `unknown`. */
  resourceLabel: ResourceNameLabel | null;
  /**
   * The body as `JSON.parse` read it (any JSON value), or undefined when it is
   * not JSON. Handed to the SDK as its `parsedBody`, so the body is decoded and
   * parsed once per request, not again (after a `clone()`) inside the SDK.
   */
  parsedBody: unknown;
}

const EMPTY: McpRequestInfo = {
  method: null,
  methodLabel: null,
  protocolVersion: null,
  clientName: null,
  clientVersion: null,
  toolName: null,
  toolArguments: undefined,
  resourceLabel: null,
  parsedBody: undefined,
};

const decoder = new TextDecoder();

/** Parses the buffered body once; a parse failure is left to the SDK (it reads the body itself and answers 400). */
export function readMcpRequest(body: Uint8Array, headers: Headers): McpRequestInfo {
  const headerVersion = sanitizeText(headers.get("mcp-protocol-version"), EVENT_FIELD_MAX.mcp_protocol_version);
  let message: unknown;
  try {
    message = JSON.parse(decoder.decode(body));
  } catch {
    return Object.assign({}, EMPTY, { protocolVersion: headerVersion });
  }
  if (!isRecord(message) || typeof message.method !== "string") {
    return Object.assign({}, EMPTY, { protocolVersion: headerVersion, parsedBody: message });
  }

  const method = message.method;
  const params = isRecord(message.params) ? message.params : {};
  const meta = isRecord(params._meta) ? params._meta : {};
  const clientInfo = method === "initialize" ? params.clientInfo : meta[META_CLIENT_INFO];
  const versionSource = [meta[META_PROTOCOL_VERSION], params.protocolVersion].find((value) => value !== undefined);

  return {
    method,
    methodLabel: isAllowListed(method) ? method : UNKNOWN_VALUE,
    protocolVersion:
      versionSource !== undefined
        ? sanitizeText(versionSource, EVENT_FIELD_MAX.mcp_protocol_version)
        : headerVersion,
    clientName: isRecord(clientInfo) ? sanitizeText(clientInfo.name, EVENT_FIELD_MAX.client_name) : null,
    clientVersion: isRecord(clientInfo) ? sanitizeText(clientInfo.version, EVENT_FIELD_MAX.client_version) : null,
    toolName: method === "tools/call" && typeof params.name === "string" ? params.name : null,
    toolArguments: method === "tools/call" ? params.arguments : undefined,
    resourceLabel: method === "resources/read" ? (params.uri === PROFILE_RESOURCE_URI ? PROFILE_RESOURCE_URI : UNKNOWN_VALUE) : null,
    parsedBody: message,
  };
}

function isAllowListed(method: string): method is (typeof MCP_METHOD_ALLOWLIST)[number] {
  return (MCP_METHOD_ALLOWLIST as readonly string[]).includes(method);
}
