/**
 * Runs the `owner` group's statements (./sql.ts) through d1.ts; every
 * function returns rows and throws `StorageError` on a fault (a missing 0006
 * table included). The owner capability turns that into `storage_error`.
 */
import type { ContactId, DraftId } from "../../contracts/id-types";
import type { OwnerContactState } from "../../contracts/owner-state";
import { all, first, run } from "../d1";
import {
  draftForPublishingStatement,
  draftsOfContactsStatement,
  draftStatement,
  insertDraftStatement,
  ownerStateStatement,
  updateDraftStatement,
  upsertOwnerStateStatement,
  type DraftForPublishingRow,
  type DraftRow,
  type OwnerStateRow,
  type StoredDraftRow,
} from "./sql";

export { DRAFTS_PER_CONTACT, type DraftForPublishingRow, type DraftRow, type OwnerStateRow, type StoredDraftRow } from "./sql";

export function draftsOfContacts(db: D1Database, contactIds: readonly ContactId[]): Promise<DraftRow[]> {
  return all<DraftRow>(db, draftsOfContactsStatement(JSON.stringify(contactIds)));
}

export function draft(db: D1Database, draftId: DraftId): Promise<StoredDraftRow | null> {
  return first<StoredDraftRow>(db, draftStatement(draftId));
}

export async function insertDraft(db: D1Database, row: Parameters<typeof insertDraftStatement>[0]): Promise<void> {
  await run(db, insertDraftStatement(row));
}

/** Returns how many rows the update changed (1, or 0 on a revision conflict or a published draft). */
export async function updateDraft(db: D1Database, row: Parameters<typeof updateDraftStatement>[0]): Promise<number> {
  return (await run(db, updateDraftStatement(row))).meta.changes;
}

export function draftForPublishing(db: D1Database, draftId: DraftId): Promise<DraftForPublishingRow | null> {
  return first<DraftForPublishingRow>(db, draftForPublishingStatement(draftId));
}

export async function upsertOwnerState(db: D1Database, contactId: ContactId, state: OwnerContactState, now: string): Promise<void> {
  await run(db, upsertOwnerStateStatement(contactId, state, now));
}

export function ownerState(db: D1Database, contactId: ContactId): Promise<OwnerStateRow | null> {
  return first<OwnerStateRow>(db, ownerStateStatement(contactId));
}
