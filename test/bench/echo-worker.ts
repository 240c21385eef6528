/**
 * The baseline of the door-overhead benchmark (10 §6): a bare Worker with the
 * SDK's own handler and one strict-object `echo` tool — no guards, telemetry,
 * storage or per-request handler construction.
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

function buildEchoServer(): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0" }, { capabilities: { tools: { listChanged: false } } });
  server.registerTool("echo", { inputSchema: z.strictObject({ text: z.string().optional() }) }, async (args) => ({
    content: [{ type: "text" as const, text: JSON.stringify(args) }],
    structuredContent: args,
  }));
  return server;
}

const handler = createMcpHandler(buildEchoServer, { legacy: "stateless" });

export default {
  fetch: (request: Request) => handler.fetch(request),
};
