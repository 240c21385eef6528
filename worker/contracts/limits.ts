/** Size limits shared by the edge, the tools and their tests (01 §5, 02 §5.1, 03 §2). */

/** Every POST body on every deployable: 24 KiB. */
export const MAX_POST_BODY_BYTES = 24 * 1024;

/** `propose_contact` field limits (trimmed length, UTF-16 code units). */
export const CONTACT_LIMITS = {
  summary: 4000,
  intent: 160,
  what_you_need_from_human: 2000,
  agent_identity: 200,
  operator: 200,
  reply_to: 500,
  found_via: 500,
} as const;

/** Shared-memory field limits (trimmed length, UTF-16 code units). */
export const SIGNAL_LIMITS = {
  goal: 1000,
  blocker: 1000,
  tried: 2000,
  learned: 2000,
} as const;

/** The search window and result cap (03 §4, §5.2). */
export const SEARCH_CANDIDATES_MAX = 100;
export const SEARCH_RESULTS_MAX = 3;
/**
 * A window row whose four text fields hold more characters than this, and
 * that has a current token list, comes without its text; the text is read
 * only if it matches (03 §4). Realistic signals (about 500 characters) come
 * whole, so their search stays one read; a window of 100 maximum-length
 * signals (6 000 each) no longer decodes 600 000 characters per search.
 */
export const SEARCH_WINDOW_INLINE_TEXT_MAX = 1000;

/** Telemetry string caps, in code points (01 §9.1–9.2). */
export const EVENT_FIELD_MAX = {
  method: 16,
  host: 253,
  path: 1024,
  query: 1024,
  userAgent: 1000,
  referrer: 1000,
  country: 8,
  colo: 8,
  city: 128,
  mcp_protocol_version: 32,
  client_name: 120,
  client_version: 64,
} as const;

/** Rate limit of public writes (01 §14). */
export const RATE_LIMIT_RETRY_AFTER_S = 60;
