/**
 * The dialogue tables of migration 0007 (09 §3, 07): every statement on
 * `dialogues`, `dialogue_contacts`, `dialogue_replies`, `dialogue_owner_reads`
 * and `dialogue_fetch_attempts`. It lives in storage/ because three
 * capabilities need it and none may import another: `contacts` batches the
 * dialogue rows with a new contact (07 §3), `dialogue` serves fetches and the
 * owner's publish/revoke (07 §4–§5), and `owner` adds dialogue state and read
 * marks to its listing (07 §4.2, §6).
 *
 * Every statement is constant SQL with bound values (09 §1). Readers throw
 * `StorageError` (d1.ts); callers turn it into their own failure value. With
 * the dialogue flags off nothing here is called except the immutability guard
 * of `owner_save_draft` (`repliesTableExists`, `UNPUBLISHED_DRAFT_CONDITION`),
 * which only reads: no C.1 table is written (07 §1, §4.1).
 */
import { DIALOGUE_ID_PREFIX, DIALOGUE_LIST_MAX, REPLY_ID_PREFIX } from "../contracts/tools";
import { all, first, run, statement, StorageError, type Statement } from "./d1";
import { markContactReadStatement, membershipsOfStatement, repliesOfStatement } from "./dialogue/sql";

export const newDialogueId = (): string => DIALOGUE_ID_PREFIX + crypto.randomUUID();
export const newReplyId = (): string => REPLY_ID_PREFIX + crypto.randomUUID();

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
    statement(
      `INSERT INTO dialogues (dialogue_id, token_hash, root_contact_id, created_at, revoked_at)
       SELECT ?, ?, ?, ?, NULL WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)`,
      row.dialogueId,
      row.tokenHash,
      row.contactId,
      row.createdAt,
      row.contactId,
    ),
    joinStatement(row.contactId, row.dialogueId, "root", row.createdAt),
  ];
}

/** Case B, after the contact insert in the same batch: the follow-up membership, guarded the same way. */
export function joinDialogueStatement(row: { readonly dialogueId: string; readonly contactId: string; readonly joinedAt: string }): Statement {
  return joinStatement(row.contactId, row.dialogueId, "follow_up", row.joinedAt);
}

function joinStatement(contactId: string, dialogueId: string, role: DialogueRole, joinedAt: string): Statement {
  return statement(
    `INSERT INTO dialogue_contacts (contact_id, dialogue_id, role, joined_at)
     SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)`,
    contactId,
    dialogueId,
    role,
    joinedAt,
    contactId,
  );
}

/** A contact's place in a dialogue, with what verification and the duplicate answer need. */
export interface DialogueMembership {
  readonly contact_id: string;
  readonly dialogue_id: string;
  readonly role: DialogueRole;
  readonly token_hash: string;
  /** When the dialogue was opened: the clock of the token's re-issue window (07 §3 step 4). */
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** The dialogue a contact belongs to, or null (unknown contact, or created while the flag was off). */
export function membershipOf(db: D1Database, contactId: string): Promise<DialogueMembership | null> {
  return first<DialogueMembership>(
    db,
    statement(
      `SELECT dc.contact_id, dc.dialogue_id, dc.role, d.token_hash, d.created_at, d.revoked_at
       FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id
       WHERE dc.contact_id = ?`,
      contactId.toLowerCase(),
    ),
  );
}

// ---------------------------------------------------------------- wrong-attempt counters (07 §5.3)

/** Counts one wrong attempt for `keyHash` in the window and returns the window's count. */
export async function countWrongAttempt(db: D1Database, keyHash: string, windowStart: string): Promise<number> {
  const row = await first<{ failures: number }>(
    db,
    statement(
      `INSERT INTO dialogue_fetch_attempts (key_hash, window_start, failures) VALUES (?, ?, 1)
       ON CONFLICT(key_hash, window_start) DO UPDATE SET failures = failures + 1
       RETURNING failures`,
      keyHash,
      windowStart,
    ),
  );
  if (row === null) throw new StorageError();
  return row.failures;
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
export function claimOldestReply(db: D1Database, dialogueId: string, now: string): Promise<ReplyRow | null> {
  return first<ReplyRow>(
    db,
    statement(
      `UPDATE dialogue_replies SET fetched_at = ?1
       WHERE reply_id = (
         SELECT reply_id FROM dialogue_replies WHERE dialogue_id = ?2 AND fetched_at IS NULL
         ORDER BY published_at, reply_id LIMIT 1
       ) AND dialogue_id = ?2 AND fetched_at IS NULL
       RETURNING ${REPLY_COLUMNS}`,
      now,
      dialogueId,
    ),
  );
}

/** A reply of this dialogue that was already delivered, or null (unknown, foreign or not yet delivered). */
export function deliveredReply(db: D1Database, dialogueId: string, replyId: string): Promise<ReplyRow | null> {
  return first<ReplyRow>(
    db,
    statement(
      `SELECT ${REPLY_COLUMNS} FROM dialogue_replies WHERE dialogue_id = ? AND reply_id = ? AND fetched_at IS NOT NULL`,
      dialogueId,
      replyId.toLowerCase(),
    ),
  );
}

export async function hasPendingReply(db: D1Database, dialogueId: string): Promise<boolean> {
  const row = await first<{ pending: number }>(
    db,
    statement(
      "SELECT EXISTS (SELECT 1 FROM dialogue_replies WHERE dialogue_id = ? AND fetched_at IS NULL) AS pending",
      dialogueId,
    ),
  );
  return row?.pending === 1;
}

export interface DeliveredReplyEntry {
  readonly reply_id: string;
  readonly in_reply_to: string;
  readonly published_at: string;
  readonly fetched_at: string;
}

/** Delivered replies of a dialogue, newest first, at most 20, without text (07 §5.4). */
export function deliveredReplies(db: D1Database, dialogueId: string): Promise<DeliveredReplyEntry[]> {
  return all<DeliveredReplyEntry>(
    db,
    statement(
      `SELECT reply_id, contact_id AS in_reply_to, published_at, fetched_at FROM dialogue_replies
       WHERE dialogue_id = ? AND fetched_at IS NOT NULL
       ORDER BY published_at DESC, reply_id DESC LIMIT ${DIALOGUE_LIST_MAX}`,
      dialogueId,
    ),
  );
}

export interface ReadReceipt {
  readonly contact_id: string;
  readonly received_at: string;
  readonly read_by_owner: boolean;
  readonly read_at: string | null;
}

/** Every message of a dialogue, newest first, at most 20, with the owner's first full read (07 §6). */
export async function readReceipts(db: D1Database, dialogueId: string): Promise<ReadReceipt[]> {
  const rows = await all<{ contact_id: string; received_at: string; read_at: string | null }>(
    db,
    statement(
      `SELECT dc.contact_id, c.created_at AS received_at, r.read_at
       FROM dialogue_contacts dc
       JOIN contacts c ON c.contact_id = dc.contact_id
       LEFT JOIN dialogue_owner_reads r ON r.contact_id = dc.contact_id
       WHERE dc.dialogue_id = ?
       ORDER BY c.created_at DESC, dc.contact_id DESC LIMIT ${DIALOGUE_LIST_MAX}`,
      dialogueId,
    ),
  );
  return rows.map((row) => ({
    contact_id: row.contact_id,
    received_at: row.received_at,
    read_by_owner: row.read_at !== null,
    read_at: row.read_at,
  }));
}

// ---------------------------------------------------------------- owner side (07 §4, §6)

export interface DraftForPublishing {
  readonly draft_id: string;
  readonly contact_id: string;
  readonly revision: number;
}

export function draftForPublishing(db: D1Database, draftId: string): Promise<DraftForPublishing | null> {
  return first<DraftForPublishing>(
    db,
    statement("SELECT draft_id, contact_id, revision FROM owner_drafts WHERE draft_id = ?", draftId.toLowerCase()),
  );
}

export interface PublishedReply {
  readonly reply_id: string;
  readonly draft_id: string;
  readonly draft_revision: number;
  readonly contact_id: string;
  readonly published_at: string;
}

export function replyOfDraft(db: D1Database, draftId: string): Promise<PublishedReply | null> {
  return first<PublishedReply>(
    db,
    statement(
      "SELECT reply_id, draft_id, draft_revision, contact_id, published_at FROM dialogue_replies WHERE draft_id = ?",
      draftId.toLowerCase(),
    ),
  );
}

/**
 * Publishes a draft at exactly `revision`: the body is copied from the draft
 * row in the same statement, and only while the draft still has that revision
 * and its contact's dialogue is not revoked, so the text published is the
 * text the owner reviewed even if a save races with it. At most one reply per
 * draft (`draft_id` UNIQUE). Whether it inserted is decided by reading back.
 */
export async function insertReplyFromDraft(
  db: D1Database,
  row: { readonly replyId: string; readonly draftId: string; readonly revision: number; readonly publishedAt: string },
): Promise<void> {
  await run(
    db,
    statement(
      `INSERT INTO dialogue_replies (reply_id, dialogue_id, contact_id, draft_id, draft_revision, body, published_at, fetched_at)
       SELECT ?1, dc.dialogue_id, d.contact_id, d.draft_id, d.revision, d.body, ?2, NULL
       FROM owner_drafts d
       JOIN dialogue_contacts dc ON dc.contact_id = d.contact_id
       JOIN dialogues g ON g.dialogue_id = dc.dialogue_id
       WHERE d.draft_id = ?3 AND d.revision = ?4 AND g.revoked_at IS NULL
       ON CONFLICT(draft_id) DO NOTHING`,
      row.replyId,
      row.publishedAt,
      row.draftId.toLowerCase(),
      row.revision,
    ),
  );
}

export function contactExists(db: D1Database, contactId: string): Promise<boolean> {
  return first<{ found: number }>(db, statement("SELECT 1 AS found FROM contacts WHERE contact_id = ?", contactId.toLowerCase())).then(
    (row) => row !== null,
  );
}

/** Sets `revoked_at` once; a second call leaves the stored time unchanged (07 §4.3). Returns the stored value. */
export async function revokeDialogue(db: D1Database, dialogueId: string, now: string): Promise<string | null> {
  await run(db, statement("UPDATE dialogues SET revoked_at = ? WHERE dialogue_id = ? AND revoked_at IS NULL", now, dialogueId));
  const row = await first<{ revoked_at: string | null }>(db, statement("SELECT revoked_at FROM dialogues WHERE dialogue_id = ?", dialogueId));
  return row?.revoked_at ?? null;
}

/**
 * Records the owner's first full read of one contact (07 §6). Call it only
 * after `owner_list_contacts` with `contact_id` and `detail: "full"` returned
 * that contact, and only with `DIALOGUE_READ_RECEIPTS_ENABLED` on. Only the
 * first read counts (`ON CONFLICT DO NOTHING`). Throws `StorageError`; the
 * caller swallows it so the listing still succeeds.
 */
export async function markContactRead(db: D1Database, contactId: string, now: string): Promise<void> {
  await run(db, markContactReadStatement(contactId.toLowerCase(), now));
}

/** A reply as the owner sees it under a contact (07 §4.2); `fetched_at` only with read receipts on. */
export interface OwnerReplyView {
  readonly reply_id: string;
  readonly published_at: string;
  readonly fetched_at?: string | null;
}

/** `owner_list_contacts`' `dialogue` object of one contact (07 §4.2). */
export interface OwnerDialogueView {
  readonly in_dialogue: boolean;
  readonly role: DialogueRole | null;
  readonly revoked_at: string | null;
  readonly replies: readonly OwnerReplyView[];
}

const NOT_IN_DIALOGUE: OwnerDialogueView = { in_dialogue: false, role: null, revoked_at: null, replies: [] };

/**
 * The `dialogue` object of each listed contact, keyed by contact id (every id
 * given gets an entry). Two statements for any page size. The replies are those
 * answering that contact, oldest first.
 */
export async function dialogueViewsOf(
  db: D1Database,
  contactIds: readonly string[],
  options: { readonly readReceipts: boolean },
): Promise<Map<string, OwnerDialogueView>> {
  const views = new Map<string, OwnerDialogueView>();
  if (contactIds.length === 0) return views;
  const lowerIds = contactIds.map((id) => id.toLowerCase());
  const memberships = await all<{ contact_id: string; role: DialogueRole; revoked_at: string | null }>(db, membershipsOfStatement(lowerIds));
  const replies = await all<{ contact_id: string; reply_id: string; published_at: string; fetched_at: string | null }>(db, repliesOfStatement(lowerIds));
  const byContact = new Map<string, OwnerReplyView[]>();
  for (const reply of replies) {
    const list = byContact.get(reply.contact_id) ?? [];
    list.push(
      options.readReceipts
        ? { reply_id: reply.reply_id, published_at: reply.published_at, fetched_at: reply.fetched_at }
        : { reply_id: reply.reply_id, published_at: reply.published_at },
    );
    byContact.set(reply.contact_id, list);
  }
  for (const id of contactIds) views.set(id.toLowerCase(), NOT_IN_DIALOGUE);
  for (const member of memberships) {
    views.set(member.contact_id, {
      in_dialogue: true,
      role: member.role,
      revoked_at: member.revoked_at,
      replies: byContact.get(member.contact_id) ?? [],
    });
  }
  return views;
}

// ---------------------------------------------------------------- a published reply never changes (07 §4.1)

/**
 * Whether migration 0007 created `dialogue_replies`. `owner_save_draft` guards
 * every update of a draft with `UNPUBLISHED_DRAFT_CONDITION` whatever the
 * flags; on a database without 0007 (B.1: 0006 only) nothing was ever
 * published, and the guard — which would not even prepare there — is left out.
 * Concurrency: 0007 applied between this check and the update leaves a new,
 * empty table; a reply of this draft would need a dialogue opened and a
 * publication made in that gap, so the unguarded update cannot overwrite one.
 */
export async function repliesTableExists(db: D1Database): Promise<boolean> {
  const row = await first<{ present: number }>(
    db,
    statement("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dialogue_replies') AS present"),
  );
  return row?.present === 1;
}

/**
 * AND-ed into `owner_save_draft`'s update (one bound value: the draft id): the
 * update and the publication's revision-checked INSERT…SELECT serialise in
 * D1, so a save never changes a draft after (or while) it is published.
 */
export const UNPUBLISHED_DRAFT_CONDITION = "NOT EXISTS (SELECT 1 FROM dialogue_replies WHERE draft_id = ?)";

/** Each given draft's published reply id, or null (07 §4.2 `published_reply_id`; 06 §6.3 `draft_published`). */
export async function publishedReplyIdsOf(db: D1Database, draftIds: readonly string[]): Promise<Map<string, string | null>> {
  const result = new Map<string, string | null>();
  if (draftIds.length === 0) return result;
  const ids = draftIds.map((id) => id.toLowerCase());
  const rows = await all<{ draft_id: string; reply_id: string }>(
    db,
    statement("SELECT draft_id, reply_id FROM dialogue_replies WHERE draft_id IN (SELECT value FROM json_each(?))", JSON.stringify(ids)),
  );
  for (const id of ids) result.set(id, null);
  for (const row of rows) result.set(row.draft_id, row.reply_id);
  return result;
}
