/**
 * SQL text of the `task_signals` table. Dependency-free, so the `magnt` CLI
 * runs the same text (values inlined by cli/lib/sql.ts) as the Worker binds.
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

// ---------------------------------------------------------------- s18owner: magnt review signals, magnt signals hide|unhide

/** The columns of `magnt review signals`, in SELECT order (09 §4). */
export const REVIEW_SIGNAL_COLUMNS = ["signal_id", "created_at", "goal", "blocker", "tried", "learned", "status"] as const;
const REVIEW_SIGNAL_SELECT = `SELECT ${REVIEW_SIGNAL_COLUMNS.join(", ")} FROM task_signals`;

/** `magnt review signals`: newest first, non-test unless `includeTests`. */
export function reviewSignalsStatement(includeTests: boolean, limit: number): Statement {
  const where = includeTests ? "" : " WHERE self_reported_test = 0";
  return { sql: `${REVIEW_SIGNAL_SELECT}${where} ORDER BY created_at DESC, signal_id DESC LIMIT ?`, params: [limit] };
}

/** `magnt review signals <id>`: one signal with its test flag. */
export function reviewSignalStatement(signalId: string): Statement {
  return { sql: `SELECT ${REVIEW_SIGNAL_COLUMNS.join(", ")}, self_reported_test FROM task_signals WHERE signal_id = ?`, params: [signalId] };
}

/** The statuses `magnt signals hide|unhide` write (the CHECK constraint of 0002). */
export const SIGNAL_STATUSES = { hidden: "hidden", active: "active" } as const;

/** 08 §11: sets one signal's status and returns it (no row: no such signal). */
export function setSignalStatusStatement(signalId: string, status: keyof typeof SIGNAL_STATUSES): Statement {
  return { sql: "UPDATE task_signals SET status = ? WHERE signal_id = ? RETURNING signal_id, status", params: [SIGNAL_STATUSES[status], signalId] };
}

/** Signal ids starting with `prefix` (a validated `ts_…` prefix), at most `limit`, through the primary key. */
export function signalIdsWithPrefixStatement(prefix: string, limit: number): Statement {
  return { sql: "SELECT signal_id AS id FROM task_signals WHERE signal_id >= ?1 AND signal_id < ?1 || '~' ORDER BY signal_id LIMIT ?2", params: [prefix, limit] };
}
// ---------------------------------------------------------------- end s18owner
