/**
 * A statement as the storage modules' SQL text builds it (worker/storage/<group>/sql.ts):
 * constant SQL with its values. The Worker binds `params` (storage/d1.ts takes
 * this shape as its `Statement`); the CLI, which can only run text through
 * `wrangler d1 execute`, inlines them (cli/lib/sql.ts). Declared here, with no
 * Workers types, so both sides can name it.
 */
export interface SqlStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
  /**
   * False when running the statement twice differs from running it once
   * (a counter, a revision bump, a result that depends on the change count):
   * such a statement is never retried on a transient D1 failure (09 §5.1, decision 178).
   */
  readonly idempotent?: false;
}
