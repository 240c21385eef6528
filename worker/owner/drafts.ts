/**
 * `owner_save_draft` (06 §6.3): create a private draft (revision 1) or update
 * one at `expectedRevision`; never sent anywhere. Composes the `owner`,
 * `contacts` and `dialogue` storage groups; every write is read back before
 * it is reported, and a storage fault is `storage_error`.
 */
import type { ContactId, DraftId } from "../contracts/id-types";
import { contactExists } from "../storage/contacts/store";
import { publishedReplyIdsOf, repliesTableExists } from "../storage/dialogue/store";
import { onStorageError } from "../storage/failure";
import { draft, insertDraft, updateDraft, type StoredDraftRow } from "../storage/owner/store";
import { storageFailure, type StoreFailure } from "./contacts";

export const DRAFT_ID_PREFIX = "dr_";

export interface SaveDraftCommand {
  readonly contactId: ContactId;
  /** Already trimmed, 1–8000 characters (the tool's schema). */
  readonly text: string;
  readonly draftId?: DraftId;
  readonly expectedRevision?: number;
}

export type SaveDraftResult =
  | {
      readonly status: "draft_saved";
      readonly draft_id: DraftId;
      readonly contact_id: ContactId;
      readonly revision: number;
      readonly created_at: string;
      readonly updated_at: string;
    }
  | { readonly status: "contact_not_found" }
  | { readonly status: "draft_not_found" }
  | { readonly status: "revision_conflict"; readonly current_revision: number }
  | { readonly status: "draft_published" }
  | StoreFailure;

/** Creates a draft (revision 1) or updates one at `expectedRevision`; private, never sent (06 §6.3). */
export async function saveDraft(db: D1Database, command: SaveDraftCommand, nowMs: number): Promise<SaveDraftResult> {
  const contactId = command.contactId;
  const now = new Date(nowMs).toISOString();
  return onStorageError(async (): Promise<SaveDraftResult> => {
    if (command.draftId === undefined) {
      const draftId = (DRAFT_ID_PREFIX + crypto.randomUUID()) as DraftId; // randomUUID is lower-case, as stored ids are
      await insertDraft(db, { draftId, contactId, body: command.text, now });
      // The read-back decides, not the reported change count: only a row we can read is a saved draft.
      const stored = await draft(db, draftId);
      if (stored === null) return (await contactExists(db, contactId)) ? storageFailure() : { status: "contact_not_found" };
      if (stored.body !== command.text || stored.revision !== 1 || stored.contact_id !== contactId) return storageFailure();
      return saved(stored);
    }

    const draftId = command.draftId;
    const expected = command.expectedRevision ?? 0;
    // A published reply never changes (07 §4.1), whatever the flags: with DIALOGUE_ENABLED off the
    // reply still waits for its visitor, so the owner's record of it must not drift. The guard is
    // left out only where 0007 was never applied, so nothing can have been published.
    const guarded = await repliesTableExists(db);
    const changed = await updateDraft(db, { draftId, contactId, body: command.text, now, expectedRevision: expected, guarded });
    const stored = await draft(db, draftId);
    if (stored === null || stored.contact_id !== contactId) return { status: "draft_not_found" };
    if (changed !== 1 && guarded) {
      const published = await publishedReplyIdsOf(db, [draftId]);
      if (published.get(draftId) != null) return { status: "draft_published" };
    }
    if (changed !== 1) return { status: "revision_conflict", current_revision: stored.revision };
    // Read back: another save may have landed in between; then ours is no longer the current text.
    if (stored.revision !== expected + 1 || stored.body !== command.text) {
      return { status: "revision_conflict", current_revision: stored.revision };
    }
    return saved(stored);
  }, storageFailure);
}

function saved(stored: StoredDraftRow): SaveDraftResult {
  return {
    status: "draft_saved",
    draft_id: stored.draft_id,
    contact_id: stored.contact_id,
    revision: stored.revision,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}
