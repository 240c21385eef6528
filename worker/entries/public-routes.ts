/**
 * The public route table (01 §2.1), shared by the monolith and, later, the
 * gateway (which answers `POST /mcp` by forwarding to core). Path matching is
 * exact and case-sensitive on the raw pathname.
 */
import type { EventType } from "../contracts/events";
import type { Handler, Route, RouteLookup } from "../edge/pipeline";
import { textRejections } from "../edge/pipeline";
import { methodNotAllowed, notFound } from "../edge/responses";
import { serveStatic } from "../site/static-proxy";
import { mcpMethodNotAllowed, mcpRejections, serveMcpPreflight } from "../mcp/handler";
import { serveAiCatalog, serveServerCard, serveServerCardAlias } from "../mcp/server-card";
import {
  a2aForbidden,
  a2aMethodNotAllowed,
  a2aTooLarge,
  serveA2aPost,
  serveA2aPreflight,
  serveAgentCard,
} from "../a2a/index";

export interface PublicRouteHandlers {
  /** `POST /mcp`: served in place (monolith) or forwarded to core (gateway). */
  readonly mcpPost: Handler;
  /** `/mcp` is `mcp_request` where tools execute, `http` on the gateway (01 §2.1). */
  readonly mcpEventType: EventType;
  /** The probe: local facts (monolith) or core's facts (gateway). */
  readonly probe: Handler;
}

/** GET, HEAD and OPTIONS of one document handler. */
function documentMethods(handler: Handler): Record<string, Handler> {
  return { GET: handler, HEAD: handler, OPTIONS: handler };
}

function plainRoute(eventType: EventType, methods: Record<string, Handler>, allow: string): Route {
  return {
    eventType,
    checkOrigin: false,
    methods,
    methodNotAllowed: () => methodNotAllowed(allow),
    ...textRejections,
  };
}

/** A route that answers 404 to every method. */
function notFoundRoute(eventType: EventType): Route {
  return { eventType, checkOrigin: false, methods: {}, methodNotAllowed: notFound, ...textRejections };
}

export function publicRoutes(handlers: PublicRouteHandlers): RouteLookup {
  const mcp: Route = {
    eventType: handlers.mcpEventType,
    checkOrigin: true,
    methods: { POST: handlers.mcpPost, OPTIONS: serveMcpPreflight },
    methodNotAllowed: mcpMethodNotAllowed,
    ...mcpRejections,
  };
  const exact = new Map<string, Route>([
    ["/mcp", mcp],
    ["/mcp/server-card", plainRoute("mcp_card", documentMethods(serveServerCard), "GET, HEAD, OPTIONS")],
    ["/.well-known/mcp/server-card.json", plainRoute("mcp_card", documentMethods(serveServerCardAlias), "GET, HEAD, OPTIONS")],
    ["/.well-known/ai-catalog.json", plainRoute("mcp_card", documentMethods(serveAiCatalog), "GET, HEAD, OPTIONS")],
    ["/.well-known/agent-card.json", plainRoute("a2a_card", documentMethods(serveAgentCard), "GET, HEAD, OPTIONS")],
    ["/.well-known/agent.json", plainRoute("a2a_card", documentMethods(serveAgentCard), "GET, HEAD, OPTIONS")],
    ["/__magnt_probe", plainRoute("http", { GET: handlers.probe, HEAD: handlers.probe }, "GET, HEAD")],
    ["/sse", notFoundRoute("http")],
  ]);
  const a2a: Route = {
    eventType: "a2a_request",
    checkOrigin: false,
    methods: { POST: serveA2aPost, OPTIONS: serveA2aPreflight },
    methodNotAllowed: a2aMethodNotAllowed,
    forbidden: a2aForbidden,
    tooLarge: a2aTooLarge,
  };
  exact.set("/a2a", a2a);
  exact.set("/a2a/", a2a);

  const mcpSubpath = notFoundRoute("http");
  const sseSubpath = notFoundRoute("http");
  const staticSite = plainRoute("http", { GET: serveStatic, HEAD: serveStatic }, "GET, HEAD");

  return (path) => {
    const route = exact.get(path);
    if (route) return route;
    if (path.startsWith("/mcp/")) return mcpSubpath;
    if (path.startsWith("/sse/")) return sseSubpath;
    return staticSite;
  };
}

