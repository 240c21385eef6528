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

/** The C.1 owner tool whose registration decides whether the owner server may publish (07 §1). */
export const TOOL_OWNER_PUBLISH_REPLY = "owner_publish_reply";

/** Owner tools (06, 07); tests prove they never reach the public surface. */
export const OWNER_TOOL_NAMES = [
  "owner_list_contacts",
  "owner_list_observed_goals",
  "owner_save_draft",
  "owner_set_contact_state",
  TOOL_OWNER_PUBLISH_REPLY,
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

/** Dialogue (07): the token, the ids a visitor presents, and the statuses of both public sides. */
export const DIALOGUE_TOKEN_PREFIX = "dt_";
/** `dt_` + base64url (no padding) of an HMAC-SHA256: 43 characters (07 §2). */
export const DIALOGUE_TOKEN_PATTERN = /^dt_[A-Za-z0-9_-]{43}$/;
export const DIALOGUE_ID_PREFIX = "dg_";
export const REPLY_ID_PREFIX = "rp_";
/** A `reply_id` as accepted from visitors: case-insensitive (spelled out so the JSON Schema keeps it), lower-cased (07 §5.1). */
export const REPLY_ID_INPUT_PATTERN = /^[rR][pP]_[0-9a-fA-F-]{36}$/;

/** The `dialogue` object's statuses in a `propose_contact` receipt (07 §3). */
export const DIALOGUE_STATUS = {
  tokenIssued: "token_issued",
  tokenPreviouslyIssued: "token_previously_issued",
  joined: "joined",
  notInDialogue: "not_in_dialogue",
} as const;

/** `fetch_contact_reply` result statuses (07 §5.4); `dialogue_not_found` and `rate_limited` are shared with case B of `propose_contact`. */
export const FETCH_REPLY_STATUS = {
  delivered: "reply_delivered",
  nonePending: "no_reply_pending",
  replyNotFound: "reply_not_found",
  dialogueNotFound: "dialogue_not_found",
  rateLimited: "rate_limited",
  storageError: "storage_error",
} as const;

/** The label on owner-written reply text handed to a visitor (07 §5.4). */
export const CONTENT_LABEL_OWNER_REPLY = "owner_reply";

/**
 * The one refusal for an unknown contact, a contact without a dialogue, a
 * revoked dialogue and a wrong token — in `fetch_contact_reply` and in a
 * `propose_contact` follow-up alike, so the bytes can never differ (07 §3, §5.4).
 */
export const DIALOGUE_NOT_FOUND_MESSAGE =
  "No dialogue was found for this contact_id and dialogue_token. Nothing was stored or changed.";

/** Wrong dialogue tokens counted per presented contact id and UTC hour before `rate_limited` (07 §5.3). */
export const DIALOGUE_WRONG_ATTEMPTS_PER_HOUR = 10;
/**
 * How long after a dialogue was opened an identical retry of its submission
 * still re-issues the token (07 §3 step 4): 15 minutes. A lost answer is
 * retried within seconds or minutes (client timeouts, a restarted agent), so
 * this covers honest recovery; after it, whoever can reproduce the
 * submission (same `submission_id`, same content) gets `token_previously_issued`,
 * so a guessed or leaked `submission_id` stops being a way to the token.
 */
export const DIALOGUE_TOKEN_REISSUE_WINDOW_S = 15 * 60;
/** At most this many entries in `delivered_replies` and `read_receipts` (07 §5.4, §6). */
export const DIALOGUE_LIST_MAX = 20;

/** Owner-side dialogue statuses (07 §4). */
export const OWNER_DIALOGUE_STATUS = {
  published: "reply_published",
  alreadyPublished: "already_published",
  revoked: "dialogue_revoked",
  draftNotFound: "draft_not_found",
  revisionConflict: "revision_conflict",
  noDialogue: "no_dialogue",
  contactNotFound: "contact_not_found",
  storageError: "storage_error",
} as const;

/** The attempt-limit refusal of a follow-up or a fetch (07 §5.3); `retry_after_s` travels beside it. */
export const DIALOGUE_RATE_LIMITED_MESSAGE =
  "Too many attempts with a wrong dialogue_token for this contact_id. Nothing was stored or changed. Retry after retry_after_s seconds.";
