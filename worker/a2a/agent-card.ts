/**
 * The two Agent Cards (04 §1).
 *
 * `/.well-known/agent-card.json` is the strict A2A v1.0 card: no 0.3 fields
 * (`url`, `protocolVersion`, `preferredTransport`, `additionalInterfaces`,
 * `supportsAuthenticatedExtendedCard`), no `kind`, no extensions, security
 * schemes or signatures.
 *
 * `/.well-known/agent.json`, the older discovery path, is the same card plus
 * the A2A 0.3 fields a 0.3 client needs to reach `POST /a2a` (`url`,
 * `preferredTransport`, `protocolVersion`, `supportsAuthenticatedExtendedCard`).
 * It keeps every v1.0 field, `supportedInterfaces` included, so a 1.x client
 * sent to the old path still picks the 1.0 interface — the shape of the
 * official SDK's own legacy card (`toCompatAgentCard` with `embedV1Interfaces`).
 */
import { A2A_PROTOCOL_VERSION, AGENT_CARD_VERSION } from "../contracts/versions";
import { memoizeDocument, serveDocument, type DocumentHeaders } from "../edge/cacheable-document";
import type { DoorRequest } from "../edge/pipeline";
import { publicOrigin } from "../config/env";
import { a2aUrlsFor } from "./urls";

/** The JSON-RPC binding name: v1.0 `AgentInterface.protocolBinding` and 0.3 `preferredTransport`. */
const A2A_JSONRPC_BINDING = "JSONRPC";
/** The A2A 0.3 `AgentCard.protocolVersion` of the legacy card (the 0.3.0 schema's own value). */
const A2A_V03_CARD_PROTOCOL_VERSION = "0.3.0";
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

/**
 * The legacy card: the 0.3 fields that say where to go first (in the 0.3
 * schema's order), then every field of the v1.0 card unchanged, then the 0.3
 * extended-card flag. The 0.3 endpoint `url` is the same `/a2a`: the bridge
 * tells the dialects apart by the version a request announces.
 */
function buildLegacyAgentCard(origin: string) {
  const { name, description, ...v1Fields } = buildAgentCard(origin);
  return {
    protocolVersion: A2A_V03_CARD_PROTOCOL_VERSION,
    name,
    description,
    url: a2aUrlsFor(origin).endpoint,
    preferredTransport: A2A_JSONRPC_BINDING,
    ...v1Fields,
    supportsAuthenticatedExtendedCard: false,
  };
}

const agentCard = memoizeDocument(buildAgentCard);
const legacyAgentCard = memoizeDocument(buildLegacyAgentCard);

/** Caching and CORS of the card (01 §8, 04 §1): an hour, and A2A-Version allowed in a preflight. */
const AGENT_CARD_HEADERS: DocumentHeaders = {
  contentType: "application/json",
  cacheControl: "public, max-age=3600",
  preflightAllowHeaders: "Content-Type, If-None-Match, A2A-Version",
};

/** GET, HEAD and OPTIONS of `/.well-known/agent-card.json` (the route table answers 405 to the rest). */
export async function serveAgentCard(req: DoorRequest): Promise<Response> {
  return serveDocument(req, await agentCard(publicOrigin(req.env)), AGENT_CARD_HEADERS);
}

/** GET, HEAD and OPTIONS of `/.well-known/agent.json`: the same headers, its own ETag. */
export async function serveLegacyAgentCard(req: DoorRequest): Promise<Response> {
  return serveDocument(req, await legacyAgentCard(publicOrigin(req.env)), AGENT_CARD_HEADERS);
}
