/**
 * The public MCP server (02 §1–§4): the public tools in their fixed order, the
 * profile resource, and `servePublicMcp`, the `POST /mcp` handler of the
 * monolith and core. No owner tool is ever registered here.
 */
import { McpServer } from "@modelcontextprotocol/server";
import {
  MCP_SERVER_NAME,
  MCP_SERVER_TITLE,
  MCP_SERVER_VERSION,
  MCP_SUPPORTED_PROTOCOL_VERSIONS,
} from "../contracts/versions";
import { PROFILE_RESOURCE_NAME, PROFILE_RESOURCE_URI, TOOL_ABOUT, TOOL_FETCH_REPLY, type PublicToolName } from "../contracts/tools";
import { publicOrigin, type Env } from "../config/env";
import { isOn } from "../config/flags";
import type { DoorRequest } from "../edge/pipeline";
import { publicWriteLimiter } from "../edge/rate-limit";
import type { RegisteredTool, ToolContext } from "../lib/tool-definition";
import { proposeContactDialogueTool, proposeContactTool } from "../contacts/index";
import { fetchReplyTool } from "../dialogue/index";
import { contributeTool, searchTool } from "../signals/index";
import { aboutTool, profileFor } from "./about-tool";
import { buildInstructions } from "./instructions";
import { registerTools } from "./register-tools";
import { serveMcp, type McpServing, type ToolOutcomeListener } from "./serve";

/**
 * The public tools for this environment, in `tools/list` order (02 §3). The
 * instructions, the profile and the probe advertise exactly these names, so a
 * flag can never announce a tool that is not registered (02 §2, §4, 01 §7).
 */
export function publicTools(env: Env): readonly RegisteredTool<PublicToolName>[] {
  // DIALOGUE_ENABLED (07 §1): the dialogue variant of propose_contact, and fetch_contact_reply last.
  if (isOn(env, "DIALOGUE_ENABLED")) return [aboutTool, proposeContactDialogueTool, searchTool, contributeTool, fetchReplyTool];
  return [aboutTool, proposeContactTool, searchTool, contributeTool];
}

/** Whether this environment's public server registers `fetch_contact_reply` (the probe's `dialogue_enabled`). */
export function dialogueServed(env: Env): boolean {
  return publicTools(env).some((tool) => tool.name === TOOL_FETCH_REPLY);
}

function buildPublicServer(
  ctx: ToolContext,
  tools: readonly RegisteredTool<PublicToolName>[],
  onToolOutcome: ToolOutcomeListener,
): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: MCP_SERVER_TITLE, version: MCP_SERVER_VERSION, websiteUrl: `${ctx.origin}/` },
    {
      // No list-changed capability: the tool list of a request never changes (02 §1).
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: buildInstructions(ctx.registeredTools),
      supportedProtocolVersions: [...MCP_SUPPORTED_PROTOCOL_VERSIONS],
    },
  );
  registerTools(server, tools, ctx, onToolOutcome);
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

/** `POST /mcp` where public tools execute (monolith, core). */
export function servePublicMcp(req: DoorRequest): Promise<Response> {
  return serveMcp(req, publicServing(req));
}

/** What `serveMcp` serves for this request on the public door: its tools, its server, its listing key. */
export function publicServing(req: DoorRequest): McpServing {
  const tools = publicTools(req.env);
  const origin = publicOrigin(req.env);
  return {
    tools,
    // What the listing and the profile depend on: the tools (their definitions are module constants), the
    // origin (serverInfo.websiteUrl, the profile's links) and whether contact storage is bound (the profile).
    answerKey: `${origin}\n${tools.map((tool) => tool.name).join(",")}\n${req.env.CONTACTS !== undefined}`,
    keptCalls: [TOOL_ABOUT],
    createServer: (info, onToolOutcome) => {
      const ctx: ToolContext = {
        env: req.env,
        origin,
        client: { name: info.clientName, version: info.clientVersion, protocolVersion: info.protocolVersion },
        controlledTest: req.telemetry.controlledTest,
        checkPublicWrite: publicWriteLimiter(req.request, req.env, req.role),
        registeredTools: tools.map((tool) => tool.name),
      };
      return buildPublicServer(ctx, tools, onToolOutcome);
    },
  };
}
