/**
 * SQL text of the `contacts` table. Dependency-free, so the `magnt` CLI runs
 * the same text (values inlined by cli/lib/sql.ts) as the Worker binds.
 */
import type { SqlStatement as Statement } from "../../contracts/sql-statement";

// ---------------------------------------------------------------- s18owner: short ids given back (magnt review contacts <prefix>)

/** Contact ids starting with `prefix` (a validated `mc_…` prefix), at most `limit`, through the primary key. */
export function contactIdsWithPrefixStatement(prefix: string, limit: number): Statement {
  // Every id character (hex, '-', '_') sorts below '~', so [prefix, prefix || '~') is exactly the ids starting with it.
  return { sql: "SELECT contact_id AS id FROM contacts WHERE contact_id >= ?1 AND contact_id < ?1 || '~' ORDER BY contact_id LIMIT ?2", params: [prefix, limit] };
}
// ---------------------------------------------------------------- end s18owner
