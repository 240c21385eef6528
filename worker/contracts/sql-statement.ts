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
}
