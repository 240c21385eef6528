/**
 * The owner's queries (06 §6–§7): list contacts and observed goals with
 * paging and filters, save a private draft, set a contact's owner state.
 *
 * Every statement is constant SQL with bound values (09 §1); the only choice
 * between statements is between constant strings. Source rows are only read:
 * `contacts` (including `review_status`) and `observed_task_signals` are never
 * written here. Every write is read back before it is reported. Failures are
 * values (`status`), never thrown: a missing table (0006 not applied) or any
 * D1 fault is `storage_error`.
 */
import { CONTACT_ID_PATTERN, OBSERVATION_ID_PATTERN } from "../contracts/ids";
import { all, first, run, statement, StorageError } from "../storage/d1";
import {
  dialogueViewsOf,
  publishedReplyIdsOf,
  repliesTableExists,
  UNPUBLISHED_DRAFT_CONDITION,
  type OwnerDialogueView,
} from "../storage/dialogue-sql";
import { decodeBase64url, encodeBase64url } from "../lib/base64url";
import {
  contactOneStatement,
  contactPageStatement,
  draftsOfContactsStatement,
  DRAFTS_PER_CONTACT,
  effectiveOwnerState,
  type DraftRow,
  type OwnerContactRow,
  type OwnerContactState,
} from "../storage/owner/sql";
import { labelVisitorContent, previewText, type VisitorContent } from "./visitor-content";

export const DRAFT_ID_PREFIX = "dr_";
export { DRAFTS_PER_CONTACT };
export const DEFAULT_PAGE_SIZE = 20;

export type { OwnerContactState };
export type StoreFailure = { readonly status: "storage_error" };

// ---------------------------------------------------------------- cursors

interface CursorPosition {
  readonly c: string;
  readonly i: string;
}

const STORED_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(position: CursorPosition): string {
  return encodeBase64url(new TextEncoder().encode(JSON.stringify({ c: position.c, i: position.i })));
}

/** Decodes a cursor of `{"c": created_at, "i": id}`; null for anything else (→ `invalid_cursor`). */
export function decodeCursor(cursor: string, idPattern: RegExp): CursorPosition | null {
  const bytes = /^[A-Za-z0-9_-]+$/.test(cursor) ? decodeBase64url(cursor) : null;
  if (bytes === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { c, i, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof c !== "string" || typeof i !== "string") return null;
  return STORED_TIMESTAMP.test(c) && idPattern.test(i) ? { c, i } : null;
}

// ---------------------------------------------------------------- owner_list_contacts

export interface ListContactsQuery {
  /** Any case; with it, the other filters and paging are ignored. */
  readonly contactId?: string;
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

type ContactVisitorFields = {
  summary: string | null;
  intent: string | null;
  what_you_need_from_human: string | null;
  agent_identity: string | null;
  operator: string | null;
  reply_to: string | null;
  found_via: string | null;
  previous_contact_id: string | null;
  client_name: string | null;
  client_version: string | null;
  protocol_version: string | null;
};
const CONTACT_VISITOR_FIELDS = [
  "summary",
  "intent",
  "what_you_need_from_human",
  "agent_identity",
  "operator",
  "reply_to",
  "found_via",
  "previous_contact_id",
  "client_name",
  "client_version",
  "protocol_version",
] as const satisfies readonly (keyof ContactVisitorFields)[];

export interface DraftItem {
  readonly draft_id: string;
  readonly revision: number;
  readonly updated_at: string;
  readonly text: string;
  /** C.1 only: the reply this draft was published as, or null. */
  readonly published_reply_id?: string | null;
}

export interface ContactItem {
  readonly contact_id: string;
  readonly received_at: string;
  readonly state: OwnerContactState;
  readonly state_updated_at: string | null;
  readonly review_status: string;
  readonly self_reported_test: boolean;
  readonly visitor_content: VisitorContent<ContactVisitorFields>;
  readonly truncated: boolean;
  readonly drafts: readonly DraftItem[];
  /** C.1 only (07 §4.2). */
  readonly dialogue?: OwnerDialogueView;
}

export type ListResult<Item> =
  | { readonly status: "ok"; readonly items: readonly Item[]; readonly next_cursor: string | null }
  | { readonly status: "invalid_cursor" }
  | StoreFailure;

type ContactRow = OwnerContactRow;

export async function listContacts(db: D1Database, query: ListContactsQuery): Promise<ListResult<ContactItem>> {
  const preview = (query.detail ?? "preview") === "preview";
  try {
    if (query.contactId !== undefined) {
      const rows = await all<ContactRow>(db, contactOneStatement(query.contactId.toLowerCase()));
      return { status: "ok", items: await withDialogue(db, await withDrafts(db, rows, preview), query.dialogue), next_cursor: null };
    }
    let position: CursorPosition | null = null;
    if (query.cursor !== undefined) {
      position = decodeCursor(query.cursor, CONTACT_ID_PATTERN);
      if (position === null) return { status: "invalid_cursor" };
    }
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await all<ContactRow>(
      db,
      contactPageStatement({
        includeTests: query.includeTests === true,
        state: query.state ?? "any",
        since: query.since ?? null,
        after: position,
        limit: limit + 1,
      }),
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const next = rows.length > limit && last !== undefined ? encodeCursor({ c: last.created_at, i: last.contact_id }) : null;
    return { status: "ok", items: await withDialogue(db, await withDrafts(db, page, preview), query.dialogue), next_cursor: next };
  } catch (error) {
    if (error instanceof StorageError) return { status: "storage_error" };
    throw error;
  }
}

async function withDrafts(db: D1Database, rows: readonly ContactRow[], preview: boolean): Promise<ContactItem[]> {
  if (rows.length === 0) return [];
  const drafts = await all<DraftRow>(db, draftsOfContactsStatement(rows.map((row) => row.contact_id)));
  const byContact = new Map<string, DraftRow[]>();
  for (const draft of drafts) {
    const list = byContact.get(draft.contact_id) ?? [];
    list.push(draft);
    byContact.set(draft.contact_id, list);
  }
  return rows.map((row) => contactItem(row, byContact.get(row.contact_id) ?? [], preview));
}

/** Adds the C.1 fields when asked (two statements per page, whatever its size); a storage fault throws. */
async function withDialogue(
  db: D1Database,
  items: ContactItem[],
  dialogue: ListContactsQuery["dialogue"],
): Promise<ContactItem[]> {
  if (dialogue === undefined || items.length === 0) return items;
  const views = await dialogueViewsOf(db, items.map((item) => item.contact_id), dialogue);
  const published = await publishedReplyIdsOf(db, items.flatMap((item) => item.drafts.map((draft) => draft.draft_id)));
  return items.map((item) => ({
    ...item,
    drafts: item.drafts.map((draft) => ({ ...draft, published_reply_id: published.get(draft.draft_id) ?? null })),
    dialogue: views.get(item.contact_id)!,
  }));
}

function contactItem(row: ContactRow, drafts: readonly DraftRow[], preview: boolean): ContactItem {
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

// ---------------------------------------------------------------- owner_list_observed_goals

export interface ListObservedGoalsQuery {
  readonly includeTests?: boolean;
  readonly since?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

type GoalVisitorFields = { goal: string | null; blocker: string | null; tried: string | null };

export interface ObservedGoalItem {
  readonly observation_id: string;
  readonly observed_at: string;
  readonly self_reported_test: boolean;
  readonly visitor_content: VisitorContent<GoalVisitorFields>;
}

interface GoalRow {
  observation_id: string;
  created_at: string;
  goal: string;
  blocker: string | null;
  tried: string | null;
  self_reported_test: number;
}

const GOAL_COLUMNS = "SELECT observation_id, created_at, goal, blocker, tried, self_reported_test FROM observed_task_signals";
/** ?1 since or NULL, ?2 cursor created_at or NULL, ?3 cursor id, ?4 limit. */
const GOAL_PAGE_FILTERS = `(?1 IS NULL OR created_at >= ?1)
  AND (?2 IS NULL OR created_at < ?2 OR (created_at = ?2 AND observation_id < ?3))
  ORDER BY created_at DESC, observation_id DESC LIMIT ?4`;
const GOAL_PAGE_SQL = {
  withoutTests: `${GOAL_COLUMNS} WHERE self_reported_test = 0 AND ${GOAL_PAGE_FILTERS}`,
  withTests: `${GOAL_COLUMNS} WHERE ${GOAL_PAGE_FILTERS}`,
} as const;

export async function listObservedGoals(db: D1Database, query: ListObservedGoalsQuery): Promise<ListResult<ObservedGoalItem>> {
  let position: CursorPosition | null = null;
  if (query.cursor !== undefined) {
    position = decodeCursor(query.cursor, OBSERVATION_ID_PATTERN);
    if (position === null) return { status: "invalid_cursor" };
  }
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const sql = query.includeTests ? GOAL_PAGE_SQL.withTests : GOAL_PAGE_SQL.withoutTests;
  let rows: GoalRow[];
  try {
    rows = await all<GoalRow>(db, statement(sql, query.since ?? null, position?.c ?? null, position?.i ?? null, limit + 1));
  } catch (error) {
    if (error instanceof StorageError) return { status: "storage_error" };
    throw error;
  }
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    status: "ok",
    items: page.map((row) => ({
      observation_id: row.observation_id,
      observed_at: row.created_at,
      self_reported_test: row.self_reported_test === 1,
      visitor_content: labelVisitorContent({ goal: row.goal, blocker: row.blocker, tried: row.tried }),
    })),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor({ c: last.created_at, i: last.observation_id }) : null,
  };
}

// ---------------------------------------------------------------- owner_save_draft

export interface SaveDraftCommand {
  readonly contactId: string;
  /** Already trimmed, 1–8000 characters (the tool's schema). */
  readonly text: string;
  readonly draftId?: string;
  readonly expectedRevision?: number;
}

export type SaveDraftResult =
  | {
      readonly status: "draft_saved";
      readonly draft_id: string;
      readonly contact_id: string;
      readonly revision: number;
      readonly created_at: string;
      readonly updated_at: string;
    }
  | { readonly status: "contact_not_found" }
  | { readonly status: "draft_not_found" }
  | { readonly status: "revision_conflict"; readonly current_revision: number }
  | { readonly status: "draft_published" }
  | StoreFailure;

interface StoredDraft {
  draft_id: string;
  contact_id: string;
  revision: number;
  created_at: string;
  updated_at: string;
  body: string;
}

const READ_DRAFT_SQL = "SELECT draft_id, contact_id, revision, created_at, updated_at, body FROM owner_drafts WHERE draft_id = ?";
/** ?1 body, ?2 updated_at, ?3 draft id, ?4 contact id, ?5 expected revision (+ the draft id again for the guard). */
const UPDATE_DRAFT_SQL = `UPDATE owner_drafts SET body = ?, revision = revision + 1, updated_at = ?
  WHERE draft_id = ? AND contact_id = ? AND revision = ?`;
const UPDATE_UNPUBLISHED_DRAFT_SQL = `${UPDATE_DRAFT_SQL} AND ${UNPUBLISHED_DRAFT_CONDITION}`;

/** Creates a draft (revision 1) or updates one at `expectedRevision`; private, never sent (06 §6.3). */
export async function saveDraft(db: D1Database, command: SaveDraftCommand, nowMs: number): Promise<SaveDraftResult> {
  const contactId = command.contactId.toLowerCase();
  const now = new Date(nowMs).toISOString();
  try {
    if (command.draftId === undefined) {
      const draftId = DRAFT_ID_PREFIX + crypto.randomUUID();
      await run(
        db,
        statement(
          `INSERT INTO owner_drafts (draft_id, contact_id, body, revision, created_at, updated_at)
           SELECT ?, ?, ?, 1, ?, ? WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?)`,
          draftId,
          contactId,
          command.text,
          now,
          now,
          contactId,
        ),
      );
      // The read-back decides, not the reported change count: only a row we can read is a saved draft.
      const stored = await first<StoredDraft>(db, statement(READ_DRAFT_SQL, draftId));
      if (stored === null) {
        const contact = await first(db, statement("SELECT 1 AS found FROM contacts WHERE contact_id = ?", contactId));
        return contact === null ? { status: "contact_not_found" } : { status: "storage_error" };
      }
      if (stored.body !== command.text || stored.revision !== 1 || stored.contact_id !== contactId) return { status: "storage_error" };
      return saved(stored);
    }

    const draftId = command.draftId.toLowerCase();
    const expected = command.expectedRevision ?? 0;
    // A published reply never changes (07 §4.1), whatever the flags: with DIALOGUE_ENABLED off the
    // reply still waits for its visitor, so the owner's record of it must not drift. The guard is
    // left out only where 0007 was never applied, so nothing can have been published.
    const guarded = await repliesTableExists(db);
    const update = guarded
      ? statement(UPDATE_UNPUBLISHED_DRAFT_SQL, command.text, now, draftId, contactId, expected, draftId)
      : statement(UPDATE_DRAFT_SQL, command.text, now, draftId, contactId, expected);
    const updated = await run(db, update);
    const stored = await first<StoredDraft>(db, statement(READ_DRAFT_SQL, draftId));
    if (stored === null || stored.contact_id !== contactId) return { status: "draft_not_found" };
    if (updated.meta.changes !== 1 && guarded) {
      const published = await publishedReplyIdsOf(db, [draftId]);
      if (published.get(draftId) != null) return { status: "draft_published" };
    }
    if (updated.meta.changes !== 1) return { status: "revision_conflict", current_revision: stored.revision };
    // Read back: another save may have landed in between; then ours is no longer the current text.
    if (stored.revision !== expected + 1 || stored.body !== command.text) {
      return { status: "revision_conflict", current_revision: stored.revision };
    }
    return saved(stored);
  } catch (error) {
    if (error instanceof StorageError) return { status: "storage_error" };
    throw error;
  }
}

function saved(draft: StoredDraft): SaveDraftResult {
  return {
    status: "draft_saved",
    draft_id: draft.draft_id,
    contact_id: draft.contact_id,
    revision: draft.revision,
    created_at: draft.created_at,
    updated_at: draft.updated_at,
  };
}

// ---------------------------------------------------------------- owner_set_contact_state

export type SetContactStateResult =
  | {
      readonly status: "state_set";
      readonly contact_id: string;
      readonly state: OwnerContactState;
      /** `pending` when the contact had no owner state yet (as the list shows it). */
      readonly previous_state: OwnerContactState;
      readonly updated_at: string;
    }
  | { readonly status: "contact_not_found" }
  | StoreFailure;

/** Upserts the owner state of a contact; the `contacts` row is never touched (06 §6.4). */
export async function setContactState(
  db: D1Database,
  command: { readonly contactId: string; readonly state: OwnerContactState },
  nowMs: number,
): Promise<SetContactStateResult> {
  const contactId = command.contactId.toLowerCase();
  const now = new Date(nowMs).toISOString();
  try {
    const current = await first<{ contact_id: string; state: OwnerContactState | null }>(
      db,
      statement(
        `SELECT c.contact_id, s.state FROM contacts c LEFT JOIN contact_owner_state s ON s.contact_id = c.contact_id
         WHERE c.contact_id = ?`,
        contactId,
      ),
    );
    if (current === null) return { status: "contact_not_found" };
    await run(
      db,
      statement(
        `INSERT INTO contact_owner_state (contact_id, state, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(contact_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
        contactId,
        command.state,
        now,
      ),
    );
    const stored = await first<{ state: OwnerContactState; updated_at: string }>(
      db,
      statement("SELECT state, updated_at FROM contact_owner_state WHERE contact_id = ?", contactId),
    );
    if (stored === null || stored.state !== command.state || stored.updated_at !== now) return { status: "storage_error" };
    return { status: "state_set", contact_id: contactId, state: stored.state, previous_state: current.state ?? "pending", updated_at: now };
  } catch (error) {
    if (error instanceof StorageError) return { status: "storage_error" };
    throw error;
  }
}
