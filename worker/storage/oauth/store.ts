/** Runs the `oauth` group's statements (./sql.ts); a fault throws `StorageError` (the token endpoint answers 503). */
import { first, run } from "../d1";
import { isSpentStatement, spendStatement } from "./sql";

export { deleteExpiredSpentStatement } from "./sql";

/** True only for the first caller that spends `id`. */
export async function spendOnce(db: D1Database, id: string, kind: string, expiresAt: string): Promise<boolean> {
  return (await run(db, spendStatement(id, kind, expiresAt))).meta.changes === 1;
}

export async function isSpent(db: D1Database, id: string): Promise<boolean> {
  return (await first(db, isSpentStatement(id))) !== null;
}
