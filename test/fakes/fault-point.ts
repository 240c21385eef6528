/**
 * One fault at one write step (10 §2, issue 14): a D1 binding around the real
 * local D1 that fails exactly one statement — the `occurrence`-th statement
 * whose SQL matches `pattern` — or exactly one batch (the first batch holding
 * a matching statement), either by resolving `success: false` or by throwing.
 * Every other statement runs for real, so the code under test proceeds as in
 * production up to the fault and (for retries) after it.
 *
 * At the moment of the fault, before answering, it snapshots every table of
 * the database: the "fault-moment" state. A step that writes nothing after a
 * failure and whose failed statement wrote nothing ends with the database equal
 * to that snapshot, which is how the fault suite proves "nothing half-written"
 * for every step with one generic check.
 *
 * The injected error message (and the `error` field of an unsuccessful result)
 * carries a canary, to prove D1 error texts never reach a log line.
 */

/** `commits`: the statement or batch runs for real, then the call throws (the answer was lost after the commit). */
export type FaultMode = "fails" | "throws" | "commits";
export type FaultTarget = "statement" | "batch";

export interface FaultPointPlan {
  /** A statement whose SQL matches is the fault point (for a batch: any statement inside it). */
  readonly pattern: RegExp;
  readonly target: FaultTarget;
  readonly mode: FaultMode;
  /** Which matching statement or batch fails, 1-based (default 1): later ones run normally. */
  readonly occurrence?: number;
  /** How many consecutive matching executions fail from `occurrence` on (default 1; Infinity: every one). */
  readonly times?: number;
  /** Error text of the fault; put a canary in it. */
  readonly message: string;
}

/** Every row of every table, keyed by table name, rows in a stable order. */
export type DatabaseSnapshot = Record<string, string[]>;

export interface FaultPointD1 extends D1Database {
  /** True once the fault was injected. */
  readonly fired: boolean;
  /** The database as it was when the fault was injected (null before). */
  readonly atFault: DatabaseSnapshot | null;
  /** The SQL of every statement run or batched through this binding, in order. */
  readonly statements: string[];
  /** Executions of a matching statement (or batch) after the first injected fault: the door's retries of it. */
  readonly attemptsAfterFault: number;
}

/** Tables of the door's schema (not D1's or SQLite's own bookkeeping). */
export async function snapshotDatabase(db: D1Database): Promise<DatabaseSnapshot> {
  const tables = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' ORDER BY name")
    .all<{ name: string }>();
  const snapshot: DatabaseSnapshot = {};
  for (const { name } of tables.results) {
    const rows = await db.prepare(`SELECT * FROM "${name}"`).all();
    snapshot[name] = rows.results.map((row) => JSON.stringify(row)).sort();
  }
  return snapshot;
}

export function faultPoint(db: D1Database, plan: FaultPointPlan): FaultPointD1 {
  const occurrence = plan.occurrence ?? 1;
  const times = plan.times ?? 1;
  let attemptsAfterFault = 0;
  const statements: string[] = [];
  const inner = new WeakMap<object, { sql: string; statement: D1PreparedStatement }>();
  let seen = 0;
  let fired = false;
  let atFault: DatabaseSnapshot | null = null;

  /** Whether this matching statement or batch is the one that fails (counts matches). */
  const isFaultPoint = (matches: boolean): boolean => {
    if (!matches) return false;
    if (fired) attemptsAfterFault += 1;
    seen += 1;
    return seen >= occurrence && seen < occurrence + times;
  };

  const inject = async <T>(unsuccessful: T): Promise<T> => {
    if (!fired) atFault = await snapshotDatabase(db);
    fired = true;
    if (plan.mode === "fails") return unsuccessful;
    throw new Error(plan.message);
  };

  const unsuccessfulResult = (): D1Result => ({ success: false, error: plan.message, results: [], meta: {} }) as unknown as D1Result;

  function wrap(sql: string, statement: D1PreparedStatement): D1PreparedStatement {
    const failsHere = () => plan.target === "statement" && isFaultPoint(plan.pattern.test(sql));
    const wrapper = {
      bind: (...values: unknown[]) => wrap(sql, statement.bind(...values)),
      run: async () => {
        statements.push(sql);
        if (!failsHere()) return statement.run();
        if (plan.mode === "commits") await statement.run();
        return inject(unsuccessfulResult());
      },
      all: async () => {
        statements.push(sql);
        return failsHere() ? inject(unsuccessfulResult()) : statement.all();
      },
      first: async (column?: string) => {
        statements.push(sql);
        if (failsHere()) return inject(null).then(() => {
          throw new Error(plan.message);
        });
        return statement.first(column as never);
      },
      raw: async () => {
        statements.push(sql);
        if (failsHere()) return inject(null).then(() => {
          throw new Error(plan.message);
        });
        return statement.raw();
      },
    };
    inner.set(wrapper, { sql, statement });
    return wrapper as unknown as D1PreparedStatement;
  }

  const binding = {
    get fired() {
      return fired;
    },
    get atFault() {
      return atFault;
    },
    get attemptsAfterFault() {
      return attemptsAfterFault;
    },
    statements,
    prepare: (sql: string) => wrap(sql, db.prepare(sql)),
    batch: async (list: D1PreparedStatement[]) => {
      const entries = list.map((item) => inner.get(item));
      const sqls = entries.map((entry) => entry?.sql ?? "");
      statements.push(...sqls);
      if (plan.target === "batch" && isFaultPoint(sqls.some((sql) => plan.pattern.test(sql)))) {
        // Nothing of the batch runs (D1 batches are all-or-nothing), unless it commits before the answer is lost.
        if (plan.mode === "commits") await db.batch(list.map((item, index) => entries[index]?.statement ?? item));
        return inject(list.map(() => unsuccessfulResult()));
      }
      return db.batch(list.map((item, index) => entries[index]?.statement ?? item));
    },
    exec: (sql: string) => db.exec(sql),
    dump: () => db.dump(),
    // A session on this binding sees the same faults (the search window reads through one, 09 §5.2).
    withSession: () => ({ prepare: binding.prepare, batch: binding.batch, getBookmark: () => null }),
  };
  return binding as unknown as FaultPointD1;
}
