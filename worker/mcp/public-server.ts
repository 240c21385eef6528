/**
 * The public MCP server factory (02 §1–§4): a fresh `McpServer` per request with
 * the public tools in their fixed order and the profile resource. No owner tool
 * is ever registered here.
 */
import { McpServer } from "@modelcontextprotocol/server";
import {
  MCP_SERVER_NAME,
  MCP_SERVER_TITLE,
  MCP_SERVER_VERSION,
  MCP_SUPPORTED_PROTOCOL_VERSIONS,
} from "../contracts/versions";
import { PROFILE_RESOURCE_NAME, PROFILE_RESOURCE_URI } from "../contracts/tools";
import type { Env } from "../config/env";
import { isOn } from "../config/flags";
import { aboutTool, profileFor } from "./about-tool";
import { buildInstructions } from "./instructions";
import type { ToolContext, ToolDefinition, ToolOutcome } from "./tool-definition";
import { proposeContactTool } from "../contacts/tool";
import { searchTool } from "../signals/search-tool";
import { contributeTool } from "../signals/contribute-tool";

/** The public tools for this environment, in `tools/list` order (02 §3). */
export function publicTools(_env: Env): readonly ToolDefinition[] {
  return [aboutTool, proposeContactTool, searchTool, contributeTool];
}

/** Called once per tool call with what the tool returned, so the wrapper can record it. */
export type ToolOutcomeListener = (outcome: ToolOutcome) => void;

export function buildPublicServer(
  ctx: ToolContext,
  tools: readonly ToolDefinition[],
  onToolOutcome: ToolOutcomeListener,
): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: MCP_SERVER_TITLE, version: MCP_SERVER_VERSION, websiteUrl: `${ctx.origin}/` },
    {
      // No list-changed capability: the tool list of a request never changes (02 §1).
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: buildInstructions(isOn(ctx.env, "DIALOGUE_ENABLED")),
      supportedProtocolVersions: [...MCP_SUPPORTED_PROTOCOL_VERSIONS],
    },
  );

  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
      },
      async (args: unknown) => {
        const outcome = await tool.run(args as never, ctx);
        onToolOutcome(outcome);
        return {
          content: [{ type: "text" as const, text: JSON.stringify(outcome.result) }],
          structuredContent: outcome.result,
          ...(outcome.isError ? { isError: true } : {}),
        };
      },
    );
  }

  server.registerResource(
    PROFILE_RESOURCE_NAME,
    PROFILE_RESOURCE_URI,
    { title: "Alexander Redkov and MAGNT", mimeType: "application/json" },
    async () => ({
      contents: [{ uri: PROFILE_RESOURCE_URI, mimeType: "application/json", text: JSON.stringify(profileFor(ctx)) }],
    }),
  );
  return server;
}
