/**
 * The `dialogue` object of `owner_list_contacts` (07 §4.2), built from the
 * dialogue storage group's rows. It is the tool's response shape, so it lives
 * with the tool, not with the storage that returns rows.
 */
import type { ContactId } from "../contracts/id-types";
import { membershipsOf, repliesOfContacts, type DialogueRole } from "../storage/dialogue/store";

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
 * answering that contact, oldest first. Throws `StorageError`.
 */
export async function dialogueViewsOf(
  db: D1Database,
  contactIds: readonly ContactId[],
  options: { readonly readReceipts: boolean },
): Promise<Map<ContactId, OwnerDialogueView>> {
  const views = new Map<ContactId, OwnerDialogueView>();
  if (contactIds.length === 0) return views;
  const memberships = await membershipsOf(db, contactIds);
  const replies = await repliesOfContacts(db, contactIds);
  const byContact = new Map<ContactId, OwnerReplyView[]>();
  for (const reply of replies) {
    const list = byContact.get(reply.contact_id) ?? [];
    list.push(
      options.readReceipts
        ? { reply_id: reply.reply_id, published_at: reply.published_at, fetched_at: reply.fetched_at }
        : { reply_id: reply.reply_id, published_at: reply.published_at },
    );
    byContact.set(reply.contact_id, list);
  }
  for (const id of contactIds) views.set(id, NOT_IN_DIALOGUE);
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
