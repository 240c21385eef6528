/**
 * The owner's triage states of a contact (06 §6.4): one list for the owner
 * MCP's schemas, the storage groups and the CLI, so the two tools the owner
 * uses can never disagree on which states exist. No state row means `pending`.
 */
export const OWNER_CONTACT_STATES = ["pending", "acknowledged", "archived"] as const;
export type OwnerContactState = (typeof OWNER_CONTACT_STATES)[number];

/** The one reading of a missing state row: what both `owner_list_contacts` and `magnt review` show. */
export function effectiveOwnerState(stored: OwnerContactState | null | undefined): OwnerContactState {
  return stored ?? "pending";
}
