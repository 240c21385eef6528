import { z } from "zod";
import { TOOL_SEARCH } from "../contracts/tools";
import { defineTool, failure } from "../mcp/tool-definition";

// PLACEHOLDER: replaced by the shared-memory implementation.
export const searchTool = defineTool({
  name: TOOL_SEARCH,
  title: "Search shared task signals",
  description: "placeholder",
  annotations: { title: "Search shared task signals", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema: z.strictObject({ goal: z.string() }),
  async run() {
    return failure({ status: "storage_error" }, { tool_result: "storage_error" });
  },
});
