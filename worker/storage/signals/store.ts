/** Runs the `signals` group's statements (./sql.ts). Readers throw `StorageError`; the write-once step returns values. */
import { all } from "../d1";
import { replicaReader } from "../d1-retry";
import { writeOnce, type WriteOnceResult } from "../write-once";
import {
  insertSignalStatement,
  insertSignalTokensStatement,
  matchedSignalsStatement,
  searchWindowStatement,
  signalBySubmissionStatement,
  type SearchWindowParams,
  type SignalCandidateRow,
  type SignalInsertRow,
  type SignalMatchRow,
  type StoredSignalRow,
} from "./sql";

export type { SearchWindowParams, SignalCandidateRow, SignalInsertRow, SignalMatchRow, StoredSignalRow } from "./sql";

/** One search's reads (03 §4): the window, then the texts of its matches. */
export interface SearchReads {
  /**
   * The latest `size` active rows of one cohort, newest first. A row with a list of `tokenizerVersion` comes without
   * its text when that holds more than `inlineTextMax` characters, and without its list when its id is in `heldIds`.
   */
  window(isTest: boolean, params: SearchWindowParams): Promise<SignalCandidateRow[]>;
  /** The returnable columns of the given rows, if still active in that cohort. */
  matches(isTest: boolean, signalIds: readonly string[]): Promise<SignalMatchRow[]>;
}

/**
 * A search's reads, in one session that a read replica may serve (09 §5.2): a
 * contribution seconds old missing from one search is acceptable, and one
 * session means the second read never sees an older corpus than the first.
 */
export function searchReads(db: D1Database): SearchReads {
  const reader = replicaReader(db);
  return {
    window: (isTest, params) => all<SignalCandidateRow>(reader, searchWindowStatement(isTest, params)),
    matches: (isTest, signalIds) => all<SignalMatchRow>(reader, matchedSignalsStatement(isTest, signalIds)),
  };
}

/**
 * Stores a contribution and its token list in one all-or-nothing batch, once per
 * `submission_id`, then reads it back (03 §8.2); every fault is `not_saved`.
 */
export function storeSignal(db: D1Database, row: SignalInsertRow): Promise<WriteOnceResult<StoredSignalRow>> {
  return writeOnce<StoredSignalRow>(db, {
    insert: [insertSignalStatement(row), insertSignalTokensStatement(row)],
    readBack: signalBySubmissionStatement(row.submissionId),
    payloadHash: row.payloadHash,
    isOwn: (stored) => stored.signal_id === row.signalId,
  });
}
