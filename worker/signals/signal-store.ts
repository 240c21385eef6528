/**
 * SQL of the searchable corpus `task_signals` (03 §4, §8). The candidate query
 * binds only the cohort flag and the window size — search text never reaches
 * SQL, D1 logs or a cache; matching happens in memory.
 */
import { SEARCH_CANDIDATES_MAX } from "../contracts/limits";
import { all, first, run, statement, StorageError } from "../storage/d1";
import { sha256Hex } from "../storage/hash";
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

/** The latest active rows of one cohort, newest first. Throws StorageError when unreadable. */
export function readSearchWindow(db: D1Database, isTest: boolean): Promise<SignalRow[]> {
  return all<SignalRow>(db, statement(SEARCH_WINDOW_SQL, isTest ? 1 : 0, SEARCH_CANDIDATES_MAX));
}

/** The canonical contribution (03 §8.1): the receipt and submission id are outside the hash. */
export function canonicalSignal(input: ContributeInput) {
  return {
    goal: input.goal,
    blocker: input.blocker ?? null,
    tried: input.tried ?? null,
    learned: input.learned ?? null,
    self_reported_test: input.is_test === true ? 1 : 0,
  };
}

export type SaveSignalResult =
  | { kind: "accepted"; signalId: string }
  | { kind: "duplicate"; signalId: string }
  | { kind: "conflict" };

/**
 * Insert-on-conflict by `submission_id`, then read back (03 §8.2). A duplicate
 * never touches the stored row, so it cannot reactivate a hidden signal.
 * Throws StorageError on any storage fault.
 */
export async function saveSignal(db: D1Database, input: ContributeInput): Promise<SaveSignalResult> {
  const canonical = canonicalSignal(input);
  const payloadHash = await sha256Hex(JSON.stringify(canonical));
  const signalId = newSignalId();
  const submissionId = input.submission_id ?? newSubmissionId();
  await run(
    db,
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
  );
  const stored = await first<{ signal_id: string; payload_hash: string }>(
    db,
    statement("SELECT signal_id, payload_hash FROM task_signals WHERE submission_id = ?", submissionId),
  );
  if (!stored) throw new StorageError();
  if (stored.payload_hash !== payloadHash) return { kind: "conflict" };
  return stored.signal_id === signalId
    ? { kind: "accepted", signalId }
    : { kind: "duplicate", signalId: stored.signal_id };
}

