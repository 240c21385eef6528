/**
 * A2A v1.0 discovery bridge (spec 04). PLACEHOLDER until the A2A issue lands:
 * the route table already points here so the edge rules (405, 413, telemetry
 * event types) hold for these paths.
 */
import type { DoorRequest } from "../edge/pipeline";
import { jsonResponse, textResponse } from "../edge/responses";
import { publicOrigin } from "../config/env";

export function serveAgentCard(_req: DoorRequest): Response {
  return textResponse(404, "Not found");
}

export function serveA2aPost(_req: DoorRequest): Response {
  return textResponse(404, "Not found");
}

export function serveA2aPreflight(_req: DoorRequest): Response {
  return new Response(null, { status: 204 });
}

export function a2aMethodNotAllowed(req: DoorRequest): Response {
  const origin = publicOrigin(req.env);
  return jsonResponse(
    405,
    { error: "method_not_allowed", agent_card: `${origin}/.well-known/agent-card.json`, mcp: `${origin}/mcp` },
    { Allow: "POST, OPTIONS", "Access-Control-Allow-Origin": "*" },
  );
}

export function a2aTooLarge(): Response {
  return jsonResponse(
    413,
    { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Request payload too large" } },
    { "Access-Control-Allow-Origin": "*", "A2A-Version": "1.0" },
  );
}
