/**
 * Dialogue (07, release C.1): what other layers may use.
 *
 * - fetch-tool.ts   `fetch_contact_reply`, public, registered only with DIALOGUE_ENABLED (07 §5)
 * - owner-tools.ts  `owner_publish_reply` and `owner_revoke_dialogue` (07 §4), for the owner server
 *                   under the registration rule of 07 §1 (see `dialogueOwnerTools`)
 *
 * The token helpers live in lib/dialogue-token.ts and the table access in
 * the dialogue storage group (storage/dialogue/: sql.ts, store.ts, access.ts), because `contacts`
 * (which opens and joins dialogues) and `owner` (which lists dialogue state and
 * records reads) may not import this capability.
 */
import { dialogueFlags, isOn } from "../config/flags";
import type { Env } from "../config/env";
import { ownerPublishReplyTool, ownerRevokeDialogueTool, type DialogueOwnerTool } from "./owner-tools";

export { fetchReplyInputSchema, fetchReplyTool } from "./fetch-tool";
export {
  ownerPublishReplyTool,
  ownerRevokeDialogueTool,
  publishReplyInputSchema,
  PUBLISH_REPLY_SCOPES,
  revokeDialogueInputSchema,
  REVOKE_DIALOGUE_SCOPES,
  type DialogueOwnerTool,
} from "./owner-tools";

/**
 * The C.1 owner tools core registers, in order (07 §1, the only statement of
 * the rule): `owner_publish_reply` with OWNER_MCP_ENABLED,
 * OWNER_MCP_WRITE_ENABLED, DIALOGUE_ENABLED and DIALOGUE_REPLIES_ENABLED (a
 * reply nobody can fetch must not be publishable); `owner_revoke_dialogue`
 * with OWNER_MCP_ENABLED, OWNER_MCP_WRITE_ENABLED and DIALOGUE_ENABLED.
 * Otherwise a call is `-32602`. The owner server's instructions follow this
 * list (mcp/owner-server.ts).
 */
export function dialogueOwnerTools(env: Env): readonly DialogueOwnerTool[] {
  if (!isOn(env, "OWNER_MCP_ENABLED") || !isOn(env, "OWNER_MCP_WRITE_ENABLED")) return [];
  const flags = dialogueFlags(env);
  return [...(flags.replies ? [ownerPublishReplyTool] : []), ...(flags.dialogue ? [ownerRevokeDialogueTool] : [])];
}
