/**
 * SQL text of the owner's tables (`contact_owner_state`, `owner_drafts`) and
 * of the owner's read model of contacts. Dependency-free: the Worker binds
 * these statements through storage/d1.ts, and the `magnt` CLI runs the very
 * same text through `wrangler d1 execute` (values inlined by cli/lib/sql.ts),
 * so the owner's MCP client and his terminal can never disagree about a
 * contact's state (issue 18).
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

// ---------------------------------------------------------------- s18owner: the owner's contact read model (owner_list_contacts and magnt review)

/** The owner's triage states (06 §6.4); a contact without a `contact_owner_state` row is `pending`. */
export const OWNER_CONTACT_STATES = ["pending", "acknowledged", "archived"] as const;
export type OwnerContactState = (typeof OWNER_CONTACT_STATES)[number];

/** The one reading of a missing state row: what both `owner_list_contacts` and `magnt review` show. */
export function effectiveOwnerState(stored: OwnerContactState | null | undefined): OwnerContactState {
  return stored ?? "pending";
}

/** Drafts shown per contact in a listing and in `magnt review contacts <id>` (06 §6.1). */
export const DRAFTS_PER_CONTACT = 5;

/** The contact's columns with its owner state (`owner_state` NULL = never set; see `effectiveOwnerState`). */
export const CONTACT_COLUMNS = `c.contact_id, c.created_at, c.review_status, c.summary, c.intent, c.what_you_need_from_human,
  c.agent_identity, c.operator, c.reply_to, c.found_via, c.previous_contact_id, c.self_reported_test,
  c.client_name, c.client_version, c.protocol_version, s.state AS owner_state, s.updated_at AS state_updated_at
  FROM contacts c LEFT JOIN contact_owner_state s ON s.contact_id = c.contact_id`;

/** ?1 state ('any' = all), ?2 since or NULL, ?3 cursor created_at or NULL, ?4 cursor id, ?5 limit. */
const CONTACT_PAGE_FILTERS = `(?1 = 'any' OR COALESCE(s.state, 'pending') = ?1)
  AND (?2 IS NULL OR c.created_at >= ?2)
  AND (?3 IS NULL OR c.created_at < ?3 OR (c.created_at = ?3 AND c.contact_id < ?4))
  ORDER BY c.created_at DESC, c.contact_id DESC LIMIT ?5`;
export const CONTACT_PAGE_SQL = {
  withoutTests: `SELECT ${CONTACT_COLUMNS} WHERE c.self_reported_test = 0 AND ${CONTACT_PAGE_FILTERS}`,
  withTests: `SELECT ${CONTACT_COLUMNS} WHERE ${CONTACT_PAGE_FILTERS}`,
} as const;

/** One page of contacts, newest first; `limit` rows at most (the caller asks one more to know of a next page). */
export function contactPageStatement(query: {
  readonly includeTests: boolean;
  readonly state: OwnerContactState | "any";
  readonly since: string | null;
  readonly after: { readonly c: string; readonly i: string } | null;
  readonly limit: number;
}): Statement {
  return {
    sql: query.includeTests ? CONTACT_PAGE_SQL.withTests : CONTACT_PAGE_SQL.withoutTests,
    params: [query.state, query.since, query.after?.c ?? null, query.after?.i ?? null, query.limit],
  };
}

/** One contact by its (already lower-case) id, test or not. */
export function contactOneStatement(contactId: string): Statement {
  return { sql: `SELECT ${CONTACT_COLUMNS} WHERE c.contact_id = ?`, params: [contactId] };
}

/** The newest `DRAFTS_PER_CONTACT` drafts of each given contact, with their revisions. */
export function draftsOfContactsStatement(contactIds: readonly string[]): Statement {
  return {
    sql: `SELECT draft_id, contact_id, revision, updated_at, body FROM (
    SELECT draft_id, contact_id, revision, updated_at, body,
      ROW_NUMBER() OVER (PARTITION BY contact_id ORDER BY updated_at DESC, draft_id DESC) AS position
    FROM owner_drafts WHERE contact_id IN (SELECT value FROM json_each(?))
  ) WHERE position <= ${DRAFTS_PER_CONTACT} ORDER BY contact_id, updated_at DESC, draft_id DESC`,
    params: [JSON.stringify(contactIds)],
  };
}

/** A row of `contactPageStatement` / `contactOneStatement`. */
export interface OwnerContactRow {
  contact_id: string;
  created_at: string;
  review_status: string;
  summary: string | null;
  intent: string | null;
  what_you_need_from_human: string | null;
  agent_identity: string | null;
  operator: string | null;
  reply_to: string | null;
  found_via: string | null;
  previous_contact_id: string | null;
  self_reported_test: number;
  client_name: string | null;
  client_version: string | null;
  protocol_version: string | null;
  owner_state: OwnerContactState | null;
  state_updated_at: string | null;
}

/** A row of `draftsOfContactsStatement`. */
export interface DraftRow {
  draft_id: string;
  contact_id: string;
  revision: number;
  updated_at: string;
  body: string;
}

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
// ---------------------------------------------------------------- end s18owner
