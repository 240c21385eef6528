/**
 * Group `observations` — the one owner of table `observed_task_signals`, the
 * private observed demand (03 §7, migration 0003). Only the minimal searched
 * task and a test flag are stored: no client, address, receipt or any other
 * identifier besides the opaque `observation_id`. Dependency-free.
 *
 * Reads: (only its own table)
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

export interface ObservationInsertRow {
  readonly observationId: string;
  readonly createdAt: string;
  readonly goal: string;
  readonly blocker: string | null;
  readonly tried: string | null;
  readonly isTest: boolean;
}

/** Batched with the goal-notification enqueue of the outbox group (05 §3), so both land or neither. */
export function insertObservationStatement(row: ObservationInsertRow): Statement {
  return {
    sql: `INSERT INTO observed_task_signals (observation_id, created_at, goal, blocker, tried, self_reported_test)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(observation_id) DO NOTHING`,
    params: [row.observationId, row.createdAt, row.goal, row.blocker, row.tried, row.isTest ? 1 : 0],
  };
}

/** What a notification may use of an observation (05 §5 step 10): presence booleans, not the blocker or tried text. */
export interface ObservationSourceRow {
  observation_id: string;
  created_at: string;
  self_reported_test: number;
  has_blocker: number;
  has_tried: number;
  goal: string;
}

export function observationSourceStatement(observationId: string): Statement {
  return {
    sql: `SELECT observation_id, created_at, self_reported_test,
              (blocker IS NOT NULL AND blocker <> '') AS has_blocker,
              (tried IS NOT NULL AND tried <> '') AS has_tried,
              goal
       FROM observed_task_signals WHERE observation_id = ?`,
    params: [observationId],
  };
}

export interface ObservedGoalRow {
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
/** Two constant statements instead of SQL built from the flag: the SQL text never depends on a request, so D1 logs and plans see only these two (09 §1). */
const GOAL_PAGE_SQL = {
  withoutTests: `${GOAL_COLUMNS} WHERE self_reported_test = 0 AND ${GOAL_PAGE_FILTERS}`,
  withTests: `${GOAL_COLUMNS} WHERE ${GOAL_PAGE_FILTERS}`,
} as const;

export interface ObservedGoalPageQuery {
  readonly includeTests: boolean;
  readonly since: string | null;
  /** Rows strictly after this (`created_at`, id) in newest-first order. */
  readonly after: { readonly createdAt: string; readonly id: string } | null;
  readonly limit: number;
}

export function observedGoalPageStatement(query: ObservedGoalPageQuery): Statement {
  return {
    sql: query.includeTests ? GOAL_PAGE_SQL.withTests : GOAL_PAGE_SQL.withoutTests,
    params: [query.since, query.after?.createdAt ?? null, query.after?.id ?? null, query.limit],
  };
}

// ---------------------------------------------------------------- magnt review observed

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
