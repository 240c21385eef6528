/**
 * Contact storage (02 §5.3) on the shared write-once step (`storage/write-once.ts`):
 * insert-or-ignore by `submission_id`, then read back, and only then a receipt.
 */
import { CONTACTS_SCHEMA_0001 } from "../storage/schema-0001";
import { run, statement, type Statement } from "../storage/d1";
import { baseBinding } from "../storage/d1-retry";
import { writeOnce, type WriteOnceResult } from "../storage/write-once";
import { newContactId, newSubmissionId, nowIso } from "../storage/ids";
import { canonicalContact, contactPayloadHash } from "./hash";
import type { ContactInput } from "./schema";

export interface ClientMetadata {
  name: string | null;
  version: string | null;
  protocolVersion: string | null;
}

export type SaveContactResult = WriteOnceResult<StoredContactRow>;

/**
 * Bindings whose `contacts` table is known to exist in this isolate. Keyed by
 * the binding object; an entry is removed when creation fails so that a later
 * call retries.
 */
const ensuredTables = new WeakMap<D1Database, Promise<void>>();

/** Creates `contacts` from the embedded 0001 once per binding per isolate (the only lazy migration). */
function ensureContactsTable(db: D1Database): Promise<void> {
  // Keyed by the platform binding, not the request's retry-scoped wrapper (09 §5).
  const key = baseBinding(db);
  let ensured = ensuredTables.get(key);
  if (!ensured) {
    ensured = run(db, statement(CONTACTS_SCHEMA_0001)).then(() => undefined);
    ensuredTables.set(key, ensured);
    ensured.catch(() => ensuredTables.delete(key));
  }
  return ensured;
}

export interface StoredContactRow {
  contact_id: string;
  created_at: string;
  payload_hash: string;
}

/** One contact write before it runs: its generated ids, its insert and read-back (02 §5.3 steps 3–5). */
export interface ContactWrite {
  readonly contactId: string;
  readonly submissionId: string;
  readonly createdAt: string;
  readonly payloadHash: string;
  /** `INSERT … ON CONFLICT(submission_id) DO NOTHING`; C.1 batches dialogue rows after it (07 §3). */
  readonly insert: Statement;
  readonly readBack: Statement;
}

/** Builds the write of one contact; nothing runs yet. */
export async function contactWrite(input: ContactInput, client: ClientMetadata): Promise<ContactWrite> {
  const payloadHash = await contactPayloadHash(input);
  const contactId = newContactId();
  const submissionId = input.submission_id ?? newSubmissionId();
  const createdAt = nowIso();
  const canonical = canonicalContact(input);
  return {
    contactId,
    submissionId,
    createdAt,
    payloadHash,
    insert: statement(
      `INSERT INTO contacts (contact_id, created_at, review_status, summary, intent, what_you_need_from_human,
         agent_identity, operator, reply_to, found_via, previous_contact_id, self_reported_test,
         submission_id, payload_hash, client_name, client_version, protocol_version)
       VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(submission_id) DO NOTHING`,
      contactId,
      createdAt,
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
    readBack: statement("SELECT contact_id, created_at, payload_hash FROM contacts WHERE submission_id = ?", submissionId),
  };
}

/**
 * Runs a contact write through the write-once step, with `extra` statements
 * (the dialogue rows of 07 §3) committed in the same all-or-nothing batch.
 */
export function storeContactWrite(db: D1Database, write: ContactWrite, extra: readonly Statement[] = []): Promise<SaveContactResult> {
  return writeOnce<StoredContactRow>(db, {
    prepare: () => ensureContactsTable(db),
    insert: extra.length === 0 ? write.insert : [write.insert, ...extra],
    readBack: write.readBack,
    payloadHash: write.payloadHash,
    isOwn: (row) => row.contact_id === write.contactId,
  });
}

/** Stores a contact once per `submission_id` (02 §5.3); every fault is `not_saved`. */
export async function saveContact(db: D1Database, input: ContactInput, client: ClientMetadata): Promise<SaveContactResult> {
  return storeContactWrite(db, await contactWrite(input, client));
}
