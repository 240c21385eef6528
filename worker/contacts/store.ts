/**
 * A contact write before it runs (02 §5.3 steps 3–5): the payload hash, the
 * generated ids and the canonical row. The SQL and the write-once step are the
 * `contacts` storage group's (`storage/contacts/`); this module only decides
 * what is stored.
 */
import { storeContact, type ContactInsertRow, type StoredContactRow } from "../storage/contacts/store";
import type { WriteOnceResult } from "../storage/write-once";
import { newContactId, newSubmissionId, nowIso } from "../storage/ids";
import { canonicalContact, contactPayloadHash } from "./hash";
import type { ContactInput } from "./schema";

export type { StoredContactRow } from "../storage/contacts/store";
/** Runs a contact write, with extra statements in the same batch (07 §3). */
export { storeContact as storeContactWrite } from "../storage/contacts/store";

export interface ClientMetadata {
  name: string | null;
  version: string | null;
  protocolVersion: string | null;
}

export type SaveContactResult = WriteOnceResult<StoredContactRow>;

/** One contact write before it runs: its generated ids and its row; C.1 batches dialogue rows after it (07 §3). */
export type ContactWrite = ContactInsertRow;

/** Builds the write of one contact; nothing runs yet. */
export async function contactWrite(input: ContactInput, client: ClientMetadata): Promise<ContactWrite> {
  const canonical = canonicalContact(input);
  return {
    contactId: newContactId(),
    createdAt: nowIso(),
    summary: canonical.summary,
    intent: canonical.intent,
    what_you_need_from_human: canonical.what_you_need_from_human,
    agent_identity: canonical.agent_identity,
    operator: canonical.operator,
    reply_to: canonical.reply_to,
    found_via: canonical.found_via,
    previous_contact_id: canonical.previous_contact_id,
    self_reported_test: canonical.self_reported_test,
    submissionId: input.submission_id ?? newSubmissionId(),
    payloadHash: await contactPayloadHash(input),
    clientName: client.name,
    clientVersion: client.version,
    protocolVersion: client.protocolVersion,
  };
}

/** Stores a contact once per `submission_id` (02 §5.3); every fault is `not_saved`. */
export async function saveContact(db: D1Database, input: ContactInput, client: ClientMetadata): Promise<SaveContactResult> {
  return storeContact(db, await contactWrite(input, client));
}
