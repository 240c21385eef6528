/**
 * Tool, resource and status names of the public MCP door (02 §3, 03, 07). The
 * CLI's smoke test and metrics read these, so a rename breaks the typecheck, not
 * production.
 */

export const TOOL_ABOUT = "about_magnt";
export const TOOL_PROPOSE_CONTACT = "propose_contact";
export const TOOL_SEARCH = "search_shared_experience";
export const TOOL_CONTRIBUTE = "contribute_task_signal";
export const TOOL_FETCH_REPLY = "fetch_contact_reply";

/** Public tools in `tools/list` order; `fetch_contact_reply` follows only with DIALOGUE_ENABLED. */
export const PUBLIC_TOOL_NAMES = [TOOL_ABOUT, TOOL_PROPOSE_CONTACT, TOOL_SEARCH, TOOL_CONTRIBUTE] as const;
export const DIALOGUE_TOOL_NAMES = [TOOL_FETCH_REPLY] as const;
export type PublicToolName = (typeof PUBLIC_TOOL_NAMES)[number] | (typeof DIALOGUE_TOOL_NAMES)[number];

/** Owner tools (06, 07). Listed here only so tests can prove they never reach the public surface. */
export const OWNER_TOOL_NAMES = [
  "owner_list_contacts",
  "owner_list_observed_goals",
  "owner_save_draft",
  "owner_set_contact_state",
  "owner_publish_reply",
  "owner_revoke_dialogue",
] as const;
export const OWNER_TOOL_PREFIX = "owner_";

export const PROFILE_RESOURCE_URI = "magnt://profile";
export const PROFILE_RESOURCE_NAME = "magnt-profile";

/** `propose_contact` result statuses (02 §5.4). */
export const CONTACT_STATUS = {
  accepted: "accepted_for_human_review",
  conflict: "submission_conflict",
  notSaved: "not_saved",
  rateLimited: "rate_limited",
} as const;
export const CONTACT_NOT_SAVED_CODE = "storage_unavailable";
export const CONTACT_REVIEW_STATUS_PENDING = "pending";

/** `search_shared_experience` result statuses (03 §6). */
export const SEARCH_STATUS = {
  matches: "matches_found",
  noMatch: "no_relevant_experience",
  storageError: "storage_error",
} as const;

/** `contribute_task_signal` result statuses (03 §8.3). */
export const CONTRIBUTE_STATUS = {
  accepted: "accepted",
  duplicate: "duplicate",
  conflict: "submission_conflict",
  rateLimited: "rate_limited",
  storageError: "storage_error",
} as const;

/** The label every search result carries (03 §6). */
export const CONTENT_LABEL_UNVERIFIED = "unverified_visitor_content";
export const COHORT = { ordinary: "ordinary", test: "test" } as const;
