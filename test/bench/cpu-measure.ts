/**
 * The measuring of the CPU-per-request rows, run in a child Node of its own
 * (`cpu-child.ts`, started by `cpu.ts`): the door's bundle, the stand-ins and
 * this loop are all its heap holds, as an isolate holds only its Worker. The
 * parent's Miniflare and esbuild (about 19 MB of heap) would otherwise be
 * marked by every full collection and billed to the requests (decision 203).
 *
 * Worst inputs: every field at its limit (01 §5, 03 §2), in Cyrillic (two-byte
 * text, the NFKC check on every character) with distinct words (the most
 * tokens a field can hold); the search over a full window of 100 such
 * candidates, each with its stored token list (every row written since 0008),
 * held by the isolate since an earlier search (candidate-tokens.ts). p99 gated
 * at 8 ms, target 5 ms. Reported beside it: the same search over a window the
 * isolate has never seen (every list decoded), and rows from before 0008 (the
 * first search of an isolate tokenises them once).
 */
import { storedTokens, TOKENIZER_VERSION } from "../../worker/signals/tokenize";
import { CONTACT_LIMITS, SEARCH_WINDOW_INLINE_TEXT_MAX, SIGNAL_LIMITS } from "../../worker/contracts/limits";
import type { Report } from "./report";
import { readToolAnswer, toolCall, toolsList, type McpRequest } from "./requests";
import { median, percentile } from "./stats";
import type { CpuClock } from "./thread-clock";

export const BENCH = "cpu per request";
export const GATE_MS = 8;
export const TARGET_MS = 5;
/** The Workers free plan's CPU limit per request. */
export const FREE_PLAN_LIMIT_MS = 10;
const URL_MCP = "https://magnt.ru/mcp";

type Row = Record<string, unknown>;

/**
 * Distinct words, `length` characters: Cyrillic letters counted in base 32,
 * four letters a word (none is a stop word: every stop word is a real word).
 */
export function distinctWords(seed: number, length: number): string {
  const letters = "абвгдежзийклмнопрстуфхцчшщъыьэюя";
  let text = "";
  for (let index = seed * 100_000; text.length < length; index += 1) {
    let word = "";
    for (let rest = index, place = 0; place < 4; place += 1, rest = Math.floor(rest / 32)) word += letters[rest % 32];
    text += (text === "" ? "" : " ") + word;
  }
  return text.slice(0, length).trim();
}

/**
 * D1 as far as the public tools use it: inserts stored in memory, reads back
 * by `submission_id`, the search window answered from fixed rows. Any other
 * statement fails loudly, so a changed query cannot be measured by accident.
 */
class StandInD1 {
  readonly tables = new Map<string, Row[]>();
  /**
   * The window as SEARCH_WINDOW_SQL returns it, row by row as JSON: the text of a long row with a current list
   * left out, and each row's form with its list left out as held (`list_held`).
   */
  private readonly window: readonly { id: string; current: boolean; json: string; heldJson: string }[];
  /** Each row's returnable columns, as the matches' read returns them. */
  private readonly textJson = new Map<unknown, string>();
  /** The window's answer (as D1 would send it) for each `?5` seen. */
  private readonly windowAnswers = new Map<string, string>();

  constructor(rows: readonly Row[]) {
    this.window = rows.map((row) => {
        const length = [row.goal, row.blocker, row.tried, row.learned].reduce<number>((sum, field) => sum + (typeof field === "string" ? field.length : 0), 0);
        const leftOut = row.tokenizer_version === TOKENIZER_VERSION && length > SEARCH_WINDOW_INLINE_TEXT_MAX;
        const answer = {
          signal_id: row.signal_id,
          tokens: row.tokens,
          tokenizer_version: row.tokenizer_version,
          list_held: 0,
          goal: leftOut ? null : row.goal,
          blocker: leftOut ? null : row.blocker,
          tried: leftOut ? null : row.tried,
          learned: leftOut ? null : row.learned,
        };
        return {
          id: String(row.signal_id),
          current: row.tokenizer_version === TOKENIZER_VERSION,
          json: JSON.stringify(answer),
          heldJson: JSON.stringify({ ...answer, tokens: null, list_held: 1 }),
        };
      });
    for (const row of rows) {
      this.textJson.set(row.signal_id, JSON.stringify({ signal_id: row.signal_id, goal: row.goal, blocker: row.blocker, tried: row.tried, learned: row.learned }));
    }
  }

  prepare(sql: string) {
    return new StandInStatement(this, sql, []);
  }

  async batch(statements: StandInStatement[]) {
    return statements.map((statement) => statement.result());
  }

  /** The search window's read-replica session (09 §5.2): the same in-memory database. */
  withSession(): StandInD1 {
    return this;
  }

  execute(sql: string, params: readonly unknown[]): Row[] {
    if (/^\s*CREATE /.test(sql)) return [];
    if (sql.includes("LEFT JOIN task_signal_tokens")) {
      // ?5: the ids whose current lists the door holds; their lists are left out. Evaluating the query is D1's
      // work, not the isolate's (it runs in the database), so its answer is made once per distinct ?5 and kept;
      // decoding it is the binding's, so it is decoded per request (decision 214).
      const heldParam = String(params[4]);
      let answer = this.windowAnswers.get(heldParam);
      if (answer === undefined) {
        const held = new Set(JSON.parse(heldParam) as string[]);
        answer = `[${this.window.map((row) => (row.current && held.has(row.id) ? row.heldJson : row.json)).join(",")}]`;
        this.windowAnswers.set(heldParam, answer);
      }
      return JSON.parse(answer) as Row[];
    }
    if (/^SELECT signal_id, goal, blocker, tried, learned FROM task_signals\s+WHERE status = 'active' AND self_reported_test = \? AND signal_id IN \(/.test(sql)) {
      // Decoded per request, as the binding decodes D1's answer.
      return params.slice(1).flatMap((id) => {
        const json = this.textJson.get(id);
        return json === undefined ? [] : [JSON.parse(json) as Row];
      });
    }
    const insert = /^\s*INSERT INTO (\w+) \(([^)]*)\)\s*VALUES \(([^)]*)\)/.exec(sql);
    if (insert !== null) {
      const columns = insert[2]!.split(",").map((column) => column.trim());
      let next = 0;
      const values = insert[3]!.split(",").map((value) => (value.trim() === "?" ? params[next++] : value.trim().replace(/^'|'$/g, "")));
      const row = Object.fromEntries(columns.map((column, index) => [column, values[index]]));
      this.rows(insert[1]!).push(row);
      return [];
    }
    if (/^\s*INSERT INTO task_signal_tokens \(signal_id, tokenizer_version, tokens\)\s*SELECT/.test(sql)) {
      this.rows("task_signal_tokens").push({ signal_id: params[2], tokenizer_version: params[0], tokens: params[1] });
      return [];
    }
    const readBack = /^SELECT ([\w, ]+) FROM (\w+) WHERE submission_id = \?$/.exec(sql);
    if (readBack !== null) {
      const columns = readBack[1]!.split(",").map((column) => column.trim());
      const row = this.rows(readBack[2]!).find((candidate) => candidate.submission_id === params[0]);
      return row === undefined ? [] : [Object.fromEntries(columns.map((column) => [column, row[column]]))];
    }
    throw new Error(`cpu bench: the D1 stand-in does not know this statement: ${sql.slice(0, 80)}`);
  }

  private rows(table: string): Row[] {
    let rows = this.tables.get(table);
    if (rows === undefined) this.tables.set(table, (rows = []));
    return rows;
  }
}

class StandInStatement {
  constructor(
    private readonly db: StandInD1,
    private readonly sql: string,
    private readonly params: readonly unknown[],
  ) {}

  bind(...params: unknown[]) {
    return new StandInStatement(this.db, this.sql, params);
  }

  result() {
    const results = this.db.execute(this.sql, this.params);
    return { success: true, results, meta: { changes: /^\s*INSERT/.test(this.sql) ? 1 : 0 } };
  }

  async all() {
    return this.result();
  }

  async run() {
    return this.result();
  }

  async first() {
    return this.result().results[0] ?? null;
  }
}


function windowRows(withLists: boolean): Row[] {
  return Array.from({ length: 100 }, (_, index) => {
    const task = {
      goal: distinctWords(index * 3 + 1, SIGNAL_LIMITS.goal),
      blocker: distinctWords(index * 3 + 2, SIGNAL_LIMITS.blocker),
      tried: distinctWords(index * 3 + 3, SIGNAL_LIMITS.tried),
    };
    return {
      signal_id: `ts_00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      ...task,
      learned: distinctWords(index + 900, SIGNAL_LIMITS.learned),
      tokens: withLists ? storedTokens(task) : null,
      tokenizer_version: withLists ? TOKENIZER_VERSION : null,
    };
  });
}

interface Case {
  tool: string;
  input: string;
  request: () => McpRequest;
  /** The outcome the answer must have (`readToolAnswer`), checked before timing. */
  outcome: string;
  env?: "legacy";
}

function cases(): Case[] {
  // The query shares words with the window, so matching does real work (and finds matches).
  const query = { goal: distinctWords(1, SIGNAL_LIMITS.goal), blocker: distinctWords(5, SIGNAL_LIMITS.blocker), tried: distinctWords(9, SIGNAL_LIMITS.tried) };
  const contact = Object.fromEntries(Object.entries(CONTACT_LIMITS).map(([field, limit], index) => [field, distinctWords(500 + index, limit)]));
  contact.reply_to = `mailto:${"a".repeat(CONTACT_LIMITS.reply_to - 20)}@example.com`;
  const signal = { ...query, learned: distinctWords(13, SIGNAL_LIMITS.learned) };
  return [
    { tool: "tools/list", input: "the public tool set", request: toolsList, outcome: "tools" },
    { tool: "about_magnt", input: "no arguments", request: () => toolCall("about_magnt", {}), outcome: "result" },
    { tool: "search_shared_experience", input: "max-length query, 100 max-length candidates with stored lists (held since an earlier search)", request: () => toolCall("search_shared_experience", query), outcome: "matches_found" },
    { tool: "contribute_task_signal", input: "every field at its limit", request: () => toolCall("contribute_task_signal", signal), outcome: "accepted" },
    { tool: "propose_contact", input: "every field at its limit", request: () => toolCall("propose_contact", contact), outcome: "accepted_for_human_review" },
  ];
}

/**
 * A fresh stand-in window is megabytes of young objects the bench made; left there, the measured request's first
 * scavenge would copy them and bill it. A full collection (`--expose-gc`, cpu.ts) moves them out first.
 */
function collectBenchGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("cpu bench: the measuring child needs --expose-gc");
  gc();
}

/** V8 cannot change its GC threads once running, so the measuring is done by a child started with the flag. */
export interface Door {
  fetch(request: Request, env: unknown, ctx: unknown): Promise<Response>;
}

/**
 * How the child measures: in which heap (a label for its rows, and whether they are gated), with which clock.
 * The clock is the measuring thread's (thread-clock.ts, decision 205); the child runs with V8's background GC
 * threads off (`--single-threaded-gc`, `cpu.ts`), so collections run on this thread, inside the request that
 * caused them, as they are billed to it.
 */
export interface MeasureOptions {
  door: Door;
  iterations: number;
  heap: { readonly label: string; readonly gated: boolean };
  clock: CpuClock;
}

const BINDINGS = { PUBLIC_ORIGIN: "https://magnt.ru", ALLOWED_HOSTS: "magnt.ru", SITE_ORIGIN: "" };
const CTX = { waitUntil: () => undefined, passThroughOnException: () => undefined };

export async function measureCpu(report: Report, options: MeasureOptions): Promise<void> {
  const { iterations, door, heap, clock } = options;
  // Only said when the fallback is in use: the process clock also counts V8's compiler threads (thread-clock.ts).
  const clockLabel = clock.thread ? "" : ", process clock";
  const limiter = { limit: async () => ({ success: true }) };
  const envWith = (rows: Row[]) => ({ ...BINDINGS, CONTACTS: new StandInD1(rows), PUBLIC_WRITES: limiter });
  const stored = envWith(windowRows(true));
  // The request as the platform hands it to a Worker: built before the clock starts, its body bytes. Building it
  // from a string (the client's JSON.stringify, undici's well-formed-string copy) is the client's work, not the
  // handler's, and its copies lived through the request into the measured collections (decision 212).
  const encoder = new TextEncoder();
  const request = (make: () => McpRequest): Request => {
    const { method, headers, body } = make();
    return new Request(URL_MCP, { method, headers: { ...headers, "cf-connecting-ip": "203.0.113.7" }, body: encoder.encode(body) });
  };
  const send = async (env: unknown, make: () => McpRequest): Promise<string> => (await door.fetch(request(make), env, CTX)).text();
  /** The handler alone: from the call until the answer's last byte is read (as bytes: decoding them is the client's). */
  const measureOne = async (env: unknown, make: () => McpRequest): Promise<number> => {
    const built = request(make);
    const before = clock.now();
    const response = await door.fetch(built, env, CTX);
    await response.arrayBuffer();
    return clock.now() - before;
  };

  // The door's telemetry lines would flood the terminal; they are still built (and stringified) as in production.
  const log = console.log;
  console.log = () => undefined;
  try {
    for (const item of cases()) {
      const answer = readToolAnswer(await send(stored, item.request));
      if (answer.outcome !== item.outcome) throw new Error(`cpu bench: ${item.tool} answered ${answer.outcome}, expected ${item.outcome}`);
      for (let index = 0; index < 50; index += 1) await send(stored, item.request);
      const samples: number[] = [];
      for (let index = 0; index < iterations; index += 1) {
        samples.push(await measureOne(stored, item.request));
        (stored.CONTACTS as StandInD1).tables.clear();
      }
      const p99 = percentile(samples, 99);
      const measurement = `${item.tool}: ${item.input}, CPU p99 of ${iterations}${heap.label}${clockLabel}`;
      // How many requests the free plan would have refused: with incremental marking off (cpu.ts), a full
      // collection of the isolate's heap is one pause in the request that triggers it.
      const overLimit = samples.filter((sample) => sample > FREE_PLAN_LIMIT_MS).length;
      const detail = `p50 ${median(samples).toFixed(3)} ms, max ${Math.max(...samples).toFixed(3)} ms, ${overLimit} of ${iterations} above ${FREE_PLAN_LIMIT_MS} ms`;
      if (heap.gated) {
        report.record(
          { benchmark: BENCH, measurement, value: p99, unit: "ms", budget: `≤ ${GATE_MS}`, kind: "gate" },
          p99 <= GATE_MS,
          { target: { budget: `≤ ${TARGET_MS}`, met: p99 <= TARGET_MS }, detail },
        );
      } else {
        report.record({ benchmark: BENCH, measurement, value: p99, unit: "ms", budget: "reported", kind: "info" }, true, { detail });
      }
    }
    if (!heap.gated) return;
    const searchCase = cases().find((item) => item.tool === "search_shared_experience")!;
    // A window this isolate has never seen: every list is decoded (once per isolate and window row, 03 §5.6).
    const storedRows = windowRows(true);
    const unseen: number[] = [];
    for (let round = 0; round < 100; round += 1) {
      const fresh = storedRows.map((row) => ({ ...row, signal_id: `${String(row.signal_id).slice(0, -4)}${String(1000 + round).padStart(4, "0")}` }));
      const env = envWith(fresh);
      collectBenchGarbage();
      unseen.push(await measureOne(env, searchCase.request));
    }
    report.record(
      {
        benchmark: BENCH,
        measurement: "search_shared_experience: the same input, no list held yet (the first search of an isolate over this window), CPU p99 of 100",
        value: percentile(unseen, 99),
        unit: "ms",
        budget: "reported",
        kind: "info",
      },
      true,
      { detail: `p50 ${median(unseen).toFixed(3)} ms; every list decoded, as once per isolate and window row` },
    );
    // Rows from before 0008: the first search of an isolate tokenises each once, later ones find them cached.
    const legacyRows = windowRows(false);
    const cold: number[] = [];
    for (let round = 0; round < 20; round += 1) {
      // A fresh window of ids each round: the per-isolate cache has never seen them.
      const fresh = legacyRows.map((row) => ({ ...row, signal_id: `${String(row.signal_id).slice(0, -4)}${String(round).padStart(4, "0")}` }));
      const env = envWith(fresh);
      collectBenchGarbage();
      cold.push(await measureOne(env, searchCase.request));
    }
    const legacy = envWith(legacyRows);
    await send(legacy, searchCase.request);
    const warm: number[] = [];
    for (let index = 0; index < 100; index += 1) warm.push(await measureOne(legacy, searchCase.request));
    report.record(
      { benchmark: BENCH, measurement: "search_shared_experience over 100 max-length rows from before 0008, first search of an isolate (fills the cache), CPU p50 of 20", value: median(cold), unit: "ms", budget: "reported", kind: "info" },
      true,
      { detail: `max ${Math.max(...cold).toFixed(3)} ms; once per isolate, and only for rows written before 0008` },
    );
    report.record(
      { benchmark: BENCH, measurement: "search_shared_experience over the same rows, cache filled, CPU p99 of 100", value: percentile(warm, 99), unit: "ms", budget: "reported", kind: "info" },
      true,
      { detail: `p50 ${median(warm).toFixed(3)} ms` },
    );
  } finally {
    console.log = log;
  }
}
