/**
 * `owner_set_contact_state` (06 §6.4): the owner's triage state of a contact,
 * upserted in the `owner` storage group and read back; the `contacts` row is
 * never touched. A storage fault is `storage_error`.
 */
import type { ContactId } from "../contracts/id-types";
import { effectiveOwnerState, type OwnerContactState } from "../contracts/owner-state";
import { ownerContact } from "../storage/contacts/store";
import { onStorageError } from "../storage/failure";
import { ownerState, upsertOwnerState } from "../storage/owner/store";
import { storageFailure, type StoreFailure } from "./contacts";

export type SetContactStateResult =
  | {
      readonly status: "state_set";
      readonly contact_id: ContactId;
      readonly state: OwnerContactState;
      /** `pending` when the contact had no owner state yet (as the list shows it). */
      readonly previous_state: OwnerContactState;
      readonly updated_at: string;
    }
  | { readonly status: "contact_not_found" }
  | StoreFailure;

export async function setContactState(
  db: D1Database,
  command: { readonly contactId: ContactId; readonly state: OwnerContactState },
  nowMs: number,
): Promise<SetContactStateResult> {
  const contactId = command.contactId;
  const now = new Date(nowMs).toISOString();
  return onStorageError(async (): Promise<SetContactStateResult> => {
    const current = await ownerContact(db, contactId);
    if (current === null) return { status: "contact_not_found" };
    await upsertOwnerState(db, contactId, command.state, now);
    const stored = await ownerState(db, contactId);
    if (stored === null || stored.state !== command.state || stored.updated_at !== now) return storageFailure();
    return { status: "state_set", contact_id: contactId, state: stored.state, previous_state: effectiveOwnerState(current.owner_state), updated_at: now };
  }, storageFailure);
}
