/**
 * `POST /mcp` (02 §1): the door's pre- and post-processing around the SDK's
 * stateless handler.
 *
 * Before: read the allow-listed request labels for telemetry and, for a known
 * tool, run the validation diagnostics with the tool's own schema. During: a
 * handler built for this request only, whose server factory closes over this
 * request's context (the SDK's factory is not given `env`). After: read the
 * answer when it is known to end, to record the outcome.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { MAX_POST_BODY_BYTES } from "../contracts/limits";
import { MCP_DOOR_VERSION } from "../contracts/versions";
import { TOOL_RESULT_INVALID_ARGUMENTS, TOOL_RESULT_UNCLASSIFIED } from "../contracts/events";
import { publicOrigin } from "../config/env";
import { textRejections, type DoorRequest } from "../edge/pipeline";
import { publicWriteLimiter } from "../edge/rate-limit";
import { jsonRpcErrorResponse, textResponse, withHeaders } from "../edge/responses";
import { diagnoseArguments } from "../edge/validation-diagnostics";
import { readMcpRequest } from "./request-metadata";
import { readMcpResponse } from "./response-reading";
import { buildPublicServer, publicTools } from "./public-server";
import type { ToolContext, ToolOutcome } from "./tool-definition";

/** Headers on every `/mcp` answer (02 §1). */
const MCP_HEADERS = { "Cache-Control": "no-store", "x-magnt-mcp-version": MCP_DOOR_VERSION } as const;

/** The MCP endpoint's edge rejections: JSON-RPC 403s, plain-text 413 (01 §3–§5). */
export const mcpRejections = {
  forbidden: (message: string) => withHeaders(jsonRpcErrorResponse(403, -32000, message), MCP_HEADERS),
  tooLarge: () => withHeaders(textRejections.tooLarge(), MCP_HEADERS),
} as const;

export function mcpMethodNotAllowed(): Response {
  return textResponse(405, "Method Not Allowed", { Allow: "POST, OPTIONS", ...MCP_HEADERS });
}

/** CORS preflight (01 §4): CORS headers only for an allowed Origin; none without one. */
export function serveMcpPreflight(req: DoorRequest): Response {
  const headers: Record<string, string> = { ...MCP_HEADERS };
  if (req.allowedOrigin !== null) {
    Object.assign(headers, {
      "Access-Control-Allow-Origin": req.allowedOrigin,
      Vary: "Origin",
      "Access-Control-Allow-Methods": "POST, OPTIONS",
      "Access-Control-Allow-Headers": "Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name",
      "Access-Control-Expose-Headers": "MCP-Protocol-Version",
      "Access-Control-Max-Age": "600",
    });
  }
  return new Response(null, { status: 204, headers });
}

export async function servePublicMcp(req: DoorRequest): Promise<Response> {
  const body = req.body ?? new Uint8Array(0);
  const info = readMcpRequest(body, req.request.headers);
  const tools = publicTools(req.env);
  const tool = info.method === "tools/call" ? tools.find((candidate) => candidate.name === info.toolName) : undefined;

  req.telemetry.annotate({
    mcp_protocol_version: info.protocolVersion,
    mcp_method: info.methodLabel,
    client_name: info.clientName,
    client_version: info.clientVersion,
    tool_name: info.method === "tools/call" ? (tool?.name ?? "unknown") : null,
    resource_name: info.resourceLabel,
  });
  const diagnostics = tool ? diagnoseArguments(tool.inputSchema, info.toolArguments) : null;
  if (diagnostics) req.telemetry.annotate(diagnostics);

  const ctx: ToolContext = {
    env: req.env,
    origin: publicOrigin(req.env),
    client: { name: info.clientName, version: info.clientVersion, protocolVersion: info.protocolVersion },
    controlledTest: req.telemetry.controlledTest,
    checkPublicWrite: publicWriteLimiter(req.request, req.env, req.role),
  };
  const recorded: { tool?: ToolOutcome } = {};
  const handler = createMcpHandler(
    () => buildPublicServer(ctx, tools, (outcome) => (recorded.tool = outcome)),
    // onerror only reports rejections the response already carries; the outcome
    // is read from the response itself (01 §9.2), so there is nothing to add here.
    { legacy: "stateless", maxRequestBodySize: MAX_POST_BODY_BYTES, onerror: () => undefined },
  );
  const sdkResponse = await handler.fetch(
    new Request(req.request.url, { method: "POST", headers: req.request.headers, body }),
  );

  const read = await readMcpResponse(sdkResponse, info.methodLabel);
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

  const headers: Record<string, string> = { ...MCP_HEADERS };
  if (req.allowedOrigin !== null) Object.assign(headers, { "Access-Control-Allow-Origin": req.allowedOrigin, Vary: "Origin" });
  return withHeaders(read.response, headers);
}
