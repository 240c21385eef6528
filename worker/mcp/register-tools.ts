/**
 * Registers tool definitions on an SDK server, the same way for every server
 * of this codebase: the tool's own schema, its `run` result as both
 * `structuredContent` and one JSON text item, and its outcome reported to the
 * wrapper (which records telemetry; tools never log).
 *
 * Threat model: the SDK turns an exception thrown by a tool into an `isError`
 * result that quotes the exception message, and a message may quote stored or
 * visitor data. A tool that throws therefore answers one fixed failure instead
 * (01 §12: exception text never reaches anyone); with no `tool_result` of its
 * own, the wrapper records it as `unclassified_tool_error`.
 *
 * A tool that names `requiredScopes` is registered with the SDK's per-tool
 * scope challenge (`requireScopes`, 06 §6): on a server served with verified
 * `authInfo`, a call whose token lacks one of them never reaches the tool —
 * the SDK answers HTTP 403 `insufficient_scope` before any argument is read.
 */
import { requireScopes, type McpServer } from "@modelcontextprotocol/server";
import { failure, type RegisteredTool, type ToolContext } from "../lib/tool-definition";
import type { ToolOutcomeListener } from "./serve";

/** The answer of a tool that threw: fixed text, no telemetry of its own. */
const TOOL_FAILED = failure(
  { status: "tool_failed", message: "The tool failed unexpectedly. Nothing was confirmed; retry later." },
  {},
);

/** A tool that may require OAuth scopes (the owner's write tools); public tools name none. */
export type ScopedTool = RegisteredTool<string> & { readonly requiredScopes?: readonly [string, ...string[]] };

export function registerTools(
  server: McpServer,
  tools: readonly ScopedTool[],
  ctx: ToolContext,
  onToolOutcome: ToolOutcomeListener,
): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
        ...(tool.requiredScopes !== undefined ? { scopeChallenge: requireScopes(...tool.requiredScopes) } : {}),
      },
      async (args: unknown) => {
        const outcome = await tool.run(args, ctx).catch(() => TOOL_FAILED);
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
