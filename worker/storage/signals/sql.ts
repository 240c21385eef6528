/**
 * Group `signals` — the one owner of tables `task_signals`, the searchable
 * corpus (03 §4, §8, migration 0002), and `task_signal_tokens`, each row's
 * stored token list (03 §5.6, migration 0008). Dependency-free: SQL text,
 * statement builders and row types; the CLI imports the same text.
 *
 * Reads: (only its own table)
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

/**
 * A candidate of the search window: what matching needs (03 §4, §5.6), and
 * the returnable text of every row short enough to come with it. A long row
 * with a current token list comes without its text: it is matched on its list
 * alone, and its text is read only if it matches (`matchedSignalsStatement`).
 */
export interface SignalCandidateRow {
  signal_id: string;
  /** The stored token list (0008): matched on, never returned. NULL for a row from before 0008, or when `list_held`. */
  tokens: string | null;
  tokenizer_version: number | null;
  /** 1 when the row's list is of the current version and its id was bound as held (?5): the list is left out, the isolate has it. */
  list_held: number;
  /** NULL exactly when the text was left out (then all four are NULL); a stored goal is never NULL. */
  goal: string | null;
  blocker: string | null;
  tried: string | null;
  learned: string | null;
}

/** Whether a window row's text is left out: a current list (?3) and more than ?4 characters of text. */
const TEXT_LEFT_OUT = `(t.tokenizer_version = ?3 AND length(s.goal) + ifnull(length(s.blocker), 0) + ifnull(length(s.tried), 0) + ifnull(length(s.learned), 0) > ?4)`;
/** Whether a window row's list is left out: a current list (?3) whose signal id is among those the isolate holds (?5, a JSON array). */
const LIST_HELD = `(t.tokenizer_version = ?3 AND s.signal_id IN (SELECT value FROM json_each(?5)))`;

/**
 * The candidate window of a search: ?1 the cohort flag, ?2 the window size, ?3
 * the current tokenizer version, ?4 the most text a row brings with it, ?5 the
 * ids whose current lists the isolate already holds (03 §5.6). Search text
 * never reaches SQL, D1 logs or a cache — matching happens in memory (03 §4),
 * so only these five values are bound.
 */
export const SEARCH_WINDOW_SQL = `SELECT s.signal_id,
  CASE WHEN ${LIST_HELD} THEN NULL ELSE t.tokens END AS tokens, t.tokenizer_version,
  CASE WHEN ${LIST_HELD} THEN 1 ELSE 0 END AS list_held,
  CASE WHEN ${TEXT_LEFT_OUT} THEN NULL ELSE s.goal END AS goal,
  CASE WHEN ${TEXT_LEFT_OUT} THEN NULL ELSE s.blocker END AS blocker,
  CASE WHEN ${TEXT_LEFT_OUT} THEN NULL ELSE s.tried END AS tried,
  CASE WHEN ${TEXT_LEFT_OUT} THEN NULL ELSE s.learned END AS learned
FROM task_signals s LEFT JOIN task_signal_tokens t ON t.signal_id = s.signal_id
WHERE s.status = 'active' AND s.self_reported_test = ?1
ORDER BY s.created_at DESC, s.signal_id DESC
LIMIT ?2`;

/** What a window query binds besides the cohort (03 §4). */
export interface SearchWindowParams {
  readonly size: number;
  readonly tokenizerVersion: number;
  readonly inlineTextMax: number;
  /** Signal ids whose current lists the caller holds; D1 leaves those lists out. */
  readonly heldIds: readonly string[];
}

export function searchWindowStatement(isTest: boolean, window: SearchWindowParams): Statement {
  return { sql: SEARCH_WINDOW_SQL, params: [isTest ? 1 : 0, window.size, window.tokenizerVersion, window.inlineTextMax, heldIdsJson(window.heldIds)] };
}

/**
 * `?5` as JSON, encoded once per array: a search binds the same held ids as the last one while its window
 * does not change (signals/candidate-tokens.ts), and 100 ids are 4 KB of JSON per search otherwise. Callers
 * never mutate an array they bind (the held ids are frozen).
 */
const encodedHeldIds = new WeakMap<readonly string[], string>();

function heldIdsJson(ids: readonly string[]): string {
  let json = encodedHeldIds.get(ids);
  if (json === undefined) encodedHeldIds.set(ids, (json = JSON.stringify(ids)));
  return json;
}

/** The columns of a match that a search may return (03 §4): no timestamps, hashes or status. */
export interface SignalMatchRow {
  signal_id: string;
  goal: string;
  blocker: string | null;
  tried: string | null;
  learned: string | null;
}

/**
 * The texts of a search's matches that the window left out (at most the
 * result cap, ids the window returned): still active and of the same cohort,
 * so a signal hidden between the two reads is not returned. Rows come in no
 * particular order.
 */
export function matchedSignalsStatement(isTest: boolean, signalIds: readonly string[]): Statement {
  return {
    sql: `SELECT signal_id, goal, blocker, tried, learned FROM task_signals
WHERE status = 'active' AND self_reported_test = ? AND signal_id IN (${signalIds.map(() => "?").join(", ")})`,
    params: [isTest ? 1 : 0, ...signalIds],
  };
}

/** A contribution's canonical columns (03 §8.1) with its generated ids. */
export interface SignalInsertRow {
  readonly signalId: string;
  readonly createdAt: string;
  readonly goal: string;
  readonly blocker: string | null;
  readonly tried: string | null;
  readonly learned: string | null;
  readonly self_reported_test: number;
  readonly submissionId: string;
  readonly payloadHash: string;
  /** The token list the search matches on (03 §5.6), computed by the capability, and its tokenizer's version. */
  readonly tokens: string;
  readonly tokenizerVersion: number;
}

/** Insert-or-ignore by `submission_id`: a duplicate never touches the stored row, so it cannot reactivate a hidden signal. */
export function insertSignalStatement(row: SignalInsertRow): Statement {
  return {
    sql: `INSERT INTO task_signals (signal_id, created_at, goal, blocker, tried, learned, submission_id, payload_hash,
         self_reported_test, status)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active')
       ON CONFLICT(submission_id) DO NOTHING`,
    params: [
      row.signalId,
      row.createdAt,
      row.goal,
      row.blocker,
      row.tried,
      row.learned,
      row.submissionId,
      row.payloadHash,
      row.self_reported_test,
    ],
  };
}

/**
 * The row's token list, batched after the insert: written only when this
 * call's row is the one stored (the `SELECT … WHERE signal_id = <this call's
 * id>` finds nothing after a lost race), and `ON CONFLICT DO NOTHING` for the
 * door's own retry of a batch whose first attempt committed (09 §5.1).
 */
export function insertSignalTokensStatement(row: SignalInsertRow): Statement {
  return {
    sql: `INSERT INTO task_signal_tokens (signal_id, tokenizer_version, tokens)
       SELECT signal_id, ?, ? FROM task_signals WHERE signal_id = ?
       ON CONFLICT(signal_id) DO NOTHING`,
    params: [row.tokenizerVersion, row.tokens, row.signalId],
  };
}

export interface StoredSignalRow {
  signal_id: string;
  payload_hash: string;
}

export function signalBySubmissionStatement(submissionId: string): Statement {
  return { sql: "SELECT signal_id, payload_hash FROM task_signals WHERE submission_id = ?", params: [submissionId] };
}

// ---------------------------------------------------------------- magnt review signals, magnt signals hide|unhide

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
const SIGNAL_STATUSES = { hidden: "hidden", active: "active" } as const;

/** 08 §11: sets one signal's status and returns it (no row: no such signal). */
export function setSignalStatusStatement(signalId: string, status: keyof typeof SIGNAL_STATUSES): Statement {
  return { sql: "UPDATE task_signals SET status = ? WHERE signal_id = ? RETURNING signal_id, status", params: [SIGNAL_STATUSES[status], signalId] };
}

/** Signal ids starting with `prefix` (a validated `ts_…` prefix), at most `limit`, through the primary key. */
export function signalIdsWithPrefixStatement(prefix: string, limit: number): Statement {
  return { sql: "SELECT signal_id AS id FROM task_signals WHERE signal_id >= ?1 AND signal_id < ?1 || '~' ORDER BY signal_id LIMIT ?2", params: [prefix, limit] };
}
