/**
 * The corpus `task_signals` as the signals tools use it (03 §4, §8): a
 * search's two reads and write-once contributions. The SQL is the `signals` storage
 * group's (`storage/signals/`); this module decides the canonical row and
 * turns a storage fault into a value.
 */
import { SEARCH_CANDIDATES_MAX, SEARCH_WINDOW_INLINE_TEXT_MAX } from "../contracts/limits";
import { onStorageError } from "../storage/failure";
import { searchReads, storeSignal, type SignalCandidateRow, type SignalMatchRow, type StoredSignalRow } from "../storage/signals/store";
import type { WriteOnceResult } from "../storage/write-once";
import { sha256Hex } from "../lib/hash";
import { newSignalId, newSubmissionId, nowIso } from "../storage/ids";
import type { ContributeInput } from "./schemas";
import { storedTokens, TOKENIZER_VERSION } from "./tokenize";

export type { SignalCandidateRow, SignalMatchRow } from "../storage/signals/store";

type Read<Rows> = { readonly kind: "read"; readonly rows: Rows } | { readonly kind: "unreadable" };

/** One search's two reads (03 §4); a storage fault is a value, never an empty window or no match (03 §6). */
export interface SignalSearch {
  /**
   * The latest active rows of the cohort, newest first: the text of every row but the long ones with a current list,
   * and the list of every row but those whose ids are in `heldIds` (current lists the isolate holds, 03 §5.6).
   */
  window(heldIds: readonly string[]): Promise<Read<SignalCandidateRow[]>>;
  /** The returnable columns of matched rows the window left the text out of, if still active, in no particular order. */
  matches(signalIds: readonly string[]): Promise<Read<SignalMatchRow[]>>;
}

export function openSignalSearch(db: D1Database, isTest: boolean): SignalSearch {
  const reads = searchReads(db);
  return {
    window: (heldIds) =>
      readOrUnreadable(() =>
        reads.window(isTest, { size: SEARCH_CANDIDATES_MAX, tokenizerVersion: TOKENIZER_VERSION, inlineTextMax: SEARCH_WINDOW_INLINE_TEXT_MAX, heldIds }),
      ),
    matches: (signalIds) => readOrUnreadable(() => reads.matches(isTest, signalIds)),
  };
}

function readOrUnreadable<Rows>(read: () => Promise<Rows>): Promise<Read<Rows>> {
  return onStorageError(
    async () => ({ kind: "read", rows: await read() }) as const,
    () => ({ kind: "unreadable" }) as const,
  );
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

/**
 * Insert-or-ignore by `submission_id`, then read back (03 §8.2), on the shared
 * write-once step, with the row's token list (03 §5.6) computed once here, at
 * contribution. Every storage fault is `not_saved`.
 */
export async function saveSignal(db: D1Database, input: ContributeInput): Promise<WriteOnceResult<StoredSignalRow>> {
  const canonical = canonicalSignal(input);
  return storeSignal(
    db,
    Object.assign({}, canonical, {
      signalId: newSignalId(),
      createdAt: nowIso(),
      submissionId: input.submission_id ?? newSubmissionId(),
      payloadHash: await sha256Hex(JSON.stringify(canonical)),
      tokens: storedTokens(canonical),
      tokenizerVersion: TOKENIZER_VERSION,
    }),
  );
}
