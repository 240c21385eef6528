/**
 * Runs the `dialogue` group's statements (./sql.ts) through d1.ts and returns
 * row types; every reader throws `StorageError` and the capability turns it
 * into its own failure value (storage/failure.ts).
 */
import type { ContactId, DraftId, ReplyId } from "../../contracts/id-types";
import { DIALOGUE_ID_PREFIX, REPLY_ID_PREFIX } from "../../contracts/tools";
import { all, first, run, StorageError } from "../d1";
import {
  claimOldestReplyStatement,
  countWrongAttemptStatement,
  deliveredRepliesStatement,
  deliveredReplyStatement,
  hasPendingReplyStatement,
  insertReplyFromDraftStatement,
  markContactReadStatement,
  membershipsOfStatement,
  membershipStatement,
  readReceiptsStatement,
  repliesOfContactsStatement,
  repliesOfDraftsStatement,
  repliesTableExistsStatement,
  replyOfDraftStatement,
  revokedAtStatement,
  revokeDialogueStatement,
  type ContactReplyRow,
  type DeliveredReplyEntry,
  type DialogueMembership,
  type MembershipViewRow,
  type PublishedReply,
  type ReadReceiptRow,
  type ReplyRow,
} from "./sql";

export type {
  ContactReplyRow,
  DeliveredReplyEntry,
  DialogueMembership,
  DialogueRole,
  MembershipViewRow,
  PublishedReply,
  ReadReceiptRow,
  ReplyRow,
} from "./sql";
export { createDialogueStatements, deleteExpiredFetchAttemptsStatement, joinDialogueStatement } from "./sql";

export const newDialogueId = (): string => DIALOGUE_ID_PREFIX + crypto.randomUUID();
export const newReplyId = (): string => REPLY_ID_PREFIX + crypto.randomUUID();

/** The dialogue a contact belongs to, or null (unknown contact, or created while the flag was off). */
export function membershipOf(db: D1Database, contactId: ContactId): Promise<DialogueMembership | null> {
  return first<DialogueMembership>(db, membershipStatement(contactId));
}

/** Counts one wrong attempt for `keyHash` in the window and returns the window's count. */
export async function countWrongAttempt(db: D1Database, keyHash: string, windowStart: string): Promise<number> {
  const row = await first<{ failures: number }>(db, countWrongAttemptStatement(keyHash, windowStart));
  if (row === null) throw new StorageError();
  return row.failures;
}

export function claimOldestReply(db: D1Database, dialogueId: string, now: string): Promise<ReplyRow | null> {
  return first<ReplyRow>(db, claimOldestReplyStatement(dialogueId, now));
}

export function deliveredReply(db: D1Database, dialogueId: string, replyId: ReplyId): Promise<ReplyRow | null> {
  return first<ReplyRow>(db, deliveredReplyStatement(dialogueId, replyId));
}

export async function hasPendingReply(db: D1Database, dialogueId: string): Promise<boolean> {
  return (await first<{ pending: number }>(db, hasPendingReplyStatement(dialogueId)))?.pending === 1;
}

export function deliveredReplies(db: D1Database, dialogueId: string): Promise<DeliveredReplyEntry[]> {
  return all<DeliveredReplyEntry>(db, deliveredRepliesStatement(dialogueId));
}

export function readReceiptRows(db: D1Database, dialogueId: string): Promise<ReadReceiptRow[]> {
  return all<ReadReceiptRow>(db, readReceiptsStatement(dialogueId));
}

export function replyOfDraft(db: D1Database, draftId: DraftId): Promise<PublishedReply | null> {
  return first<PublishedReply>(db, replyOfDraftStatement(draftId));
}

export async function insertReplyFromDraft(
  db: D1Database,
  row: { readonly replyId: string; readonly draftId: DraftId; readonly revision: number; readonly publishedAt: string },
): Promise<void> {
  await run(db, insertReplyFromDraftStatement(row));
}

/** Sets `revoked_at` once and returns the stored value (07 §4.3). */
export async function revokeDialogue(db: D1Database, dialogueId: string, now: string): Promise<string | null> {
  await run(db, revokeDialogueStatement(dialogueId, now));
  return (await first<{ revoked_at: string | null }>(db, revokedAtStatement(dialogueId)))?.revoked_at ?? null;
}

/**
 * Records the owner's first full read of one contact (07 §6). Call it only
 * after `owner_list_contacts` with `contact_id` and `detail: "full"` returned
 * that contact, and only with `DIALOGUE_READ_RECEIPTS_ENABLED` on. Throws
 * `StorageError`; the caller decides (the listing still succeeds).
 */
export async function markContactRead(db: D1Database, contactId: ContactId, now: string): Promise<void> {
  await run(db, markContactReadStatement(contactId, now));
}

/** Memberships of the given contacts, one statement for any page size. */
export function membershipsOf(db: D1Database, contactIds: readonly ContactId[]): Promise<MembershipViewRow[]> {
  return all<MembershipViewRow>(db, membershipsOfStatement(JSON.stringify(contactIds)));
}

/** Replies answering the given contacts, oldest first, one statement for any page size. */
export function repliesOfContacts(db: D1Database, contactIds: readonly ContactId[]): Promise<ContactReplyRow[]> {
  return all<ContactReplyRow>(db, repliesOfContactsStatement(JSON.stringify(contactIds)));
}

/** Whether migration 0007 created `dialogue_replies` (see `repliesTableExistsStatement`). */
export async function repliesTableExists(db: D1Database): Promise<boolean> {
  return (await first<{ present: number }>(db, repliesTableExistsStatement()))?.present === 1;
}

/** Each given draft's published reply id, or null (07 §4.2 `published_reply_id`; 06 §6.3 `draft_published`). */
export async function publishedReplyIdsOf(db: D1Database, draftIds: readonly DraftId[]): Promise<Map<DraftId, string | null>> {
  const result = new Map<DraftId, string | null>();
  if (draftIds.length === 0) return result;
  const rows = await all<{ draft_id: DraftId; reply_id: string }>(db, repliesOfDraftsStatement(JSON.stringify(draftIds)));
  for (const id of draftIds) result.set(id, null);
  for (const row of rows) result.set(row.draft_id, row.reply_id);
  return result;
}
