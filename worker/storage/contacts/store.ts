/**
 * Runs the `contacts` group's statements (./sql.ts) through d1.ts. Readers
 * throw `StorageError`; the write-once step turns every fault into `not_saved`.
 */
import type { ContactId } from "../../contracts/id-types";
import { all, first, run, type Statement } from "../d1";
import { baseBinding } from "../d1-retry";
import { writeOnce, type WriteOnceResult } from "../write-once";
import { CONTACTS_SCHEMA_0001 } from "./schema-0001";
import {
  contactBySubmissionStatement,
  contactExistsStatement,
  contactSourceStatement,
  insertContactStatement,
  ownerContactPageStatement,
  ownerContactStatement,
  type ContactInsertRow,
  type ContactSourceRow,
  type OwnerContactPageQuery,
  type OwnerContactRow,
  type StoredContactRow,
} from "./sql";

export type { ContactInsertRow, ContactSourceRow, OwnerContactPageQuery, OwnerContactRow, StoredContactRow } from "./sql";
export { insertContactStatement } from "./sql";

/**
 * Bindings whose `contacts` table is known to exist in this isolate. Keyed by
 * the platform binding, not the request's retry-scoped wrapper (09 §5), so the
 * lazy CREATE runs once per isolate; an entry is removed when creation fails so
 * that a later call retries.
 */
const ensuredTables = new WeakMap<D1Database, Promise<void>>();

/** Creates `contacts` from the embedded 0001 once per binding per isolate (the only lazy migration, 02 §5.3). */
function ensureContactsTable(db: D1Database): Promise<void> {
  const key = baseBinding(db);
  let ensured = ensuredTables.get(key);
  if (!ensured) {
    ensured = run(db, { sql: CONTACTS_SCHEMA_0001, params: [] }).then(() => undefined);
    ensuredTables.set(key, ensured);
    ensured.catch(() => ensuredTables.delete(key));
  }
  return ensured;
}

/**
 * Stores one contact once per `submission_id`, with `extra` statements (the
 * dialogue rows of 07 §3) committed in the same all-or-nothing batch.
 */
export function storeContact(
  db: D1Database,
  row: ContactInsertRow,
  extra: readonly Statement[] = [],
): Promise<WriteOnceResult<StoredContactRow>> {
  const insert = insertContactStatement(row);
  return writeOnce<StoredContactRow>(db, {
    prepare: () => ensureContactsTable(db),
    insert: extra.length === 0 ? insert : [insert, ...extra],
    readBack: contactBySubmissionStatement(row.submissionId),
    payloadHash: row.payloadHash,
    isOwn: (stored) => stored.contact_id === row.contactId,
  });
}

export async function contactExists(db: D1Database, contactId: ContactId): Promise<boolean> {
  return (await first(db, contactExistsStatement(contactId))) !== null;
}

/** The notification's view of a contact, or null when the row no longer exists. */
export function contactSource(db: D1Database, contactId: string): Promise<ContactSourceRow | null> {
  return first<ContactSourceRow>(db, contactSourceStatement(contactId));
}

export function ownerContactPage(db: D1Database, query: OwnerContactPageQuery): Promise<OwnerContactRow[]> {
  return all<OwnerContactRow>(db, ownerContactPageStatement(query));
}

export function ownerContact(db: D1Database, contactId: ContactId): Promise<OwnerContactRow | null> {
  return first<OwnerContactRow>(db, ownerContactStatement(contactId));
}
