/**
 * Group `contacts` — the one owner of table `contacts` (09 §3, migration 0001):
 * every statement that names it, as plain `{ sql, params }` with bound values
 * (09 §1), and the row types it returns. Dependency-free so the CLI can import
 * the same text (docs/architecture.md "Storage").
 *
 * Reads: contact_owner_state
 *
 * (A read model of the owner's listing is driven by `contacts` and joins the
 * owner's triage state, so it lives here; the owner group writes that state.)
 */
import type { ContactId } from "../../contracts/id-types";
import type { OwnerContactState } from "../../contracts/owner-state";
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

/** The visitor's columns in the order of the insert (canonical values, 02 §5.3). */
export interface ContactInsertRow {
  readonly contactId: string;
  readonly createdAt: string;
  readonly summary: string;
  readonly intent: string | null;
  readonly what_you_need_from_human: string | null;
  readonly agent_identity: string | null;
  readonly operator: string | null;
  readonly reply_to: string | null;
  readonly found_via: string | null;
  readonly previous_contact_id: string | null;
  readonly self_reported_test: number;
  readonly submissionId: string;
  readonly payloadHash: string;
  readonly clientName: string | null;
  readonly clientVersion: string | null;
  readonly protocolVersion: string | null;
}

/** `INSERT … ON CONFLICT(submission_id) DO NOTHING`: a retry never creates a second row (02 §5.3). */
export function insertContactStatement(row: ContactInsertRow): Statement {
  return {
    sql: `INSERT INTO contacts (contact_id, created_at, review_status, summary, intent, what_you_need_from_human,
         agent_identity, operator, reply_to, found_via, previous_contact_id, self_reported_test,
         submission_id, payload_hash, client_name, client_version, protocol_version)
       VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(submission_id) DO NOTHING`,
    params: [
      row.contactId,
      row.createdAt,
      row.summary,
      row.intent,
      row.what_you_need_from_human,
      row.agent_identity,
      row.operator,
      row.reply_to,
      row.found_via,
      row.previous_contact_id,
      row.self_reported_test,
      row.submissionId,
      row.payloadHash,
      row.clientName,
      row.clientVersion,
      row.protocolVersion,
    ],
  };
}

export interface StoredContactRow {
  contact_id: ContactId;
  created_at: string;
  payload_hash: string;
}

/** The write-once read-back: the row stored under a submission id, whoever inserted it. */
export function contactBySubmissionStatement(submissionId: string): Statement {
  return { sql: "SELECT contact_id, created_at, payload_hash FROM contacts WHERE submission_id = ?", params: [submissionId] };
}

export function contactExistsStatement(contactId: ContactId): Statement {
  return { sql: "SELECT 1 AS found FROM contacts WHERE contact_id = ?", params: [contactId] };
}

/**
 * What a notification may use of a contact (05 §5 step 10): ids, time, the
 * test flag, presence booleans and the excerpt source. `reply_to`, `operator`,
 * `agent_identity`, `found_via` and client metadata are never selected, so no
 * notification can leak them.
 */
export interface ContactSourceRow {
  contact_id: string;
  created_at: string;
  self_reported_test: number;
  has_reply_channel: number;
  is_follow_up: number;
  summary: string;
}

export function contactSourceStatement(contactId: string): Statement {
  return {
    sql: `SELECT contact_id, created_at, self_reported_test,
                (reply_to IS NOT NULL AND reply_to <> '') AS has_reply_channel,
                (previous_contact_id IS NOT NULL AND previous_contact_id <> '') AS is_follow_up,
                summary
         FROM contacts WHERE contact_id = ?`,
    params: [contactId],
  };
}

// ---------------------------------------------------------------- the owner's listing (06 §6.1)


/** A contact with the owner's triage state (no state row = `pending`, shown by the caller). */
export interface OwnerContactRow {
  contact_id: ContactId;
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

/**
 * The columns of a contact that a visitor (or an agent on a visitor's behalf)
 * wrote: every view labels them as visitor content and sanitises them — the
 * owner MCP's `visitor_content` and `magnt review`'s record alike.
 */
export const CONTACT_VISITOR_FIELDS = [
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
] as const satisfies readonly (keyof OwnerContactRow)[];

export type ContactVisitorFields = Pick<OwnerContactRow, (typeof CONTACT_VISITOR_FIELDS)[number]>;

const OWNER_CONTACT_COLUMNS = `c.contact_id, c.created_at, c.review_status, c.summary, c.intent, c.what_you_need_from_human,
  c.agent_identity, c.operator, c.reply_to, c.found_via, c.previous_contact_id, c.self_reported_test,
  c.client_name, c.client_version, c.protocol_version, s.state AS owner_state, s.updated_at AS state_updated_at
  FROM contacts c LEFT JOIN contact_owner_state s ON s.contact_id = c.contact_id`;

/** ?1 state ('any' = all), ?2 since or NULL, ?3 cursor created_at or NULL, ?4 cursor id, ?5 limit. */
const OWNER_CONTACT_PAGE_FILTERS = `(?1 = 'any' OR COALESCE(s.state, 'pending') = ?1)
  AND (?2 IS NULL OR c.created_at >= ?2)
  AND (?3 IS NULL OR c.created_at < ?3 OR (c.created_at = ?3 AND c.contact_id < ?4))
  ORDER BY c.created_at DESC, c.contact_id DESC LIMIT ?5`;

/** Two constant statements instead of SQL built from the flag: the SQL text never depends on a request, so D1 logs and plans see only these two (09 §1). */
const OWNER_CONTACT_PAGE_SQL = {
  withoutTests: `SELECT ${OWNER_CONTACT_COLUMNS} WHERE c.self_reported_test = 0 AND ${OWNER_CONTACT_PAGE_FILTERS}`,
  withTests: `SELECT ${OWNER_CONTACT_COLUMNS} WHERE ${OWNER_CONTACT_PAGE_FILTERS}`,
} as const;

/** A keyset position: rows strictly after (`created_at`, id) in newest-first order. */
export interface KeysetPosition {
  readonly createdAt: string;
  readonly id: string;
}

export interface OwnerContactPageQuery {
  readonly includeTests: boolean;
  readonly state: OwnerContactState | "any";
  readonly since: string | null;
  readonly after: KeysetPosition | null;
  /** Rows to read (the caller asks for one more than it shows, to know whether a next page exists). */
  readonly limit: number;
}

export function ownerContactPageStatement(query: OwnerContactPageQuery): Statement {
  return {
    sql: query.includeTests ? OWNER_CONTACT_PAGE_SQL.withTests : OWNER_CONTACT_PAGE_SQL.withoutTests,
    params: [query.state, query.since, query.after?.createdAt ?? null, query.after?.id ?? null, query.limit],
  };
}

export function ownerContactStatement(contactId: ContactId): Statement {
  return { sql: `SELECT ${OWNER_CONTACT_COLUMNS} WHERE c.contact_id = ?`, params: [contactId] };
}

// ---------------------------------------------------------------- short ids given back (magnt review contacts <prefix>)

/** Contact ids starting with `prefix` (a validated `mc_…` prefix), at most `limit`, through the primary key. */
export function contactIdsWithPrefixStatement(prefix: string, limit: number): Statement {
  // Every id character (hex, '-', '_') sorts below '~', so [prefix, prefix || '~') is exactly the ids starting with it.
  return { sql: "SELECT contact_id AS id FROM contacts WHERE contact_id >= ?1 AND contact_id < ?1 || '~' ORDER BY contact_id LIMIT ?2", params: [prefix, limit] };
}
