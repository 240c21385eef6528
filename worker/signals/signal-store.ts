/**
 * SQL of the searchable corpus `task_signals` (03 §4, §8). The candidate query
 * binds only the cohort flag and the window size — search text never reaches
 * SQL, D1 logs or a cache; matching happens in memory.
 */
import { SEARCH_CANDIDATES_MAX } from "../contracts/limits";
import { all, statement } from "../storage/d1";
import { replicaReader } from "../storage/d1-retry";
import { writeOnce, type WriteOnceResult } from "../storage/write-once";
import { sha256Hex } from "../lib/hash";
import { newSignalId, newSubmissionId, nowIso } from "../storage/ids";
import type { ContributeInput } from "./schemas";
import { storedTokens, TOKENIZER_VERSION } from "./tokenize";

export interface SignalRow {
  signal_id: string;
  goal: string;
  blocker: string | null;
  tried: string | null;
  learned: string | null;
  /** The stored token list (0008; NULL for a row from before it): matched on, never returned. */
  tokens: string | null;
  tokenizer_version: number | null;
}

export const SEARCH_WINDOW_SQL = `SELECT s.signal_id, s.goal, s.blocker, s.tried, s.learned, t.tokens, t.tokenizer_version
FROM task_signals s LEFT JOIN task_signal_tokens t ON t.signal_id = s.signal_id
WHERE s.status = 'active' AND s.self_reported_test = ?1
ORDER BY s.created_at DESC, s.signal_id DESC
LIMIT ?2`;

type SearchWindow = { readonly kind: "read"; readonly rows: SignalRow[] } | { readonly kind: "unreadable" };

/**
 * The latest active rows of one cohort, newest first; a storage fault is a value, never an empty window.
 * A replica may serve it (09 §5.2): a contribution seconds old missing from one search is acceptable.
 */
export async function readSearchWindow(db: D1Database, isTest: boolean): Promise<SearchWindow> {
  try {
    const rows = await all<SignalRow>(replicaReader(db), statement(SEARCH_WINDOW_SQL, isTest ? 1 : 0, SEARCH_CANDIDATES_MAX));
    return { kind: "read", rows };
  } catch {
    return { kind: "unreadable" };
  }
}

/** The canonical contribution (03 §8.1): the receipt and submission id are outside the hash. */
function canonicalSignal(input: ContributeInput) {
  return {
    goal: input.goal,
    blocker: input.blocker ?? null,
    tried: input.tried ?? null,
    learned: input.learned ?? null,
    self_reported_test: input.is_test === true ? 1 : 0,
  };
}

interface StoredSignalRow {
  signal_id: string;
  payload_hash: string;
}

type SaveSignalResult = WriteOnceResult<StoredSignalRow>;

/**
 * Insert-or-ignore by `submission_id`, then read back (03 §8.2), on the shared
 * write-once step. A duplicate never touches the stored row, so it cannot
 * reactivate a hidden signal. Every storage fault is `not_saved`.
 *
 * The signal's token list (03 §5.6) is written in the same all-or-nothing
 * batch, and only when this call's row is the one stored (the `SELECT … WHERE
 * signal_id = <this call's id>` finds nothing after a lost race or a retry).
 */
export async function saveSignal(db: D1Database, input: ContributeInput): Promise<SaveSignalResult> {
  const canonical = canonicalSignal(input);
  const payloadHash = await sha256Hex(JSON.stringify(canonical));
  const signalId = newSignalId();
  const submissionId = input.submission_id ?? newSubmissionId();
  return writeOnce<StoredSignalRow>(db, {
    insert: [
      statement(
        `INSERT INTO task_signals (signal_id, created_at, goal, blocker, tried, learned, submission_id, payload_hash,
           self_reported_test, status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active')
         ON CONFLICT(submission_id) DO NOTHING`,
        signalId,
        nowIso(),
        canonical.goal,
        canonical.blocker,
        canonical.tried,
        canonical.learned,
        submissionId,
        payloadHash,
        canonical.self_reported_test,
      ),
      statement(
        `INSERT INTO task_signal_tokens (signal_id, tokenizer_version, tokens)
         SELECT signal_id, ?, ? FROM task_signals WHERE signal_id = ?`,
        TOKENIZER_VERSION,
        storedTokens(canonical),
        signalId,
      ),
    ],
    readBack: statement("SELECT signal_id, payload_hash FROM task_signals WHERE submission_id = ?", submissionId),
    payloadHash,
    isOwn: (row) => row.signal_id === signalId,
  });
}
