/**
 * SQL text of `notification_outbox` and `notification_state`. Dependency-free,
 * so the `magnt` CLI runs the same text (values inlined by cli/lib/sql.ts) as
 * the Worker binds.
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

// ---------------------------------------------------------------- s18owner: magnt outbox (read only, 08 §12)

/** Every outbox state (the CHECK constraint of 0004). */
export const OUTBOX_STATES = ["pending", "sending", "retry_wait", "delivered", "failed", "skipped"] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];

/** The outbox columns `magnt outbox` shows, in SELECT order: references and delivery metadata, never text. */
export const OUTBOX_ROW_COLUMNS = [
  "outbox_id",
  "source_kind",
  "source_id",
  "state",
  "attempts",
  "next_attempt_at",
  "last_attempt_at",
  "last_error_code",
  "last_http_status",
  "delivered_at",
  "telegram_message_id",
  "created_at",
] as const;

/** The notifier's one state row; the chat pin only as pinned or not, never its hash. */
export const NOTIFIER_STATE_SQL =
  "SELECT activated_at, owner_chat_hash IS NOT NULL AS chat_pinned, lease_expires_at, backoff_until, consecutive_failures FROM notification_state WHERE id = 1";

/** Rows per state. */
export const OUTBOX_COUNTS_SQL = "SELECT state, COUNT(*) AS n FROM notification_outbox GROUP BY state";

const OUTBOX_ROWS_SELECT = `SELECT ${OUTBOX_ROW_COLUMNS.join(", ")} FROM notification_outbox`;
const OUTBOX_ROWS_ORDER = "ORDER BY created_at DESC, outbox_id DESC LIMIT ?";

/** Outbox rows, newest first, of one state or all. */
export function outboxRowsStatement(state: OutboxState | null, limit: number): Statement {
  return state === null
    ? { sql: `${OUTBOX_ROWS_SELECT} ${OUTBOX_ROWS_ORDER}`, params: [limit] }
    : { sql: `${OUTBOX_ROWS_SELECT} WHERE state = ? ${OUTBOX_ROWS_ORDER}`, params: [state, limit] };
}
// ---------------------------------------------------------------- end s18owner
