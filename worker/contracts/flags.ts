/**
 * Flag names (spec 00 §6). Flags are Worker secrets; a flag is on only when its
 * value is exactly the string "true" (parsed in worker/config/flags.ts).
 */

export const FLAG_NAMES = [
  "TELEGRAM_NOTIFICATIONS_ENABLED",
  "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED",
  "TELEGRAM_PREVIEW_MODE",
  "OWNER_MCP_ENABLED",
  "OWNER_MCP_WRITE_ENABLED",
  "DIALOGUE_ENABLED",
  "DIALOGUE_REPLIES_ENABLED",
  "DIALOGUE_READ_RECEIPTS_ENABLED",
] as const;

export type FlagName = (typeof FLAG_NAMES)[number];

/** The one flag that is a mode rather than a boolean; `metadata_only` is its only special value. Reserved for notifications (05 §7). */
export const PREVIEW_MODE_METADATA_ONLY = "metadata_only";

/** Names that are secrets (never under `vars` in a committed config, 00 §7). */
export const SECRET_NAMES = [
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_OWNER_CHAT_ID",
  "OWNER_GITHUB_ID",
  "OWNER_TOKEN_SIGNING_KEY",
  "OWNER_TOKEN_EPOCH",
  "GITHUB_CLIENT_ID",
  "GITHUB_CLIENT_SECRET",
  "DIALOGUE_TOKEN_KEY",
] as const;

/** Reserved for `magnt flags` prerequisites (08 §9). */
export type SecretName = (typeof SECRET_NAMES)[number];

/**
 * Whether read receipts are in force (07 §1, §6), given how a flag is read
 * where the caller runs (the Worker: exactly "true" in its env; `magnt`: its
 * flag store). Receipts need the dialogue: with DIALOGUE_ENABLED off they
 * count as off even when still set. The Worker's `dialogueFlags` and `magnt
 * review contacts <id>` both decide with this one function.
 */
export function readReceiptsInForce(on: (name: FlagName) => boolean): boolean {
  return on("DIALOGUE_ENABLED") && on("DIALOGUE_READ_RECEIPTS_ENABLED");
}
