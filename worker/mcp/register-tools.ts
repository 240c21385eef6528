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
import { requireScopes, type McpServer, type StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type * as z from "zod";
import { failure, type RegisteredTool, type ToolContext } from "../lib/tool-definition";
import type { ToolOutcomeListener } from "./serve";

/** The answer of a tool that threw: fixed text, no telemetry of its own. */
const TOOL_FAILED = failure(
  { status: "tool_failed", message: "The tool failed unexpectedly. Nothing was confirmed; retry later." },
  {},
);

/** A tool that may require OAuth scopes (the owner's write tools); public tools name none. */
export type ScopedTool = RegisteredTool<string> & { readonly requiredScopes?: readonly [string, ...string[]] };

/**
 * Each tool schema's JSON Schema, converted once per isolate.
 *
 * Why: the door builds a server per request, so the SDK's own per-server memo
 * never hits and every `tools/list` (and every `tools/call`, for its
 * `Mcp-Param-*` check) converted every zod schema again — about a millisecond
 * per request (issue 21). The SDK takes any Standard Schema that implements
 * `~standard.jsonSchema` (StandardJSONSchemaV1) and calls exactly that for the
 * conversion, so the wrapper hands it zod's own validator and zod's own
 * conversion, memoised per target and direction: the same JSON Schema, the
 * same validation and issue texts, the same `vendor` — only computed once.
 * The memo is frozen so that nothing downstream can change a shared answer.
 */
const converted = new WeakMap<z.ZodObject, StandardSchemaWithJSON>();

function convertedOnce(schema: z.ZodObject): StandardSchemaWithJSON {
  const known = converted.get(schema);
  if (known !== undefined) return known;
  const standard = schema["~standard"];
  const memo = new Map<string, Record<string, unknown>>();
  const once = (io: "input" | "output") => (options: { readonly target: string }) => {
    const key = `${io} ${options.target}`;
    let json = memo.get(key);
    if (json === undefined) {
      json = deepFreeze(standard.jsonSchema[io](options));
      memo.set(key, json);
    }
    return json;
  };
  const wrapped: StandardSchemaWithJSON = {
    "~standard": {
      version: standard.version,
      vendor: standard.vendor,
      validate: (value) => standard.validate(value),
      jsonSchema: { input: once("input"), output: once("output") },
    },
  };
  converted.set(schema, wrapped);
  return wrapped;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

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
        inputSchema: convertedOnce(tool.inputSchema),
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
