/**
 * The A2A v1.0 Agent Card (04 §1), served with identical bytes at
 * `/.well-known/agent-card.json` and `/.well-known/agent.json`.
 *
 * Strict v1.0 on purpose: no 0.3 fields (`url`, `protocolVersion`,
 * `preferredTransport`, `additionalInterfaces`,
 * `supportsAuthenticatedExtendedCard`), no `kind`, no extensions, security
 * schemes or signatures. A 0.3 client that cannot read it learns where MCP is
 * from the `-32009` answer of the endpoint instead (04 §6).
 */
import { A2A_PROTOCOL_VERSION, AGENT_CARD_VERSION } from "../contracts/versions";
import { memoizeDocument, serveDocument, type DocumentHeaders } from "../edge/cacheable-document";
import type { DoorRequest } from "../edge/pipeline";
import { publicOrigin } from "../config/env";
import { a2aUrlsFor } from "./urls";

/** The v1.0 JSON-RPC binding name of `AgentInterface.protocolBinding`. */
const A2A_JSONRPC_BINDING = "JSONRPC";
/** Media types the bridge accepts and answers with (card modes and result parts). */
export const A2A_MODES = ["text/plain", "application/json"] as const;

function buildAgentCard(origin: string) {
  const urls = a2aUrlsFor(origin);
  return {
    name: "MAGNT",
    description:
      "Public door to Alexander Redkov, a human. MAGNT's capabilities (profile, private messages for human review, " +
      `shared task signals) are MCP tools at ${urls.mcp}. This A2A endpoint only returns that pointer.`,
    supportedInterfaces: [
      { url: urls.endpoint, protocolBinding: A2A_JSONRPC_BINDING, protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: { organization: "MAGNT / Alexander Redkov", url: urls.site },
    version: AGENT_CARD_VERSION,
    documentationUrl: urls.documentation,
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: [...A2A_MODES],
    defaultOutputModes: [...A2A_MODES],
    skills: [
      {
        id: "mcp-endpoint-discovery",
        name: "MCP endpoint discovery",
        description: "Answers any message with the location of MAGNT's MCP server and how to connect to it.",
        tags: ["discovery", "mcp"],
        examples: ["What can you do?", "Where is your MCP server?"],
      },
    ],
  };
}

const agentCard = memoizeDocument(buildAgentCard);

/** Caching and CORS of the card (01 §8, 04 §1): an hour, and A2A-Version allowed in a preflight. */
const AGENT_CARD_HEADERS: DocumentHeaders = {
  contentType: "application/json",
  cacheControl: "public, max-age=3600",
  preflightAllowHeaders: "Content-Type, If-None-Match, A2A-Version",
};

/** GET, HEAD and OPTIONS of both card paths (the route table answers 405 to the rest). */
export async function serveAgentCard(req: DoorRequest): Promise<Response> {
  return serveDocument(req, await agentCard(publicOrigin(req.env)), AGENT_CARD_HEADERS);
}
