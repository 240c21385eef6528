/**
 * The one door to D1 (10 §2). Every statement the Worker runs goes through
 * these helpers with bound parameters; request-derived values never enter SQL
 * text (09 §1). A statement that does not report success, or throws, becomes a
 * `StorageError` whose message is fixed: D1's own error text may quote data, so
 * it is never carried further.
 *
 * D1's documented transient failures are retried here, and only here (09 §5):
 * a statement or batch marked idempotent (the default) runs again after a
 * jittered backoff, within the bounds of `d1-retry.ts`; a batch is retried
 * whole. A statement built with `notRetried` runs once, as before.
 */
import type { SqlStatement } from "../contracts/sql-statement";
import { backoffDelayMs, D1_RETRY, failureMessage, isTransientD1Error, retryTiming, scopeOf, type D1RetryScope } from "./d1-retry";

export class StorageError extends Error {
  constructor() {
    super("storage operation failed");
    this.name = "StorageError";
  }
}

/** The storage groups' statement shape (declared Workers-free in contracts/, so the CLI can name it too). */
export type Statement = SqlStatement;

export function statement(sql: string, ...params: unknown[]): Statement {
  return { sql, params };
}

/** The same statement, run at most once even on a transient failure (decision 178). */
export function notRetried(stmt: Statement): Statement {
  return Object.assign({}, stmt, { idempotent: false });
}

function prepare(db: D1Database, { sql, params }: Statement): D1PreparedStatement {
  const prepared = db.prepare(sql);
  return params.length === 0 ? prepared : prepared.bind(...params);
}

type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly transient: boolean };

/**
 * Runs `execute` until it succeeds, fails for good, or the bounds are spent.
 * `execute` reports a failure as a value (thrown error or unsuccessful result
 * alike), classified by its message, which goes no further.
 */
async function withRetries<T>(db: D1Database, retryable: boolean, execute: () => Promise<Attempt<T>>): Promise<T> {
  const scope: D1RetryScope = scopeOf(db);
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await execute();
    if (outcome.ok) return outcome.value;
    if (!retryable || !outcome.transient || attempt >= D1_RETRY.maxAttempts) throw new StorageError();
    const timing = retryTiming();
    const delay = backoffDelayMs(attempt + 1, timing.random());
    if (delay > scope.budgetMs) throw new StorageError();
    scope.budgetMs -= delay;
    scope.retries += 1;
    await timing.sleep(delay);
  }
}

async function attempt<T extends D1Result | D1Result[]>(call: () => Promise<T>, succeeded: (value: T) => boolean, errorOf: (value: T) => unknown): Promise<Attempt<T>> {
  let value: T;
  try {
    value = await call();
  } catch (error) {
    return { ok: false, transient: isTransientD1Error(failureMessage(error)) };
  }
  if (succeeded(value)) return { ok: true, value };
  return { ok: false, transient: isTransientD1Error(failureMessage(errorOf(value))) };
}

function resultError(result: D1Result): unknown {
  return (result as { error?: unknown }).error;
}

/** Runs a write; throws StorageError unless D1 reports success. */
export function run(db: D1Database, stmt: Statement): Promise<D1Result> {
  return withRetries(db, stmt.idempotent !== false, () =>
    attempt(() => prepare(db, stmt).run(), (result) => result.success, resultError),
  );
}

/** Reads rows; throws StorageError on any failure. */
export async function all<Row>(db: D1Database, stmt: Statement): Promise<Row[]> {
  const result = await withRetries(db, stmt.idempotent !== false, () =>
    attempt(() => prepare(db, stmt).all<Row>(), (read) => read.success, resultError),
  );
  return result.results;
}

/** Reads the first row or null; throws StorageError on any failure. */
export async function first<Row>(db: D1Database, stmt: Statement): Promise<Row | null> {
  const rows = await all<Row>(db, stmt);
  return rows[0] ?? null;
}

/** Runs statements as one all-or-nothing D1 batch; throws StorageError unless every one succeeded. Retried whole. */
export function batch(db: D1Database, statements: readonly Statement[]): Promise<D1Result[]> {
  return withRetries(db, statements.every((stmt) => stmt.idempotent !== false), () =>
    attempt(
      () => db.batch(statements.map((stmt) => prepare(db, stmt))),
      (results) => results.length === statements.length && results.every((result) => result.success),
      (results) => results.map(resultError).find((error) => error !== undefined),
    ),
  );
}
