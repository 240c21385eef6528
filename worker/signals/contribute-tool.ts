import { z } from "zod";
import { TOOL_CONTRIBUTE } from "../contracts/tools";
import { defineTool, failure } from "../mcp/tool-definition";

// PLACEHOLDER: replaced by the shared-memory implementation.
export const contributeTool = defineTool({
  name: TOOL_CONTRIBUTE,
  title: "Share a task signal",
  description: "placeholder",
  annotations: { title: "Share a task signal", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema: z.strictObject({ goal: z.string() }),
  async run() {
    return failure({ status: "storage_error" }, { tool_result: "storage_error" });
  },
});
