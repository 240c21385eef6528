/**
 * `owner_list_contacts`' listing (06 §6.1): contacts with the owner's state
 * and newest drafts, paged by keyset, previews cut, visitor text labelled;
 * with the dialogue on, each contact's `dialogue` object (07 §4.2). Composes
 * the `contacts`, `owner` and `dialogue` storage groups; holds no SQL. Source
 * rows are only read: `contacts` (including `review_status`) is never written
 * here. A storage fault — a missing 0006 table included — is `storage_error`.
 */
import type { ContactId, DraftId } from "../contracts/id-types";
import { CONTACT_ID_PATTERN } from "../contracts/ids";
import { effectiveOwnerState, type OwnerContactState } from "../contracts/owner-state";
import { CONTACT_VISITOR_FIELDS, type ContactVisitorFields } from "../storage/contacts/sql";
import { ownerContact, ownerContactPage, type OwnerContactRow } from "../storage/contacts/store";
import { publishedReplyIdsOf } from "../storage/dialogue/store";
import { onStorageError } from "../storage/failure";
import { draftsOfContacts, type DraftRow } from "../storage/owner/store";
import { dialogueViewsOf, type OwnerDialogueView } from "./dialogue-view";
import { keysetPage } from "./paging";
import { labelVisitorContent, previewText, type VisitorContent } from "./visitor-content";

export type StoreFailure = { readonly status: "storage_error" };

export type ListResult<Item> =
  | { readonly status: "ok"; readonly items: readonly Item[]; readonly next_cursor: string | null }
  | { readonly status: "invalid_cursor" }
  | StoreFailure;

export const storageFailure = (): StoreFailure => ({ status: "storage_error" });

export interface ListContactsQuery {
  /** Normalised by the input schema; with it, the other filters and paging are ignored. */
  readonly contactId?: ContactId;
  readonly includeTests?: boolean;
  readonly state?: OwnerContactState | "any";
  /** Already re-serialised with `toISOString()` (`parseSince`). */
  readonly since?: string;
  readonly limit?: number;
  readonly cursor?: string;
  readonly detail?: "preview" | "full";
  /**
   * With DIALOGUE_ENABLED (07 §4.2): add each contact's `dialogue` and each
   * draft's `published_reply_id`; `readReceipts` adds the replies' fetch times.
   */
  readonly dialogue?: { readonly readReceipts: boolean };
}

export interface DraftItem {
  readonly draft_id: DraftId;
  readonly revision: number;
  readonly updated_at: string;
  readonly text: string;
  /** C.1 only: the reply this draft was published as, or null. */
  readonly published_reply_id?: string | null;
}

export interface ContactItem {
  readonly contact_id: ContactId;
  readonly received_at: string;
  readonly state: OwnerContactState;
  readonly state_updated_at: string | null;
  readonly review_status: string;
  readonly self_reported_test: boolean;
  readonly visitor_content: VisitorContent<ContactVisitorFields>;
  readonly truncated: boolean;
  readonly drafts: readonly DraftItem[];
  /** Only with DIALOGUE_ENABLED: without the dialogue there is no state to show (07 §4.2). */
  readonly dialogue?: OwnerDialogueView;
}

export async function listContacts(db: D1Database, query: ListContactsQuery): Promise<ListResult<ContactItem>> {
  const preview = (query.detail ?? "preview") === "preview";
  return onStorageError(async (): Promise<ListResult<ContactItem>> => {
    if (query.contactId !== undefined) {
      const row = await ownerContact(db, query.contactId);
      const rows = row === null ? [] : [row];
      return { status: "ok", items: await withDialogue(db, await withDrafts(db, rows, preview), query.dialogue), next_cursor: null };
    }
    const page = await keysetPage(
      { cursor: query.cursor, limit: query.limit, idPattern: CONTACT_ID_PATTERN },
      (after, limit) =>
        ownerContactPage(db, { includeTests: query.includeTests ?? false, state: query.state ?? "any", since: query.since ?? null, after, limit }),
      (row) => ({ createdAt: row.created_at, id: row.contact_id }),
    );
    if (page.status !== "ok") return page;
    return { status: "ok", items: await withDialogue(db, await withDrafts(db, page.rows, preview), query.dialogue), next_cursor: page.next_cursor };
  }, storageFailure);
}

async function withDrafts(db: D1Database, rows: readonly OwnerContactRow[], preview: boolean): Promise<ContactItem[]> {
  if (rows.length === 0) return [];
  const drafts = await draftsOfContacts(db, rows.map((row) => row.contact_id));
  const byContact = new Map<string, DraftRow[]>();
  for (const draft of drafts) {
    const list = byContact.get(draft.contact_id) ?? [];
    list.push(draft);
    byContact.set(draft.contact_id, list);
  }
  return rows.map((row) => contactItem(row, byContact.get(row.contact_id) ?? [], preview));
}

/** Adds the C.1 fields when asked (two statements per page, whatever its size); a storage fault throws. */
async function withDialogue(db: D1Database, items: ContactItem[], dialogue: ListContactsQuery["dialogue"]): Promise<ContactItem[]> {
  if (dialogue === undefined || items.length === 0) return items;
  const views = await dialogueViewsOf(db, items.map((item) => item.contact_id), dialogue);
  const published = await publishedReplyIdsOf(db, items.flatMap((item) => item.drafts.map((draft) => draft.draft_id)));
  return items.map((item) =>
    Object.assign({}, item, {
      drafts: item.drafts.map((draft) => Object.assign({}, draft, { published_reply_id: published.get(draft.draft_id) ?? null })),
      dialogue: views.get(item.contact_id)!,
    }),
  );
}

function contactItem(row: OwnerContactRow, drafts: readonly DraftRow[], preview: boolean): ContactItem {
  let truncated = false;
  const cut = (text: string | null): string | null => {
    if (!preview) return text;
    const shown = previewText(text);
    truncated ||= shown.cut;
    return shown.text;
  };
  const fields = {} as ContactVisitorFields;
  for (const name of CONTACT_VISITOR_FIELDS) fields[name] = cut(row[name]);
  const draftItems = drafts.map((draft) => ({
    draft_id: draft.draft_id,
    revision: draft.revision,
    updated_at: draft.updated_at,
    text: cut(draft.body) ?? "",
  }));
  return {
    contact_id: row.contact_id,
    received_at: row.created_at,
    state: effectiveOwnerState(row.owner_state),
    state_updated_at: row.state_updated_at,
    review_status: row.review_status,
    self_reported_test: row.self_reported_test === 1,
    visitor_content: labelVisitorContent(fields),
    truncated,
    drafts: draftItems,
  };
}
