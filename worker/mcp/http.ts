/**
 * The HTTP side of an MCP endpoint (02 §1, 01 §3–§5) without the SDK: the
 * headers every answer carries, the edge's rejections, the CORS preflight.
 * Route tables import only this module, so a deployable that forwards `/mcp`
 * (the gateway) never bundles the SDK, zod or any tool.
 */
import { MCP_DOOR_VERSION } from "../contracts/versions";
import { textRejections, type DoorRequest, type RouteRejections } from "../edge/pipeline";
import { jsonRpcErrorResponse, withHeaders } from "../edge/responses";

/** Headers on every `/mcp` answer (02 §1). */
export const MCP_HEADERS = { "Cache-Control": "no-store", "x-magnt-mcp-version": MCP_DOOR_VERSION } as const;

/** The answer headers for a request from `allowedOrigin` (null: no browser Origin, no CORS). */
export function mcpAnswerHeaders(allowedOrigin: string | null): Record<string, string> {
  return allowedOrigin === null
    ? { ...MCP_HEADERS }
    : { "Access-Control-Allow-Origin": allowedOrigin, Vary: "Origin", ...MCP_HEADERS };
}

/** The MCP endpoint's edge rejections: JSON-RPC 403s, plain-text 413 and 503, each with the MCP headers. */
export const mcpRejections: RouteRejections = {
  forbidden: (message) => withHeaders(jsonRpcErrorResponse(403, -32000, message), MCP_HEADERS),
  tooLarge: (allowedOrigin) => withHeaders(textRejections.tooLarge(null), mcpAnswerHeaders(allowedOrigin)),
  methodNotAllowed: (req, allow) => withHeaders(textRejections.methodNotAllowed(req, allow), MCP_HEADERS),
  unavailable: (allowedOrigin) => withHeaders(textRejections.unavailable(null), mcpAnswerHeaders(allowedOrigin)),
};

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
