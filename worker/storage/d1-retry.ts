/**
 * Which D1 failures are retried, how long the door waits between attempts, and
 * where a request's retry count is kept (09 §5, decisions 175–180).
 *
 * D1's error list marks three failures "Retry the operation" (D1 docs,
 * observability/debug-d1 "List of D1_ERRORs"; best-practices/retry-queries):
 * "D1 DB reset because its code was updated", "… storage caused object to be
 * reset" and "Network connection lost". Only those are transient here; every
 * other failure (constraint, syntax, type, size, overload) fails at once.
 *
 * The message is read only to classify it; it is never kept or passed on
 * (`d1.ts` turns every failure into a `StorageError` with a fixed text).
 */

import type { Env } from "../config/env";

/** The documented transient D1 failures (substrings of the error message). */
const TRANSIENT_MESSAGES = ["Network connection lost", "storage caused object to be reset", "reset because its code was updated"] as const;

export function isTransientD1Error(message: string): boolean {
  return TRANSIENT_MESSAGES.some((fragment) => message.includes(fragment));
}

/** The text of a thrown value or of an unsuccessful result's `error` field ("" when there is none). */
export function failureMessage(failure: unknown): string {
  if (failure instanceof Error) return failure.message;
  if (typeof failure === "string") return failure;
  return "";
}

/**
 * Bounds (decision 176). A statement runs at most 3 times; the waits before
 * attempts 2 and 3 are drawn with full jitter from [0, 100 ms) and [0, 200 ms),
 * and one request or cron run never sleeps more than 1 s in total for
 * retries — far inside the 55 s cron lease and any MCP client's timeout, and
 * sleeping costs no CPU time against the Workers CPU limit.
 */
export const D1_RETRY = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000, budgetMs: 1000 } as const;

/** Full jitter (a uniform draw below the exponential ceiling) for the wait before attempt `attempt` (2, 3, …). */
export function backoffDelayMs(attempt: number, random: number): number {
  const ceiling = Math.min(D1_RETRY.maxDelayMs, D1_RETRY.baseDelayMs * 2 ** (attempt - 2));
  return Math.floor(Math.max(0, Math.min(random, 1)) * ceiling);
}

/** How the door waits and draws jitter; tests replace both so they never wait real time. */
export interface RetryTiming {
  sleep(ms: number): Promise<void>;
  random(): number;
}

const realTiming: RetryTiming = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};

let timing: RetryTiming = realTiming;

/** Replaces the timing (tests only); returns the function that restores the real one. */
export function useRetryTiming(replacement: RetryTiming): () => void {
  timing = replacement;
  return () => {
    timing = realTiming;
  };
}

export function retryTiming(): RetryTiming {
  return timing;
}

/** One request's (or cron run's) retry account: the count telemetry reports and the time budget left. */
export interface D1RetryScope {
  /** Attempts beyond the first, over every statement and batch of the scope. */
  retries: number;
  /** Milliseconds of backoff still allowed. */
  budgetMs: number;
}

export function newRetryScope(): D1RetryScope {
  return { retries: 0, budgetMs: D1_RETRY.budgetMs };
}

const scopes = new WeakMap<D1Database, D1RetryScope>();
const bases = new WeakMap<D1Database, D1Database>();

/**
 * The binding a request's code uses: it forwards to `db` unchanged and names
 * the request's retry scope, so concurrent requests on one isolate never share
 * a count. The entry wires it once per request (`edge/pipeline.ts`, the cron).
 */
export function scopedBinding(db: D1Database, scope: D1RetryScope): D1Database {
  const base = baseBinding(db);
  const scoped = {
    prepare: (sql: string) => base.prepare(sql),
    batch: (statements: D1PreparedStatement[]) => base.batch(statements),
    exec: (sql: string) => base.exec(sql),
    withSession: (constraint?: string) => base.withSession(constraint),
    dump: () => base.dump(),
  } as unknown as D1Database;
  scopes.set(scoped, scope);
  bases.set(scoped, base);
  return scoped;
}

/** A request's or cron run's env with `CONTACTS` scoped, and its retry count so far. */
export function scopeD1(env: Env): { readonly env: Env; d1Retries(): number } {
  if (env.CONTACTS === undefined) return { env, d1Retries: () => 0 };
  const scope = newRetryScope();
  return { env: Object.assign({}, env, { CONTACTS: scopedBinding(env.CONTACTS, scope) }), d1Retries: () => scope.retries };
}

/**
 * A reader for queries that tolerate slightly stale rows (09 §5.2): a fresh D1
 * session whose first query may go to any replica ("first-unconstrained"), in
 * the same retry scope. Without replication enabled every query still reaches
 * the primary, so local behaviour is unchanged. Never for a write or a
 * read-after-write: those use the binding itself, which is always the primary.
 */
export function replicaReader(db: D1Database): D1Database {
  const base = baseBinding(db);
  const session = base.withSession("first-unconstrained");
  const reader = {
    prepare: (sql: string) => session.prepare(sql),
    batch: (statements: D1PreparedStatement[]) => session.batch(statements),
  } as unknown as D1Database;
  const scope = scopes.get(db);
  if (scope !== undefined) scopes.set(reader, scope);
  bases.set(reader, base);
  return reader;
}

/** The scope of a binding; an unscoped binding (a CLI-free direct call, a test) gets a fresh one per statement. */
export function scopeOf(db: D1Database): D1RetryScope {
  return scopes.get(db) ?? newRetryScope();
}

/** The platform binding behind a scoped one (per-isolate caches key on it). */
export function baseBinding(db: D1Database): D1Database {
  return bases.get(db) ?? db;
}
