/**
 * Core's route table (01 §2.2): reachable only through Service Bindings.
 * `/mcp` exactly like the monolith (same guards, same telemetry, role `core`),
 * the probe the gateway asks, and 404 for every other path.
 */
import { textRejections, type Handler, type Route, type RouteLookup } from "../edge/pipeline";
import { notFound } from "../edge/responses";
import { mcpRejections, serveMcpPreflight } from "../mcp/http";

export interface CoreRouteHandlers {
  readonly mcpPost: Handler;
  readonly probe: Handler;
}

export function coreRoutes(handlers: CoreRouteHandlers): RouteLookup {
  const mcp: Route = {
    eventType: "mcp_request",
    checkOrigin: true,
    methods: { POST: handlers.mcpPost, OPTIONS: serveMcpPreflight },
    ...mcpRejections,
  };
  const probe: Route = { eventType: "http", checkOrigin: false, methods: { GET: handlers.probe, HEAD: handlers.probe }, ...textRejections };
  const elsewhere: Route = { eventType: "http", checkOrigin: false, methods: {}, ...textRejections, methodNotAllowed: notFound };
  return (path) => (path === "/mcp" ? mcp : path === "/__magnt_probe" ? probe : elsewhere);
}
