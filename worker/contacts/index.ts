/**
 * Contacts (02 §5): `propose_contact`, a private message for Alexander's later
 * human review. What other layers may use.
 *
 * - schema.ts  the strict input
 * - hash.ts    the canonical content and its hash
 * - store.ts   insert-once + read-back, and the lazy 0001 table
 * - tool.ts    results and telemetry
 * - dialogue-tool.ts  the variant registered with DIALOGUE_ENABLED (07 §3)
 */
export { proposeContactTool } from "./tool";
export { proposeContactDialogueTool } from "./dialogue-tool";
export { contactDialogueInputSchema, contactInputSchema, type ContactDialogueInput, type ContactInput } from "./schema";
