/**
 * `serveMcp`: the door's "before / SDK / after" sequence around the SDK's
 * stateless handler, for any MCP server of this codebase (the public door
 * today, the owner server of 06 next).
 *
 * Before: read the allow-listed request labels for telemetry and, for a known
 * tool, run the validation diagnostics with the tool's own schema. During: the
 * isolate's one SDK handler, whose factory builds this request's server from a
 * factory that closes over this request's context (the SDK's factory is given
 * the request, not `env`). After: record the outcome (01 §9.2), from the
 * response the server sent when the answer is its JSON serialisation
 * (sent-messages.ts), else by reading the answer when it is known to end.
 *
 * Threat model: the body is visitor-controlled. Only sanitised labels reach
 * telemetry; arguments go to the SDK untouched and are never logged; a tool's
 * own outcome is recorded through a listener, never by parsing its text.
 */
import { createMcpHandler, preloadSchemas, type AuthInfo, type McpHttpHandler, type McpServer } from "@modelcontextprotocol/server";
import { MAX_POST_BODY_BYTES } from "../contracts/limits";
import { TOOL_RESULT_INVALID_ARGUMENTS, TOOL_RESULT_UNCLASSIFIED, toolNameLabel, UNKNOWN_VALUE } from "../contracts/events";
import type { DoorRequest } from "../edge/pipeline";
import { diagnoseArguments } from "../edge/validation-diagnostics";
import type { RegisteredTool, ToolOutcome } from "../lib/tool-definition";
import { mcpAnswerHeaders } from "./http";
import { keepListing, listingRequest, recallListing } from "./listing-cache";
import { readMcpRequest, type McpRequestInfo } from "./request-metadata";
import { readMcpResponse } from "./response-reading";
import { watchSentMessages, type SentMessages } from "./sent-messages";

// What the SDK's workerd shim did before worker/mcp/sdk-shims.ts replaced it: build
// the SDK's wire schemas while the isolate warms up, not inside a billed request.
preloadSchemas();

const HANDLER_OPTIONS = {
  legacy: "stateless",
  maxRequestBodySize: MAX_POST_BODY_BYTES,
  // onerror only reports rejections the response already carries; the outcome
  // is read from the response itself (01 §9.2), so there is nothing to add here.
  onerror: () => undefined,
} as const;

/** Each request's server factory, found again by the request the SDK hands its factory (`requestInfo`). */
const factories = new WeakMap<Request, () => McpServer>();
let shared: McpHttpHandler | undefined;

/**
 * One SDK handler per isolate, as the SDK is meant to be used (one
 * `createMcpHandler`, a fresh server per request from its factory): building a
 * handler per request built its event bus, listen router and closures again on
 * every request (issue 21). The factory is given the request being served, so
 * it finds that request's own server factory, which closes over the request's
 * context (`env`, the client, the outcome listener). Built on first use, not at
 * module load, so nothing runs in the Worker's global scope.
 */
function sharedHandler(): McpHttpHandler {
  shared ??= createMcpHandler(({ requestInfo }) => {
    const factory = requestInfo === undefined ? undefined : factories.get(requestInfo);
    // A bug, never a visitor's doing: the SDK answers it as its fixed 500.
    if (factory === undefined) throw new Error("serveMcp: the SDK served a request without a registered server factory");
    return factory();
  }, HANDLER_OPTIONS);
  return shared;
}

/** Called once per tool call with what the tool returned, so the wrapper can record it. */
export type ToolOutcomeListener = (outcome: ToolOutcome) => void;

export interface McpServing {
  /** The tools this request's server registers (for the `tool_name` label and the diagnostics). */
  readonly tools: readonly RegisteredTool<string>[];
  /** Builds this request's server; it reports each tool outcome to `onToolOutcome`. */
  createServer(info: McpRequestInfo, onToolOutcome: ToolOutcomeListener): McpServer;
  /**
   * The verified identity of an authenticated server (the owner server, 06 §5),
   * handed to the SDK so its per-tool scope challenges can answer 403. Absent
   * on the public door, which has no identity at all.
   */
  readonly authInfo?: AuthInfo;
  /**
   * Everything this serving's `tools/list` answer and `keptCalls` answers
   * depend on besides the request (for the public server: the origin, the tool
   * set, whether contact storage is bound), or absent when nothing of it is
   * kept (listing-cache.ts).
   */
  readonly answerKey?: string;
  /** Tools whose answer depends on `answerKey` alone (no argument, no storage read), kept like listings. */
  readonly keptCalls?: readonly string[];
}

export async function serveMcp(req: DoorRequest, serving: McpServing): Promise<Response> {
  const body = req.body ?? new Uint8Array(0);
  const info = readMcpRequest(body, req.request.headers);
  const tool = info.method === "tools/call" ? serving.tools.find((candidate) => candidate.name === info.toolName) : undefined;

  req.telemetry.annotate({
    mcp_protocol_version: info.protocolVersion,
    mcp_method: info.methodLabel,
    client_name: info.clientName,
    client_version: info.clientVersion,
    tool_name: info.method === "tools/call" ? toolNameLabel(tool?.name ?? UNKNOWN_VALUE) : null,
    resource_name: info.resourceLabel,
  });
  const diagnostics = tool ? diagnoseArguments(tool.inputSchema, info.toolArguments) : null;
  if (diagnostics) req.telemetry.annotate(diagnostics);

  // A listing (or kept call) answered before under the same key is answered again from its kept bytes, without the SDK.
  const answerHeaders = mcpAnswerHeaders(req.allowedOrigin);
  const listing = serving.answerKey !== undefined && serving.authInfo === undefined ? listingRequest(serving.answerKey, serving.keptCalls ?? [], req.request, info.parsedBody) : null;
  const recalled = listing === null ? null : recallListing(listing, answerHeaders);
  if (recalled !== null) {
    if (recalled.telemetry !== null) req.telemetry.annotate(recalled.telemetry);
    req.telemetry.annotate({ outcome: "success" });
    return recalled.response;
  }

  const recorded: { tool?: ToolOutcome } = {};
  const sent: SentMessages = [];
  const createServer = () => watchSentMessages(serving.createServer(info, (outcome) => (recorded.tool = outcome)), sent);
  // The body is parsed once, above. Given it as `parsedBody`, the SDK reads nothing from the request's
  // body (it neither clones the request nor decodes and parses the body again: the same text through the
  // same decoder, so the same value), so the request goes in as it came, its body already buffered by the
  // pipeline, and the shared handler's factory finds this request's server by it. Only a body that is not
  // JSON goes in a copy, to a handler of its own (the SDK reads the copy through a clone of it, which no
  // lookup could find), for the SDK to answer its own parse error as before.
  const auth = serving.authInfo !== undefined ? { authInfo: serving.authInfo } : {};
  let sdkResponse: Response;
  if (info.parsedBody !== undefined) {
    factories.set(req.request, createServer);
    sdkResponse = await sharedHandler().fetch(req.request, { parsedBody: info.parsedBody, ...auth });
  } else {
    const copy = new Request(req.request.url, { method: "POST", headers: req.request.headers, body });
    sdkResponse = await createMcpHandler(createServer, HANDLER_OPTIONS).fetch(copy, auth);
  }

  const read = await readMcpResponse(sdkResponse, info.methodLabel, answerHeaders, listing !== null, sent);
  // Only a result is kept: "success" means no message of the answer was an error.
  if (listing !== null && read.outcome === "success" && read.text !== null) {
    keepListing(listing, sdkResponse.status, sdkResponse.headers, read.text, recorded.tool?.telemetry ?? null);
  }
  if (recorded.tool) req.telemetry.annotate(recorded.tool.telemetry);
  if (read.outcome !== null) req.telemetry.annotate({ outcome: read.outcome });
  else if (sdkResponse.status >= 500) req.telemetry.annotate({ outcome: "handler_error" });
  if (read.rpcErrorCode !== null) req.telemetry.annotate({ rpc_error_code: read.rpcErrorCode });
  if (info.method === "initialize" && read.outcome === "success" && read.initializeVersion !== null) {
    req.telemetry.annotate({ mcp_protocol_version: read.initializeVersion });
  }
  if (diagnostics?.validation_status === "invalid") {
    req.telemetry.annotate({ tool_result: TOOL_RESULT_INVALID_ARGUMENTS });
  } else if (read.outcome === "tool_error" && !recorded.tool?.telemetry.tool_result) {
    req.telemetry.annotate({ tool_result: TOOL_RESULT_UNCLASSIFIED });
  }

  return read.response;
}
