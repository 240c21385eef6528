/**
 * The one way a visitor's submission is stored (02 §5.3, 03 §8.2): insert or
 * ignore by `submission_id`, read the row back, compare the payload hash.
 *
 *   accepted   this call's insert is the stored row
 *   duplicate  an earlier call stored the same content under this submission id
 *   conflict   different content is stored under this submission id; nothing changed
 *   not_saved  any storage fault, or no row to read back: never a receipt
 *
 * Concurrent identical retries race on the unique `submission_id`: exactly one
 * insert wins and every caller reads the winner's row, so all of them return
 * the same receipt. A duplicate never touches the stored row. Failures are
 * values: D1's error text may quote data, so it is dropped here (`d1.ts`).
 */
import { batch, first, run, type Statement } from "./d1";

/** The columns every write-once row has for this check. */
interface StoredSubmission {
  readonly payload_hash: string;
}

interface WriteOnce<Row extends StoredSubmission> {
  /** Runs first (e.g. the lazy 0001 table); a throw is `not_saved`. */
  readonly prepare?: () => Promise<void>;
  /**
   * `INSERT … ON CONFLICT(submission_id) DO NOTHING` of the new row, or several
   * statements committed as one all-or-nothing batch (a contact with its dialogue).
   */
  readonly insert: Statement | readonly Statement[];
  /** Reads the row stored under the submission id, with its `payload_hash`. */
  readonly readBack: Statement;
  readonly payloadHash: string;
  /** Whether the stored row is the one this call inserted (its freshly generated id). */
  readonly isOwn: (row: Row) => boolean;
}

export type WriteOnceResult<Row> =
  | { readonly kind: "accepted"; readonly row: Row }
  | { readonly kind: "duplicate"; readonly row: Row }
  | { readonly kind: "conflict" }
  | { readonly kind: "not_saved" };

export async function writeOnce<Row extends StoredSubmission>(
  db: D1Database,
  write: WriteOnce<Row>,
): Promise<WriteOnceResult<Row>> {
  try {
    await write.prepare?.();
    if (isStatementList(write.insert)) await batch(db, write.insert);
    else await run(db, write.insert);
    const row = await first<Row>(db, write.readBack);
    if (row === null) return { kind: "not_saved" };
    if (row.payload_hash !== write.payloadHash) return { kind: "conflict" };
    return write.isOwn(row) ? { kind: "accepted", row } : { kind: "duplicate", row };
  } catch {
    return { kind: "not_saved" };
  }
}

function isStatementList(insert: Statement | readonly Statement[]): insert is readonly Statement[] {
  return Array.isArray(insert);
}
