/**
 * Group `dialogue` — the one owner of the dialogue tables of migration 0007
 * (09 §3, 07): `dialogues`, `dialogue_contacts`, `dialogue_replies`,
 * `dialogue_owner_reads` and `dialogue_fetch_attempts`. Dependency-free: SQL
 * text, batchable statement builders and row types; the CLI imports the same
 * text.
 *
 * Reads: contacts, owner_drafts
 *
 * (Joining and read marks are guarded by the contact row's existence; the
 * read receipts list a dialogue's contacts with their received time; a
 * publication copies the draft's text in the same statement, so the text
 * published is the text reviewed.)
 *
 * Every statement is constant SQL with bound values, so no value a visitor
 * sends can change what a statement does (09 §1). With the
 * dialogue flags off nothing here runs except the immutability guard of
 * `owner_save_draft` (`repliesTableExists`), which only reads: no C.1 table is
 * written (07 §1, §4.1).
 */
import type { ContactId, DraftId, ReplyId } from "../../contracts/id-types";
import { DIALOGUE_LIST_MAX } from "../../contracts/tools";
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

export type DialogueRole = "root" | "follow_up";

// ---------------------------------------------------------------- joining (propose_contact, 07 §3)

/**
 * Case A, after the contact insert in the same batch: the dialogue and its root
 * membership, each inserted only when the contact row with the freshly
 * generated id exists — i.e. only by the request whose contact insert won the
 * race on `submission_id`. A losing duplicate inserts nothing.
 */
export function createDialogueStatements(row: {
  readonly dialogueId: string;
  readonly tokenHash: string;
  readonly contactId: string;
  readonly createdAt: string;
}): readonly Statement[] {
  return [
    {
      sql: `INSERT INTO dialogues (dialogue_id, token_hash, root_contact_id, created_at, revoked_at)
       SELECT ?, ?, ?, ?, NULL WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)
       ON CONFLICT(root_contact_id) DO NOTHING`,
      params: [row.dialogueId, row.tokenHash, row.contactId, row.createdAt, row.contactId],
    },
    joinStatement(row.contactId, row.dialogueId, "root", row.createdAt),
  ];
}

/** Case B, after the contact insert in the same batch: the follow-up membership, guarded the same way. */
export function joinDialogueStatement(row: { readonly dialogueId: string; readonly contactId: string; readonly joinedAt: string }): Statement {
  return joinStatement(row.contactId, row.dialogueId, "follow_up", row.joinedAt);
}

function joinStatement(contactId: string, dialogueId: string, role: DialogueRole, joinedAt: string): Statement {
  return {
    sql: `INSERT INTO dialogue_contacts (contact_id, dialogue_id, role, joined_at)
     SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)
     ON CONFLICT(contact_id) DO NOTHING`,
    params: [contactId, dialogueId, role, joinedAt, contactId],
  };
}

/** A contact's place in a dialogue, with what verification and the duplicate answer need. */
export interface DialogueMembership {
  readonly contact_id: ContactId;
  readonly dialogue_id: string;
  readonly role: DialogueRole;
  readonly token_hash: string;
  /** When the dialogue was opened: the clock of the token's re-issue window (07 §3 step 4). */
  readonly created_at: string;
  readonly revoked_at: string | null;
}

export function membershipStatement(contactId: ContactId): Statement {
  return {
    sql: `SELECT dc.contact_id, dc.dialogue_id, dc.role, d.token_hash, d.created_at, d.revoked_at
       FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id
       WHERE dc.contact_id = ?`,
    params: [contactId],
  };
}

// ---------------------------------------------------------------- wrong-attempt counters (07 §5.3)

/** Counts one wrong attempt for `keyHash` in the window, RETURNING the window's count. */
export function countWrongAttemptStatement(keyHash: string, windowStart: string): Statement {
  return {
    sql: `INSERT INTO dialogue_fetch_attempts (key_hash, window_start, failures) VALUES (?, ?, 1)
       ON CONFLICT(key_hash, window_start) DO UPDATE SET failures = failures + 1
       RETURNING failures`,
    params: [keyHash, windowStart],
    // Never retried (09 §5.1, decision 178): a counter bumped twice is not the same as once.
    idempotent: false,
  };
}

/** One bounded batch of the hourly cleanup (05 §5.1): windows that started before `cutoff`. */
export function deleteExpiredFetchAttemptsStatement(cutoff: string, limit: number): Statement {
  return {
    sql: "DELETE FROM dialogue_fetch_attempts WHERE rowid IN (SELECT rowid FROM dialogue_fetch_attempts WHERE window_start < ? LIMIT ?)",
    params: [cutoff, limit],
  };
}

// ---------------------------------------------------------------- replies to a visitor (07 §5)

export interface ReplyRow {
  readonly reply_id: string;
  /** The contact the reply answers. */
  readonly contact_id: string;
  readonly published_at: string;
  readonly fetched_at: string | null;
  readonly body: string;
}

const REPLY_COLUMNS = "reply_id, contact_id, published_at, fetched_at, body";

/**
 * Claims the oldest undelivered reply of a dialogue in one statement: the
 * `fetched_at IS NULL` guard on the row itself means two concurrent fetches
 * can never both claim it (07 §5.2 step 4).
 */
export function claimOldestReplyStatement(dialogueId: string, now: string): Statement {
  return {
    sql: `UPDATE dialogue_replies SET fetched_at = ?1
       WHERE reply_id = (
         SELECT reply_id FROM dialogue_replies WHERE dialogue_id = ?2 AND fetched_at IS NULL
         ORDER BY published_at, reply_id LIMIT 1
       ) AND dialogue_id = ?2 AND fetched_at IS NULL
       RETURNING ${REPLY_COLUMNS}`,
    params: [now, dialogueId],
    // Never retried (09 §5.1, decision 178): after a committed first attempt a retry claims nothing, or the next reply.
    idempotent: false,
  };
}

/** A reply of this dialogue that was already delivered (unknown, foreign or undelivered: no row). */
export function deliveredReplyStatement(dialogueId: string, replyId: ReplyId): Statement {
  return {
    sql: `SELECT ${REPLY_COLUMNS} FROM dialogue_replies WHERE dialogue_id = ? AND reply_id = ? AND fetched_at IS NOT NULL`,
    params: [dialogueId, replyId],
  };
}

export function hasPendingReplyStatement(dialogueId: string): Statement {
  return {
    sql: "SELECT EXISTS (SELECT 1 FROM dialogue_replies WHERE dialogue_id = ? AND fetched_at IS NULL) AS pending",
    params: [dialogueId],
  };
}

export interface DeliveredReplyEntry {
  readonly reply_id: string;
  readonly in_reply_to: string;
  readonly published_at: string;
  readonly fetched_at: string;
}

/** Delivered replies of a dialogue, newest first, at most 20, without text (07 §5.4). */
export function deliveredRepliesStatement(dialogueId: string): Statement {
  return {
    sql: `SELECT reply_id, contact_id AS in_reply_to, published_at, fetched_at FROM dialogue_replies
       WHERE dialogue_id = ? AND fetched_at IS NOT NULL
       ORDER BY published_at DESC, reply_id DESC LIMIT ${DIALOGUE_LIST_MAX}`,
    params: [dialogueId],
  };
}

export interface ReadReceiptRow {
  readonly contact_id: string;
  readonly received_at: string;
  readonly read_at: string | null;
}

/** Every message of a dialogue, newest first, at most 20, with the owner's first full read (07 §6). */
export function readReceiptsStatement(dialogueId: string): Statement {
  return {
    sql: `SELECT dc.contact_id, c.created_at AS received_at, r.read_at
       FROM dialogue_contacts dc
       JOIN contacts c ON c.contact_id = dc.contact_id
       LEFT JOIN dialogue_owner_reads r ON r.contact_id = dc.contact_id
       WHERE dc.dialogue_id = ?
       ORDER BY c.created_at DESC, dc.contact_id DESC LIMIT ${DIALOGUE_LIST_MAX}`,
    params: [dialogueId],
  };
}

// ---------------------------------------------------------------- owner side (07 §4, §6)

export interface PublishedReply {
  readonly reply_id: string;
  readonly draft_id: string;
  readonly draft_revision: number;
  readonly contact_id: string;
  readonly published_at: string;
}

export function replyOfDraftStatement(draftId: DraftId): Statement {
  return {
    sql: "SELECT reply_id, draft_id, draft_revision, contact_id, published_at FROM dialogue_replies WHERE draft_id = ?",
    params: [draftId],
  };
}

/**
 * Publishes a draft at exactly `revision`: the body is copied from the draft
 * row in the same statement, and only while the draft still has that revision
 * and its contact's dialogue is not revoked, so the text published is the
 * text the owner reviewed even if a save races with it. At most one reply per
 * draft (`draft_id` UNIQUE). Whether it inserted is decided by reading back.
 */
export function insertReplyFromDraftStatement(row: {
  readonly replyId: string;
  readonly draftId: DraftId;
  readonly revision: number;
  readonly publishedAt: string;
}): Statement {
  return {
    sql: `INSERT INTO dialogue_replies (reply_id, dialogue_id, contact_id, draft_id, draft_revision, body, published_at, fetched_at)
       SELECT ?1, dc.dialogue_id, d.contact_id, d.draft_id, d.revision, d.body, ?2, NULL
       FROM owner_drafts d
       JOIN dialogue_contacts dc ON dc.contact_id = d.contact_id
       JOIN dialogues g ON g.dialogue_id = dc.dialogue_id
       WHERE d.draft_id = ?3 AND d.revision = ?4 AND g.revoked_at IS NULL
       ON CONFLICT(draft_id) DO NOTHING`,
    params: [row.replyId, row.publishedAt, row.draftId, row.revision],
  };
}

/** Sets `revoked_at` once; a second call leaves the stored time unchanged (07 §4.3). */
export function revokeDialogueStatement(dialogueId: string, now: string): Statement {
  return { sql: "UPDATE dialogues SET revoked_at = ? WHERE dialogue_id = ? AND revoked_at IS NULL", params: [now, dialogueId] };
}

export function revokedAtStatement(dialogueId: string): Statement {
  return { sql: "SELECT revoked_at FROM dialogues WHERE dialogue_id = ?", params: [dialogueId] };
}

/**
 * The owner's first full read of one contact (07 §6): only the first read
 * counts (`ON CONFLICT DO NOTHING`), and an unknown contact writes nothing.
 */
export function markContactReadStatement(contactId: ContactId, now: string): Statement {
  return {
    sql: `INSERT INTO dialogue_owner_reads (contact_id, read_at)
       SELECT ?, ? WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)
       ON CONFLICT(contact_id) DO NOTHING`,
    params: [contactId, now, contactId],
  };
}

export interface MembershipViewRow {
  readonly contact_id: ContactId;
  readonly role: DialogueRole;
  readonly revoked_at: string | null;
}

/** The dialogue membership of each given contact (JSON array of ids), one statement for any page size. */
export function membershipsOfStatement(contactIdsJson: string): Statement {
  return {
    sql: `SELECT dc.contact_id, dc.role, d.revoked_at FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id
       WHERE dc.contact_id IN (SELECT value FROM json_each(?))`,
    params: [contactIdsJson],
  };
}

export interface ContactReplyRow {
  readonly contact_id: ContactId;
  readonly reply_id: string;
  readonly published_at: string;
  readonly fetched_at: string | null;
}

/** The replies answering each given contact (JSON array of ids), oldest first. */
export function repliesOfContactsStatement(contactIdsJson: string): Statement {
  return {
    sql: `SELECT contact_id, reply_id, published_at, fetched_at FROM dialogue_replies
       WHERE contact_id IN (SELECT value FROM json_each(?)) ORDER BY published_at, reply_id`,
    params: [contactIdsJson],
  };
}

/** Each given draft's reply (JSON array of draft ids); drafts never published have no row. */
export function repliesOfDraftsStatement(draftIdsJson: string): Statement {
  return {
    sql: "SELECT draft_id, reply_id FROM dialogue_replies WHERE draft_id IN (SELECT value FROM json_each(?))",
    params: [draftIdsJson],
  };
}

// ---------------------------------------------------------------- a published reply never changes (07 §4.1)

/**
 * Whether migration 0007 created `dialogue_replies`. `owner_save_draft` guards
 * every update of a draft against a publication whatever the flags; on a
 * database without 0007 (B.1: 0006 only) nothing was ever published, and the
 * guard — which would not even prepare there — is left out. Concurrency: 0007
 * applied between this check and the update leaves a new, empty table; a
 * reply of this draft would need a dialogue opened and a publication made in
 * that gap, so the unguarded update cannot overwrite one.
 */
export function repliesTableExistsStatement(): Statement {
  return {
    sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dialogue_replies') AS present",
    params: [],
  };
}

// ---------------------------------------------------------------- the read rule and the dialogue state of one contact (07 §6; owner MCP and magnt review)

/**
 * When opening a contact marks it read (07 §6), for every tool of the owner's
 * (the owner MCP's `owner_list_contacts`, `magnt review contacts <id>`): one
 * contact asked for by id, shown in full, found, and read receipts in force
 * (DIALOGUE_ENABLED and DIALOGUE_READ_RECEIPTS_ENABLED). A listing never
 * marks, and neither does a peek (`magnt review … --no-mark-read`): the owner
 * did not open the message.
 */
export function marksContactRead(view: {
  readonly oneContactById: boolean;
  readonly full: boolean;
  readonly found: boolean;
  readonly readReceiptsInForce: boolean;
}): boolean {
  return view.oneContactById && view.full && view.found && view.readReceiptsInForce;
}

/** The columns `dialogueStateStatement` selects, in order; nothing else of a dialogue row is ever shown (never an id of the dialogue, a token or its hash). */
export const DIALOGUE_STATE_COLUMNS = [
  "role",
  "root_contact_id",
  "dialogue_created_at",
  "revoked_at",
  "messages",
  "replies_published",
  "replies_fetched",
  "owner_read_at",
] as const;

/** The dialogue state of one contact as `magnt review contacts <id>` shows it: role, root, revocation, counts, the owner's first read. */
export function dialogueStateStatement(contactId: string): Statement {
  return {
    sql:
      "SELECT dc.role, d.root_contact_id, d.created_at AS dialogue_created_at, d.revoked_at, " +
      "(SELECT COUNT(*) FROM dialogue_contacts m WHERE m.dialogue_id = dc.dialogue_id) AS messages, " +
      "(SELECT COUNT(*) FROM dialogue_replies r WHERE r.contact_id = dc.contact_id) AS replies_published, " +
      "(SELECT COUNT(*) FROM dialogue_replies r WHERE r.contact_id = dc.contact_id AND r.fetched_at IS NOT NULL) AS replies_fetched, " +
      "(SELECT o.read_at FROM dialogue_owner_reads o WHERE o.contact_id = dc.contact_id) AS owner_read_at " +
      "FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id WHERE dc.contact_id = ?",
    params: [contactId],
  };
}
