/**
 * MCP discovery documents (02 §6–§7): the Server Card (served at two paths with
 * identical bytes) and the AI catalog that points to it. Both are built from
 * `PUBLIC_ORIGIN` and list no tools: tools are discovered over MCP itself.
 */
import {
  MCP_SERVER_NAME,
  MCP_SERVER_TITLE,
  MCP_SERVER_VERSION,
  MCP_SUPPORTED_PROTOCOL_VERSIONS,
} from "../contracts/versions";
import { publicOrigin } from "../config/env";
import { memoizeDocument, serveDocument } from "../edge/cacheable-document";
import type { DoorRequest } from "../edge/pipeline";

export const SERVER_CARD_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
const SERVER_CARD_CONTENT_TYPE = "application/mcp-server-card+json";

/** The repository object shared by the Server Card and the registry entry. */
const REPOSITORY = {
  url: "https://github.com/redkov-dev/cortex",
  source: "github",
  subfolder: "cloudflare/magnt-observer",
} as const;

export function buildServerCard(origin: string) {
  return {
    $schema: SERVER_CARD_SCHEMA_URL,
    name: MCP_SERVER_NAME,
    title: MCP_SERVER_TITLE,
    version: MCP_SERVER_VERSION,
    description: "Meet Alexander Redkov, leave a message for human review, and search or share task signals.",
    websiteUrl: `${origin}/`,
    repository: REPOSITORY,
    remotes: [
      {
        type: "streamable-http",
        url: `${origin}/mcp`,
        supportedProtocolVersions: [...MCP_SUPPORTED_PROTOCOL_VERSIONS],
      },
    ],
    _meta: { "ru.magnt/status": "experimental", "ru.magnt/beacon": "REDKOV-AI-2026" },
  };
}

export function buildAiCatalog(origin: string) {
  return {
    specVersion: "draft",
    entries: [
      {
        identifier: `urn:air:${new URL(origin).hostname}:mcp-door`,
        displayName: MCP_SERVER_TITLE,
        type: SERVER_CARD_CONTENT_TYPE,
        url: `${origin}/mcp/server-card`,
      },
    ],
  };
}

const serverCard = memoizeDocument(buildServerCard);
const aiCatalog = memoizeDocument(buildAiCatalog);

const CARD_CACHING = { cacheControl: "public, max-age=300", preflightAllowHeaders: "Content-Type, If-None-Match" };

/** `/mcp/server-card`: the card under its own media type. */
export async function serveServerCard(req: DoorRequest): Promise<Response> {
  return serveDocument(req, await serverCard(publicOrigin(req.env)), {
    contentType: SERVER_CARD_CONTENT_TYPE,
    ...CARD_CACHING,
  });
}

/** `/.well-known/mcp/server-card.json`: the same bytes as plain JSON. */
export async function serveServerCardAlias(req: DoorRequest): Promise<Response> {
  return serveDocument(req, await serverCard(publicOrigin(req.env)), {
    contentType: "application/json",
    ...CARD_CACHING,
  });
}

export async function serveAiCatalog(req: DoorRequest): Promise<Response> {
  return serveDocument(req, await aiCatalog(publicOrigin(req.env)), {
    contentType: "application/json",
    ...CARD_CACHING,
  });
}
