/**
 * The public route table (01 §2.1), shared by the monolith and, later, the
 * gateway (which answers `POST /mcp` by forwarding to core). Path matching is
 * exact and case-sensitive on the raw pathname.
 */
import type { EventType } from "../contracts/events";
import { textRejections, type Handler, type Route, type RouteLookup, type RouteRejections } from "../edge/pipeline";
import { notFound } from "../edge/responses";
import { serveStatic } from "../site/static-proxy";
import { mcpRejections, serveMcpPreflight } from "../mcp/http";
import { serveAiCatalog, serveServerCard, serveServerCardAlias } from "../mcp/server-card";
import { a2aRejections, serveA2aPost, serveA2aPreflight, serveAgentCard, serveLegacyAgentCard } from "../a2a/index";

interface PublicRouteHandlers {
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

function route(eventType: EventType, methods: Record<string, Handler>, rejections: RouteRejections = textRejections): Route {
  return { eventType, checkOrigin: false, methods, ...rejections };
}

/** A route that answers 404 to every method. */
function notFoundRoute(eventType: EventType): Route {
  return route(eventType, {}, Object.assign({}, textRejections, { methodNotAllowed: notFound }));
}

export function publicRoutes(handlers: PublicRouteHandlers): RouteLookup {
  const mcp: Route = Object.assign(route(handlers.mcpEventType, { POST: handlers.mcpPost, OPTIONS: serveMcpPreflight }, mcpRejections), {
    checkOrigin: true,
  });
  const exact = new Map<string, Route>([
    ["/mcp", mcp],
    ["/mcp/server-card", route("mcp_card", documentMethods(serveServerCard))],
    ["/.well-known/mcp/server-card.json", route("mcp_card", documentMethods(serveServerCardAlias))],
    ["/.well-known/ai-catalog.json", route("mcp_card", documentMethods(serveAiCatalog))],
    ["/.well-known/agent-card.json", route("a2a_card", documentMethods(serveAgentCard))],
    ["/.well-known/agent.json", route("a2a_card", documentMethods(serveLegacyAgentCard))],
    ["/__magnt_probe", route("http", { GET: handlers.probe, HEAD: handlers.probe })],
    ["/sse", notFoundRoute("http")],
  ]);
  const a2a = route("a2a_request", { POST: serveA2aPost, OPTIONS: serveA2aPreflight }, a2aRejections);
  exact.set("/a2a", a2a);
  exact.set("/a2a/", a2a);

  const mcpSubpath = notFoundRoute("http");
  const sseSubpath = notFoundRoute("http");
  const staticSite = route("http", { GET: serveStatic, HEAD: serveStatic });

  return (path) => {
    const route = exact.get(path);
    if (route) return route;
    if (path.startsWith("/mcp/")) return mcpSubpath;
    if (path.startsWith("/sse/")) return sseSubpath;
    return staticSite;
  };
}

