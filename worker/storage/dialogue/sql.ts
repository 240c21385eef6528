/**
 * SQL text of the dialogue tables of migration 0007 (`dialogues`,
 * `dialogue_contacts`, `dialogue_replies`, `dialogue_owner_reads`,
 * `dialogue_fetch_attempts`). Dependency-free, so the `magnt` CLI runs the
 * same text (values inlined by cli/lib/sql.ts) as the Worker binds.
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

// ---------------------------------------------------------------- s18owner: read marks and the owner's dialogue view (07 §4.2, §6)

/**
 * When opening a contact marks it read (07 §6), for every tool of the owner's
 * (the owner MCP's `owner_list_contacts`, `magnt review contacts <id>`): one
 * contact asked for by id, shown in full, found, and read receipts in force
 * (DIALOGUE_ENABLED and DIALOGUE_READ_RECEIPTS_ENABLED). A listing never
 * marks, and neither does a peek (`magnt review … --no-mark-read`): the owner
 * did not open the message.
 */
export function marksContactRead(view: {
  readonly oneContactById: boolean;
  readonly full: boolean;
  readonly found: boolean;
  readonly readReceiptsInForce: boolean;
}): boolean {
  return view.oneContactById && view.full && view.found && view.readReceiptsInForce;
}

/** Records the owner's first full read of one contact; only the first counts (`ON CONFLICT DO NOTHING`). */
export function markContactReadStatement(contactId: string, now: string): Statement {
  return {
    sql: `INSERT INTO dialogue_owner_reads (contact_id, read_at)
       SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM contacts WHERE contact_id = ?1)
       ON CONFLICT(contact_id) DO NOTHING`,
    params: [contactId, now],
  };
}

/** The memberships of the given contacts (`owner_list_contacts`' `dialogue.role`/`revoked_at`). */
export function membershipsOfStatement(contactIds: readonly string[]): Statement {
  return {
    sql: `SELECT dc.contact_id, dc.role, d.revoked_at FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id
       WHERE dc.contact_id IN (SELECT value FROM json_each(?))`,
    params: [JSON.stringify(contactIds)],
  };
}

/** The replies answering the given contacts, oldest first (`dialogue.replies`; `fetched_at` shown only with read receipts). */
export function repliesOfStatement(contactIds: readonly string[]): Statement {
  return {
    sql: `SELECT contact_id, reply_id, published_at, fetched_at FROM dialogue_replies
       WHERE contact_id IN (SELECT value FROM json_each(?)) ORDER BY published_at, reply_id`,
    params: [JSON.stringify(contactIds)],
  };
}

/** The columns `dialogueStateStatement` selects, in order; nothing else of a dialogue row is ever shown (never an id of the dialogue, a token or its hash). */
export const DIALOGUE_STATE_COLUMNS = [
  "role",
  "root_contact_id",
  "dialogue_created_at",
  "revoked_at",
  "messages",
  "replies_published",
  "replies_fetched",
  "owner_read_at",
] as const;

/** The dialogue state of one contact as `magnt review contacts <id>` shows it: role, root, revocation, counts, the owner's first read. */
export function dialogueStateStatement(contactId: string): Statement {
  return {
    sql:
      "SELECT dc.role, d.root_contact_id, d.created_at AS dialogue_created_at, d.revoked_at, " +
      "(SELECT COUNT(*) FROM dialogue_contacts m WHERE m.dialogue_id = dc.dialogue_id) AS messages, " +
      "(SELECT COUNT(*) FROM dialogue_replies r WHERE r.contact_id = dc.contact_id) AS replies_published, " +
      "(SELECT COUNT(*) FROM dialogue_replies r WHERE r.contact_id = dc.contact_id AND r.fetched_at IS NOT NULL) AS replies_fetched, " +
      "(SELECT o.read_at FROM dialogue_owner_reads o WHERE o.contact_id = dc.contact_id) AS owner_read_at " +
      "FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id WHERE dc.contact_id = ?",
    params: [contactId],
  };
}
// ---------------------------------------------------------------- end s18owner
