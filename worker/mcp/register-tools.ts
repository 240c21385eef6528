/**
 * Registers tool definitions on an SDK server, the same way for every server
 * of this codebase: the tool's own schema, its `run` result as both
 * `structuredContent` and one JSON text item, and its outcome reported to the
 * wrapper (which records telemetry; tools never log).
 */
import type { McpServer } from "@modelcontextprotocol/server";
import type { RegisteredTool, ToolContext } from "../lib/tool-definition";
import type { ToolOutcomeListener } from "./serve";

export function registerTools(
  server: McpServer,
  tools: readonly RegisteredTool<string>[],
  ctx: ToolContext,
  onToolOutcome: ToolOutcomeListener,
): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations },
      async (args: unknown) => {
        const outcome = await tool.run(args, ctx);
        onToolOutcome(outcome);
        return {
          content: [{ type: "text" as const, text: JSON.stringify(outcome.result) }],
          structuredContent: outcome.result,
          ...(outcome.isError ? { isError: true } : {}),
        };
      },
    );
  }
}
