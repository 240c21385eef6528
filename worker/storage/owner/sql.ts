/**
 * Group `owner` — the one owner of the owner's private records (06 §6–§7,
 * migration 0006): `contact_owner_state` (his triage state of a contact) and
 * `owner_drafts` (his private reply drafts). Dependency-free: SQL text,
 * statement builders and row types; the CLI imports the same text.
 *
 * Reads: contacts, dialogue_replies
 *
 * (A draft is created only for an existing contact, and a draft that was
 * published as a reply never changes again, 07 §4.1 — so the draft writes
 * read those two tables in the same statement.)
 */
import type { ContactId, DraftId } from "../../contracts/id-types";
import type { OwnerContactState } from "../../contracts/owner-state";
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

/** Drafts shown per contact in a list (06 §6.1). */
export const DRAFTS_PER_CONTACT = 5;

// ---------------------------------------------------------------- owner_drafts

export interface DraftRow {
  draft_id: DraftId;
  contact_id: ContactId;
  revision: number;
  updated_at: string;
  body: string;
}

/** The newest `DRAFTS_PER_CONTACT` drafts of each given contact (JSON array of ids), one statement for any page size. */
export function draftsOfContactsStatement(contactIdsJson: string): Statement {
  return {
    sql: `SELECT draft_id, contact_id, revision, updated_at, body FROM (
    SELECT draft_id, contact_id, revision, updated_at, body,
      ROW_NUMBER() OVER (PARTITION BY contact_id ORDER BY updated_at DESC, draft_id DESC) AS position
    FROM owner_drafts WHERE contact_id IN (SELECT value FROM json_each(?))
  ) WHERE position <= ${DRAFTS_PER_CONTACT} ORDER BY contact_id, updated_at DESC, draft_id DESC`,
    params: [contactIdsJson],
  };
}

export interface StoredDraftRow {
  draft_id: DraftId;
  contact_id: ContactId;
  revision: number;
  created_at: string;
  updated_at: string;
  body: string;
}

export function draftStatement(draftId: DraftId): Statement {
  return { sql: "SELECT draft_id, contact_id, revision, created_at, updated_at, body FROM owner_drafts WHERE draft_id = ?", params: [draftId] };
}

/** Revision 1 of a new draft, written only when the contact exists (its absence is `contact_not_found`, not an orphan row). */
export function insertDraftStatement(row: { readonly draftId: DraftId; readonly contactId: ContactId; readonly body: string; readonly now: string }): Statement {
  return {
    sql: `INSERT INTO owner_drafts (draft_id, contact_id, body, revision, created_at, updated_at)
           SELECT ?, ?, ?, 1, ?, ? WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)
           ON CONFLICT(draft_id) DO NOTHING`,
    params: [row.draftId, row.contactId, row.body, row.now, row.now, row.contactId],
  };
}

const UPDATE_DRAFT_SQL = `UPDATE owner_drafts SET body = ?, revision = revision + 1, updated_at = ?
  WHERE draft_id = ? AND contact_id = ? AND revision = ?`;
/**
 * The same update, refused while the draft has a published reply: the update
 * and the publication's revision-checked INSERT…SELECT serialise in D1, so a
 * save never changes a draft after (or while) it is published (07 §4.1).
 */
const UPDATE_UNPUBLISHED_DRAFT_SQL = `${UPDATE_DRAFT_SQL} AND NOT EXISTS (SELECT 1 FROM dialogue_replies WHERE draft_id = ?)`;

/**
 * The next revision of a draft at exactly `expectedRevision` (optimistic
 * concurrency, 06 §6.3). `guarded`: with the publication guard — left out only
 * where migration 0007 never ran, so nothing can have been published.
 */
export function updateDraftStatement(row: {
  readonly draftId: DraftId;
  readonly contactId: ContactId;
  readonly body: string;
  readonly now: string;
  readonly expectedRevision: number;
  readonly guarded: boolean;
}): Statement {
  const params = [row.body, row.now, row.draftId, row.contactId, row.expectedRevision];
  // Never retried (09 §5.1, decision 178): after a committed first attempt the retry changes nothing
  // and reads as a revision conflict.
  return row.guarded
    ? { sql: UPDATE_UNPUBLISHED_DRAFT_SQL, params: [...params, row.draftId], idempotent: false }
    : { sql: UPDATE_DRAFT_SQL, params, idempotent: false };
}

export interface DraftForPublishingRow {
  readonly draft_id: DraftId;
  readonly contact_id: ContactId;
  readonly revision: number;
}

export function draftForPublishingStatement(draftId: DraftId): Statement {
  return { sql: "SELECT draft_id, contact_id, revision FROM owner_drafts WHERE draft_id = ?", params: [draftId] };
}

// ---------------------------------------------------------------- contact_owner_state

/** Upserts the owner state of a contact; the `contacts` row is never touched (06 §6.4). */
export function upsertOwnerStateStatement(contactId: ContactId, state: OwnerContactState, now: string): Statement {
  return {
    sql: `INSERT INTO contact_owner_state (contact_id, state, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(contact_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
    params: [contactId, state, now],
  };
}

export interface OwnerStateRow {
  state: OwnerContactState;
  updated_at: string;
}

export function ownerStateStatement(contactId: ContactId): Statement {
  return { sql: "SELECT state, updated_at FROM contact_owner_state WHERE contact_id = ?", params: [contactId] };
}

// ---------------------------------------------------------------- magnt review drafts (09 §4) and short draft ids given back (08 §10)

/** The columns of `magnt review drafts`, in SELECT order. */
export const REVIEW_DRAFT_COLUMNS = ["draft_id", "contact_id", "revision", "created_at", "updated_at", "body"] as const;
const REVIEW_DRAFT_SELECT = `SELECT ${REVIEW_DRAFT_COLUMNS.map((column) => `d.${column}`).join(", ")} FROM owner_drafts d JOIN contacts c ON c.contact_id = d.contact_id`;

/** `magnt review drafts`: drafts, newest first, of non-test contacts unless `includeTests`. */
export function reviewDraftsStatement(includeTests: boolean, limit: number): Statement {
  const where = includeTests ? "" : " WHERE c.self_reported_test = 0";
  return { sql: `${REVIEW_DRAFT_SELECT}${where} ORDER BY d.updated_at DESC, d.draft_id DESC LIMIT ?`, params: [limit] };
}

/** `magnt review drafts <id>`: one draft with its contact's test flag. */
export function reviewDraftStatement(draftId: string): Statement {
  return { sql: `${REVIEW_DRAFT_SELECT.replace(" FROM ", ", c.self_reported_test FROM ")} WHERE d.draft_id = ?`, params: [draftId] };
}

/** Draft ids starting with `prefix` (a validated `dr_…` prefix), at most `limit`: a short id given back (08 §10). */
export function draftIdsWithPrefixStatement(prefix: string, limit: number): Statement {
  return { sql: "SELECT draft_id AS id FROM owner_drafts WHERE draft_id >= ?1 AND draft_id < ?1 || '~' ORDER BY draft_id LIMIT ?2", params: [prefix, limit] };
}
