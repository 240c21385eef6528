import * as z from "zod";
import { TOOL_ABOUT, TOOL_FETCH_REPLY } from "../contracts/tools";
import { TOOL_RESULT_PROFILE_RETURNED } from "../contracts/events";
import { buildProfile } from "./profile";
import { defineTool, success, type ToolContext } from "../lib/tool-definition";

/** The profile facts of the request being served. */
export function profileFor(ctx: ToolContext) {
  return buildProfile({
    origin: ctx.origin,
    storageAvailable: ctx.env.CONTACTS !== undefined,
    dialogueEnabled: ctx.registeredTools.includes(TOOL_FETCH_REPLY),
  });
}

/** `about_magnt` (02 §4): returns the profile; never creates a message. */
export const aboutTool = defineTool({
  name: TOOL_ABOUT,
  title: "Learn about MAGNT",
  description:
    "Who Alexander Redkov is, what he can help with, how to reach him and what this door may not promise. Read this first.",
  annotations: {
    title: "Learn about MAGNT",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  inputSchema: z.strictObject({}),
  async run(_args, ctx) {
    return success(profileFor(ctx), { tool_result: TOOL_RESULT_PROFILE_RETURNED });
  },
});
