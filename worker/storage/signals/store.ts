/** Runs the `signals` group's statements (./sql.ts). Readers throw `StorageError`; the write-once step returns values. */
import { all } from "../d1";
import { replicaReader } from "../d1-retry";
import { writeOnce, type WriteOnceResult } from "../write-once";
import {
  insertSignalStatement,
  insertSignalTokensStatement,
  searchWindowStatement, signalBySubmissionStatement, type SignalInsertRow, type SignalRow, type StoredSignalRow } from "./sql";

export type { SignalInsertRow, SignalRow, StoredSignalRow } from "./sql";

/**
 * The latest `size` active rows of one cohort, newest first. A read replica may
 * serve it (09 §5.2): a contribution seconds old missing from one search is acceptable.
 */
export function searchWindow(db: D1Database, isTest: boolean, size: number): Promise<SignalRow[]> {
  return all<SignalRow>(replicaReader(db), searchWindowStatement(isTest, size));
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
