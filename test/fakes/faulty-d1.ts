/**
 * A D1 binding wrapped around the real local D1 (10 §2): it records every
 * statement with its bound values (and, for `run()`, the rows it changed), and can fail the n-th statement, any
 * statement matching a pattern (a batch holding one fails whole), or every batch — with an error message that
 * carries a canary, to prove D1 error texts never reach a log.
 */

export interface RecordedStatement {
  sql: string;
  params: unknown[];
  /** `meta.changes` D1 reported for a `run()` that executed (rows inserted, updated or deleted). */
  changes?: number;
}

export interface FaultPlan {
  /** Fail statements whose SQL matches. */
  failWhen?: RegExp;
  /** Fail the n-th executed statement (1-based). */
  failNth?: number;
  /** Fail every batch. */
  failBatches?: boolean;
  /** Resolve with `success: false` instead of throwing. */
  unsuccessful?: boolean;
  /** Statements matching this report success without executing (a lost write). */
  pretendWhen?: RegExp;
  /** Error message of injected failures (put a canary in it). */
  message?: string;
}

export interface FaultyD1 extends D1Database {
  readonly statements: RecordedStatement[];
}

export function faultyD1(db: D1Database, plan: FaultPlan = {}): FaultyD1 {
  const statements: RecordedStatement[] = [];
  const inner = new WeakMap<object, D1PreparedStatement>();
  const sqlOf = new WeakMap<object, string>();
  let executed = 0;
  const message = plan.message ?? "injected D1 failure";

  const shouldFail = (sql: string) => {
    executed += 1;
    return (plan.failWhen?.test(sql) ?? false) || plan.failNth === executed;
  };

  const failure = <T>(): Promise<T> =>
    plan.unsuccessful
      ? Promise.resolve({ success: false, results: [], meta: {} } as unknown as T)
      : Promise.reject(new Error(message));

  function wrap(sql: string, statement: D1PreparedStatement, params: unknown[]): D1PreparedStatement {
    const wrapper = {
      bind: (...values: unknown[]) => wrap(sql, statement.bind(...values), values),
      run: () => {
        const recorded = record();
        if (shouldFail(sql)) return failure();
        if (plan.pretendWhen?.test(sql)) return Promise.resolve({ success: true, results: [], meta: {} } as unknown as D1Result);
        return statement.run().then((result) => {
          recorded.changes = result.meta.changes;
          return result;
        });
      },
      all: () => (record(), shouldFail(sql) ? failure() : statement.all()),
      first: (column?: string) => (record(), shouldFail(sql) ? Promise.reject(new Error(message)) : statement.first(column as never)),
      raw: () => (record(), shouldFail(sql) ? Promise.reject(new Error(message)) : statement.raw()),
    };
    function record(): RecordedStatement {
      const recorded: RecordedStatement = { sql, params };
      statements.push(recorded);
      return recorded;
    }
    inner.set(wrapper, statement);
    sqlOf.set(wrapper, sql);
    return wrapper as unknown as D1PreparedStatement;
  }

  const wrapped = {
    statements,
    prepare: (sql: string) => wrap(sql, db.prepare(sql), []),
    batch: async (list: D1PreparedStatement[]) => {
      if (plan.failBatches) {
        executed += list.length;
        throw new Error(message);
      }
      // A batch is all-or-nothing: one failing statement fails it, one pretended write pretends it all.
      const sqls = list.map((statement) => sqlOf.get(statement) ?? "");
      if (sqls.some((sql) => plan.failWhen?.test(sql) ?? false)) return failure();
      if (sqls.some((sql) => plan.pretendWhen?.test(sql) ?? false)) return list.map(() => ({ success: true, results: [], meta: {} }) as unknown as D1Result);
      return db.batch(list.map((statement) => inner.get(statement) ?? statement));
    },
    exec: (sql: string) => db.exec(sql),
    dump: () => db.dump(),
    // A session on this binding records and fails the same way (the search window reads through one, 09 §5.2).
    withSession: () => ({ prepare: wrapped.prepare, batch: wrapped.batch, getBookmark: () => null }),
  };
  return wrapped as unknown as FaultyD1;
}

/** A fake `PUBLIC_WRITES` rate-limit binding: counts per key, records keys, can refuse or throw. */
export function fakeRateLimiter(options: { limit?: number; throws?: boolean } = {}) {
  const counts = new Map<string, number>();
  const keys: string[] = [];
  return {
    keys,
    counts,
    async limit({ key }: { key: string }) {
      keys.push(key);
      if (options.throws) throw new Error("limiter unavailable");
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      return { success: count <= (options.limit ?? 20) };
    },
  };
}
