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

export interface SignalRow {
  signal_id: string;
  goal: string;
  blocker: string | null;
  tried: string | null;
  learned: string | null;
}

export const SEARCH_WINDOW_SQL = `SELECT signal_id, goal, blocker, tried, learned
FROM task_signals
WHERE status = 'active' AND self_reported_test = ?1
ORDER BY created_at DESC, signal_id DESC
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
 */
export async function saveSignal(db: D1Database, input: ContributeInput): Promise<SaveSignalResult> {
  const canonical = canonicalSignal(input);
  const payloadHash = await sha256Hex(JSON.stringify(canonical));
  const signalId = newSignalId();
  const submissionId = input.submission_id ?? newSubmissionId();
  return writeOnce<StoredSignalRow>(db, {
    insert: statement(
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
    readBack: statement("SELECT signal_id, payload_hash FROM task_signals WHERE submission_id = ?", submissionId),
    payloadHash,
    isOwn: (row) => row.signal_id === signalId,
  });
}
