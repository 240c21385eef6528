/**
 * SQL text of the `observed_task_signals` table. Dependency-free, so the
 * `magnt` CLI runs the same text (values inlined by cli/lib/sql.ts) as the
 * Worker binds.
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

// ---------------------------------------------------------------- s18owner: magnt review observed

/** The columns of `magnt review observed`, in SELECT order (09 §4). */
export const REVIEW_OBSERVATION_COLUMNS = ["observation_id", "created_at", "goal", "blocker", "tried"] as const;

/** `magnt review observed`: newest first, non-test unless `includeTests`. */
export function reviewObservationsStatement(includeTests: boolean, limit: number): Statement {
  const where = includeTests ? "" : " WHERE self_reported_test = 0";
  return {
    sql: `SELECT ${REVIEW_OBSERVATION_COLUMNS.join(", ")} FROM observed_task_signals${where} ORDER BY created_at DESC, observation_id DESC LIMIT ?`,
    params: [limit],
  };
}

/** `magnt review observed <id>`: one observation with its test flag. */
export function reviewObservationStatement(observationId: string): Statement {
  return {
    sql: `SELECT ${REVIEW_OBSERVATION_COLUMNS.join(", ")}, self_reported_test FROM observed_task_signals WHERE observation_id = ?`,
    params: [observationId],
  };
}

/** Observation ids starting with `prefix` (a validated `ob_…` prefix), at most `limit`, through the primary key. */
export function observationIdsWithPrefixStatement(prefix: string, limit: number): Statement {
  return {
    sql: "SELECT observation_id AS id FROM observed_task_signals WHERE observation_id >= ?1 AND observation_id < ?1 || '~' ORDER BY observation_id LIMIT ?2",
    params: [prefix, limit],
  };
}
// ---------------------------------------------------------------- end s18owner
