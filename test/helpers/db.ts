/** Direct reads of the test's local D1, to check what the door stored. */
import { env } from "cloudflare:workers";

export function db(): D1Database {
  return env.CONTACTS!;
}

export async function countRows(table: string, where = "1 = 1", ...params: unknown[]): Promise<number> {
  const row = await db().prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).bind(...params).first<{ n: number }>();
  return row!.n;
}

export async function selectRows<Row = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<Row[]> {
  const result = await db().prepare(sql).bind(...params).all<Row>();
  return result.results;
}
