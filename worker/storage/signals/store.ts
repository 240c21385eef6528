/** Runs the `signals` group's statements (./sql.ts). Readers throw `StorageError`; the write-once step returns values. */
import { all } from "../d1";
import { writeOnce, type WriteOnceResult } from "../write-once";
import { insertSignalStatement, searchWindowStatement, signalBySubmissionStatement, type SignalInsertRow, type SignalRow, type StoredSignalRow } from "./sql";

export type { SignalInsertRow, SignalRow, StoredSignalRow } from "./sql";

/** The latest `size` active rows of one cohort, newest first. */
export function searchWindow(db: D1Database, isTest: boolean, size: number): Promise<SignalRow[]> {
  return all<SignalRow>(db, searchWindowStatement(isTest, size));
}

/** Stores a contribution once per `submission_id`, then reads it back (03 §8.2); every fault is `not_saved`. */
export function storeSignal(db: D1Database, row: SignalInsertRow): Promise<WriteOnceResult<StoredSignalRow>> {
  return writeOnce<StoredSignalRow>(db, {
    insert: insertSignalStatement(row),
    readBack: signalBySubmissionStatement(row.submissionId),
    payloadHash: row.payloadHash,
    isOwn: (stored) => stored.signal_id === row.signalId,
  });
}
