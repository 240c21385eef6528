/** Generators of the door's ids (00 §9). Random, opaque, lower-case. */
import { CONTACT_ID_PREFIX, OBSERVATION_ID_PREFIX, OUTBOX_ID_PREFIX, SEARCH_RECEIPT_PREFIX, SIGNAL_ID_PREFIX } from "../contracts/ids";
import { randomHex } from "../lib/hash";

export const newContactId = (): string => CONTACT_ID_PREFIX + crypto.randomUUID();
export const newSignalId = (): string => SIGNAL_ID_PREFIX + crypto.randomUUID();
export const newObservationId = (): string => OBSERVATION_ID_PREFIX + randomHex(16);
export const newSearchReceipt = (): string => SEARCH_RECEIPT_PREFIX + randomHex(16);
/** `nt_` + 32 lower-case hex (00 §9); outbox discovery generates the same form in SQL. */
export const newOutboxId = (): string => OUTBOX_ID_PREFIX + randomHex(16);
export const newSubmissionId = (): string => crypto.randomUUID();

/** Timestamps are `toISOString()` text, so text order equals time order (09 §1). */
export const nowIso = (): string => new Date().toISOString();
