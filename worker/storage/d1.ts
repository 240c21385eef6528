/**
 * The one door to D1 (10 §2). Every statement the Worker runs goes through
 * these helpers with bound parameters; request-derived values never enter SQL
 * text (09 §1). A statement that does not report success, or throws, becomes a
 * `StorageError` whose message is fixed: D1's own error text may quote data, so
 * it is never carried further.
 */

export class StorageError extends Error {
  constructor() {
    super("storage operation failed");
    this.name = "StorageError";
  }
}

export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export function statement(sql: string, ...params: unknown[]): Statement {
  return { sql, params };
}

function prepare(db: D1Database, { sql, params }: Statement): D1PreparedStatement {
  const prepared = db.prepare(sql);
  return params.length === 0 ? prepared : prepared.bind(...params);
}

/** Runs a write; throws StorageError unless D1 reports success. */
export async function run(db: D1Database, stmt: Statement): Promise<D1Result> {
  let result: D1Result;
  try {
    result = await prepare(db, stmt).run();
  } catch {
    throw new StorageError();
  }
  if (!result.success) throw new StorageError();
  return result;
}

/** Reads rows; throws StorageError on any failure. */
export async function all<Row>(db: D1Database, stmt: Statement): Promise<Row[]> {
  let result: D1Result<Row>;
  try {
    result = await prepare(db, stmt).all<Row>();
  } catch {
    throw new StorageError();
  }
  if (!result.success) throw new StorageError();
  return result.results;
}

/** Reads the first row or null; throws StorageError on any failure. */
export async function first<Row>(db: D1Database, stmt: Statement): Promise<Row | null> {
  const rows = await all<Row>(db, stmt);
  return rows[0] ?? null;
}

/** Runs statements as one all-or-nothing D1 batch; throws StorageError unless every one succeeded. */
export async function batch(db: D1Database, statements: readonly Statement[]): Promise<D1Result[]> {
  let results: D1Result[];
  try {
    results = await db.batch(statements.map((stmt) => prepare(db, stmt)));
  } catch {
    throw new StorageError();
  }
  if (results.length !== statements.length || results.some((result) => !result.success)) throw new StorageError();
  return results;
}
