/**
 * The owner gateway's route table (06 §2): the OAuth server's endpoints and
 * owner `/mcp`, admitted by the owner capability (gate + bearer check, 06 §4)
 * and served by core over the `OWNER_CORE` Service Binding (06 §5). Path
 * matching is exact and case-sensitive on the raw pathname; every event is
 * `http` with its `owner_step` (06 §9), and every path is sensitive (query and
 * referrer blanked, 01 §9.1). Wiring only: the gate, the hand-over to core and
 * the threat model are worker/owner/gateway.ts; `/mcp` is worded by the
 * SDK-free `mcp/http.ts`, so nothing here bundles the MCP SDK or a tool.
 */
import { textRejections, type DoorRequest, type Handler, type Route, type RouteLookup } from "../edge/pipeline";
import { mcpAnswerHeaders, mcpRejections, serveMcpPreflight } from "../mcp/http";
import {
  forwardOwnerMcp,
  gatedMethodNotAllowed,
  ownerHandler,
  ownerMcpPreflight,
  serveAuthorizationServerMetadata,
  serveAuthorize,
  serveConsentForm,
  serveGithubCallback,
  serveOAuthPreflight,
  serveProtectedResourceMetadata,
  serveRegister,
  serveToken,
  unknownOwnerPath,
  type OwnerStep,
} from "../owner/index";

function route(step: OwnerStep, methods: Record<string, Handler>): Route {
  return { eventType: "http", checkOrigin: false, methods, ...textRejections, methodNotAllowed: gatedMethodNotAllowed(step, textRejections.methodNotAllowed) };
}

/** Every owner `/mcp` answer carries the MCP endpoint's headers (02 §1), CORS for an allowed Origin. */
const mcpHeaders = (req: DoorRequest) => mcpAnswerHeaders(req.allowedOrigin);

export function ownerRoutes(): RouteLookup {
  const protectedResource = route("metadata", { GET: ownerHandler(serveProtectedResourceMetadata) });
  const exact = new Map<string, Route>([
    ["/.well-known/oauth-protected-resource", protectedResource],
    ["/.well-known/oauth-protected-resource/mcp", protectedResource],
    ["/.well-known/oauth-authorization-server", route("metadata", { GET: ownerHandler(serveAuthorizationServerMetadata) })],
    ["/oauth/register", route("register", { POST: ownerHandler(serveRegister), OPTIONS: ownerHandler(serveOAuthPreflight) })],
    ["/oauth/authorize", route("authorize", { GET: ownerHandler(serveAuthorize), POST: serveConsentForm })],
    ["/oauth/github/callback", route("github_callback", { GET: ownerHandler(serveGithubCallback) })],
    ["/oauth/token", route("other", { POST: ownerHandler(serveToken), OPTIONS: ownerHandler(serveOAuthPreflight) })],
    [
      "/mcp",
      {
        eventType: "http",
        checkOrigin: true,
        methods: { POST: ownerHandler(forwardOwnerMcp, mcpHeaders), OPTIONS: ownerMcpPreflight(serveMcpPreflight, mcpHeaders) },
        ...mcpRejections,
        methodNotAllowed: gatedMethodNotAllowed("mcp", mcpRejections.methodNotAllowed),
      },
    ],
  ]);
  const elsewhere: Route = { eventType: "http", checkOrigin: false, methods: {}, ...textRejections, methodNotAllowed: unknownOwnerPath };
  return (path) => exact.get(path) ?? elsewhere;
}
