/**
 * Contact storage (02 §5.3): insert-on-conflict by `submission_id`, then read
 * back, and only then a receipt. Concurrent identical retries race on the
 * unique `submission_id`; exactly one insert wins and every caller reads the
 * winner's row, so all of them return the same `contact_id`.
 */
import { CONTACTS_SCHEMA_0001 } from "../storage/schema-0001";
import { first, run, statement } from "../storage/d1";
import { newContactId, newSubmissionId, nowIso } from "../storage/ids";
import { canonicalContact, contactPayloadHash } from "./hash";
import type { ContactInput } from "./schema";

export interface ClientMetadata {
  name: string | null;
  version: string | null;
  protocolVersion: string | null;
}

export type SaveContactResult =
  | { kind: "stored"; contactId: string; receivedAt: string; duplicate: boolean }
  | { kind: "conflict" }
  | { kind: "storage_failed" };

/**
 * Bindings whose `contacts` table is known to exist in this isolate. Keyed by
 * the binding object; an entry is removed when creation fails so that a later
 * call retries.
 */
const ensuredTables = new WeakMap<D1Database, Promise<void>>();

/** Creates `contacts` from the embedded 0001 once per binding per isolate (the only lazy migration). */
export function ensureContactsTable(db: D1Database): Promise<void> {
  let ensured = ensuredTables.get(db);
  if (!ensured) {
    ensured = run(db, statement(CONTACTS_SCHEMA_0001)).then(() => undefined);
    ensuredTables.set(db, ensured);
    ensured.catch(() => ensuredTables.delete(db));
  }
  return ensured;
}

interface StoredContactRow {
  contact_id: string;
  created_at: string;
  payload_hash: string;
}

export async function saveContact(db: D1Database, input: ContactInput, client: ClientMetadata): Promise<SaveContactResult> {
  try {
    await ensureContactsTable(db);
    const payloadHash = await contactPayloadHash(input);
    const contactId = newContactId();
    const submissionId = input.submission_id ?? newSubmissionId();
    const canonical = canonicalContact(input);
    await run(
      db,
      statement(
        `INSERT INTO contacts (contact_id, created_at, review_status, summary, intent, what_you_need_from_human,
           agent_identity, operator, reply_to, found_via, previous_contact_id, self_reported_test,
           submission_id, payload_hash, client_name, client_version, protocol_version)
         VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(submission_id) DO NOTHING`,
        contactId,
        nowIso(),
        canonical.summary,
        canonical.intent,
        canonical.what_you_need_from_human,
        canonical.agent_identity,
        canonical.operator,
        canonical.reply_to,
        canonical.found_via,
        canonical.previous_contact_id,
        canonical.self_reported_test,
        submissionId,
        payloadHash,
        client.name,
        client.version,
        client.protocolVersion,
      ),
    );
    const stored = await first<StoredContactRow>(
      db,
      statement("SELECT contact_id, created_at, payload_hash FROM contacts WHERE submission_id = ?", submissionId),
    );
    if (!stored) return { kind: "storage_failed" };
    if (stored.payload_hash !== payloadHash) return { kind: "conflict" };
    return { kind: "stored", contactId: stored.contact_id, receivedAt: stored.created_at, duplicate: stored.contact_id !== contactId };
  } catch {
    // Every fault in steps 2–5 is reported to the visitor as not_saved (02 §5.3 step 7);
    // D1's error text may quote data, so it is not kept.
    return { kind: "storage_failed" };
  }
}
