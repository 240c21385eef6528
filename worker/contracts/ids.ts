/**
 * Identifier formats (spec 00 §9, 02 §5.1, 03 §2). Regexes live here once; the
 * Worker validates input with them and the CLI validates ids before building SQL.
 */

export const CONTACT_ID_PREFIX = "mc_";
export const SIGNAL_ID_PREFIX = "ts_";
export const OBSERVATION_ID_PREFIX = "ob_";
export const SEARCH_RECEIPT_PREFIX = "sr_";
/** Reserved for the notification outbox (05). */
export const OUTBOX_ID_PREFIX = "nt_";

/** `previous_contact_id` as accepted from visitors: case-insensitive (spelled out so the JSON Schema keeps it), stored lower-cased. */
export const PREVIOUS_CONTACT_ID_PATTERN = /^[mM][cC]_[0-9a-fA-F-]{36}$/;
/** A `search_receipt` handed back on `contribute_task_signal`. */
export const SEARCH_RECEIPT_PATTERN = /^sr_[0-9a-f]{32}$/;
/** A signal id exactly as the door generates it (lower-case UUID); `magnt signals hide` checks this. */
export const SIGNAL_ID_PATTERN = /^ts_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A contact id exactly as the door generates it. */
export const CONTACT_ID_PATTERN = /^mc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const OBSERVATION_ID_PATTERN = /^ob_[0-9a-f]{32}$/;
/** A draft id as the owner tools accept it (06 §6.3). */
export const DRAFT_ID_PATTERN = /^dr_[0-9a-f-]{36}$/;
