/**
 * Shared task signals (03): search and contribute through the real door and
 * local D1 — cohorts, hiding, the 100-row window, receipts, observations,
 * idempotency, storage errors, rate limit, telemetry and privacy.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { captureAnalytics, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { countRows, db, selectRows } from "../helpers/db";
import { connectV1, connectV2 } from "../helpers/mcp";
import { assertNoCanaryInTelemetry, Canaries } from "../helpers/privacy";
import { contribute, search, seedSignal, uniqueWord, type Structured } from "../helpers/signals";
import { fakeRateLimiter, faultyD1 } from "../fakes/faulty-d1";
import { SEARCH_WINDOW_SQL } from "../../worker/storage/signals/sql";
import { TOKENIZER_VERSION } from "../../worker/signals/tokenize";
import { SEARCH_WINDOW_INLINE_TEXT_MAX } from "../../worker/contracts/limits";

/** A `learned` long enough that its row's text is left out of the search window (03 §4). */
const LONG_LEARNED = "pin the compatibility date ".repeat(45).trim();

const MATCH_KEYS = ["signal_id", "goal", "blocker", "tried", "learned"];

describe("search results (03 §6)", () => {
  it("answers a no-match with a fresh receipt, the invitation and the window", async () => {
    const logs = captureConsole();
    const { structured, result } = await search({ goal: `${uniqueWord()} ${uniqueWord()}` });
    expect(result!.isError).toBeFalsy();
    expect(Object.keys(structured!)).toEqual([
      "status", "cohort", "matches", "matches_count", "content_label", "notice", "window", "search_receipt", "invitation",
    ]);
    expect(structured).toMatchObject({
      status: "no_relevant_experience",
      cohort: "ordinary",
      matches: [],
      matches_count: 0,
      content_label: "unverified_visitor_content",
      window: { candidates_max: 100, results_max: 3 },
    });
    expect(structured!.search_receipt).toMatch(/^sr_[0-9a-f]{32}$/);
    const again = await search({ goal: `${uniqueWord()} ${uniqueWord()}` });
    expect(again.structured!.search_receipt).not.toBe(structured!.search_receipt);
    const event = assertValidEvent(logs.events()[0]);
    expect(event).toMatchObject({
      tool_result: "no_relevant_experience",
      matches_count: 0,
      self_reported_test: false,
      observed_task_saved: true,
      rate_limited: false,
      search_receipt: structured!.search_receipt,
    });
  });

  it("returns matches with only the public columns and the unverified-content notice", async () => {
    const topic = uniqueWord("topic");
    const id = await seedSignal({ goal: `${topic} deployment pipeline`, blocker: "timeouts", tried: "retries", learned: "use queues" });
    const logs = captureConsole();
    const { structured } = await search({ goal: `${topic} deployment` });
    expect(Object.keys(structured!)).toEqual(["status", "cohort", "matches", "matches_count", "content_label", "notice", "window"]);
    expect(structured).toMatchObject({ status: "matches_found", matches_count: 1, content_label: "unverified_visitor_content" });
    expect(structured!.matches).toEqual([
      { signal_id: id, goal: `${topic} deployment pipeline`, blocker: "timeouts", tried: "retries", learned: "use queues" },
    ]);
    for (const match of structured!.matches) expect(Object.keys(match)).toEqual(MATCH_KEYS);
    expect(logs.events()[0]).toMatchObject({ tool_result: "matches_found", matches_count: 1, observed_task_saved: true });
    expect(logs.events()[0]).not.toHaveProperty("search_receipt");
  });

  it("returns at most three matches, best first", async () => {
    const topic = uniqueWord("many");
    for (let index = 0; index < 5; index += 1) await seedSignal({ goal: `${topic} shared worker number${index}` });
    const best = await seedSignal({ goal: `${topic} shared worker`, createdAt: "2000-01-01T00:00:00.000Z" });
    const { structured } = await search({ goal: `${topic} shared worker` });
    expect(structured!.matches_count).toBe(3);
    expect(structured!.matches[0].signal_id).toBe(best);
  });
});

describe("cohorts, hiding and the window (03 §3–§4)", () => {
  it("isolates the test and ordinary cohorts both ways", async () => {
    const topic = uniqueWord("cohort");
    const ordinary = await seedSignal({ goal: `${topic} isolation check` });
    const test = await seedSignal({ goal: `${topic} isolation check`, isTest: true });
    const plain = await search({ goal: `${topic} isolation` });
    expect(plain.structured!.matches.map((match: Structured) => match.signal_id)).toEqual([ordinary]);
    const tests = await search({ goal: `${topic} isolation`, is_test: true });
    expect(tests.structured!.cohort).toBe("test");
    expect(tests.structured!.matches.map((match: Structured) => match.signal_id)).toEqual([test]);
  });

  it("never returns a hidden row", async () => {
    const topic = uniqueWord("hidden");
    await seedSignal({ goal: `${topic} hidden row`, status: "hidden" });
    const { structured } = await search({ goal: `${topic} hidden row` });
    expect(structured!.status).toBe("no_relevant_experience");
  });

  it("only considers the latest 100 active rows of the cohort", async () => {
    const topic = uniqueWord("window");
    const oldest = await seedSignal({ goal: `${topic} oldest entry`, isTest: true, createdAt: "2001-01-01T00:00:00.000Z" });
    const later = new Date(Date.now() + 3_600_000).toISOString();
    // Exactly 100 active test rows newer than the oldest one (earlier tests of this file left some).
    const existing = await countRows("task_signals", "self_reported_test = 1 AND status = 'active' AND signal_id != ?", oldest);
    const fillers: string[] = [];
    for (let index = existing; index < 100; index += 1) {
      fillers.push(await seedSignal({ goal: `filler ${uniqueWord()} ${uniqueWord()}`, isTest: true, createdAt: later }));
    }
    const { structured } = await search({ goal: `${topic} oldest entry`, is_test: true });
    expect(structured!.matches.map((match: Structured) => match.signal_id)).not.toContain(oldest);
    expect(structured!.status).toBe("no_relevant_experience");
    expect(structured!.notice).toContain("100");
    // With one filler hidden, the oldest row is back inside the window.
    await env.CONTACTS!.prepare("UPDATE task_signals SET status = 'hidden' WHERE signal_id = ?").bind(fillers[0]).run();
    const within = await search({ goal: `${topic} oldest entry`, is_test: true });
    expect(within.structured!.matches.map((match: Structured) => match.signal_id)).toEqual([oldest]);
    // Leave the test cohort's window to the other tests of this file.
    await env.CONTACTS!.prepare(`DELETE FROM task_signals WHERE signal_id IN (${fillers.map(() => "?").join(",")})`).bind(...fillers).run();
  });

  it("binds only the cohort flag, the window size, the tokenizer version, the text limit and held signal ids to the candidate query", async () => {
    await contribute({ goal: `deploy ${uniqueWord("bound")} on the edge`, is_test: true });
    const recorder = faultyD1(env.CONTACTS!, {});
    const canaries = new Canaries();
    await search({ goal: canaries.make("goal"), blocker: canaries.make("blocker"), is_test: true }, { overrides: { CONTACTS: recorder } });
    await search({ goal: canaries.make("goal"), blocker: canaries.make("blocker"), is_test: true }, { overrides: { CONTACTS: recorder } });
    const selects = recorder.statements.filter((statement) => statement.sql.includes("FROM task_signals"));
    expect(selects).toHaveLength(2); // nothing matched: the matches' texts are never read
    for (const select of selects) {
      expect(select.params.slice(0, 4)).toEqual([1, 100, TOKENIZER_VERSION, SEARCH_WINDOW_INLINE_TEXT_MAX]);
      const held = JSON.parse(String(select.params[4])) as unknown[];
      for (const id of held) expect(id).toMatch(/^ts_[0-9a-f-]{36}$/);
      for (const value of canaries.all()) expect(`${select.sql} ${JSON.stringify(select.params)}`).not.toContain(value);
    }
    // The second search holds the lists of the first one's window (03 §5.6).
    expect((JSON.parse(String(selects[1]!.params[4])) as unknown[]).length).toBeGreaterThan(0);
  });

  it("a second search leaves out the lists the first one read, and finds exactly the same", async () => {
    const word = uniqueWord("held");
    const short = await contribute({ goal: `deploy ${word} on the edge`, learned: "pin the date", is_test: true });
    const long = await contribute({ goal: `deploy ${word} behind the gateway`, learned: LONG_LEARNED, is_test: true });
    const ids = [short.structured!.signal_id, long.structured!.signal_id];
    const first = await search({ goal: `deploy ${word}`, is_test: true });
    expect((first.structured!.matches as Structured[]).map((match) => match.signal_id).sort()).toEqual([...ids].sort());
    const recorder = faultyD1(env.CONTACTS!, {});
    const second = await search({ goal: `deploy ${word}`, is_test: true }, { overrides: { CONTACTS: recorder } });
    expect(second.structured!.matches).toEqual(first.structured!.matches);
    // What D1 answered that second window: both rows without their lists, as held.
    const window = recorder.statements.find((statement) => statement.sql === SEARCH_WINDOW_SQL)!;
    const rows = (await db().prepare(window.sql).bind(...window.params).all<{ signal_id: string; tokens: string | null; list_held: number }>()).results;
    for (const id of ids) expect(rows.find((row) => row.signal_id === id)).toMatchObject({ tokens: null, list_held: 1 });
  });

  it("a window that leaves out a list the search does not hold is storage_error, never a no-match", async () => {
    const word = uniqueWord("unheld");
    const saved = await contribute({ goal: `deploy ${word} on the edge`, is_test: true });
    const unheld = JSON.stringify([saved.structured!.signal_id]);
    // D1 answering as if that id had been bound as held: the door has never seen the row.
    const real = db();
    const lying = {
      prepare: (sql: string) => {
        const statement = real.prepare(sql);
        if (sql !== SEARCH_WINDOW_SQL) return statement;
        return { bind: (...params: unknown[]) => statement.bind(...params.slice(0, 4), unheld) };
      },
      batch: (statements: D1PreparedStatement[]) => real.batch(statements),
      withSession: () => lying,
    } as unknown as D1Database;
    const found = await search({ goal: `deploy ${word}`, is_test: true }, { overrides: { CONTACTS: lying } });
    expect(found.result!.isError).toBe(true);
    expect(found.structured).toMatchObject({ status: "storage_error" });
  });

  it("reads a long match's text by the id the window returned, and binds nothing else", async () => {
    const word = uniqueWord("texts");
    await contribute({ goal: `deploy ${word} on the edge`, learned: LONG_LEARNED, is_test: true });
    const recorder = faultyD1(env.CONTACTS!, {});
    const found = await search({ goal: `deploy ${word}`, is_test: true }, { overrides: { CONTACTS: recorder } });
    expect(found.structured).toMatchObject({ status: "matches_found" });
    const matches = found.structured!.matches as { signal_id: string; learned: string }[];
    expect(matches[0]!.learned).toBe(LONG_LEARNED);
    const selects = recorder.statements.filter((statement) => statement.sql.includes("FROM task_signals"));
    expect(selects).toHaveLength(2);
    expect(selects[1]!.params).toEqual([1, ...matches.map((match) => match.signal_id)]);
    for (const statement of selects) expect(`${statement.sql} ${JSON.stringify(statement.params)}`).not.toContain(word);
  });

  it("answers a search over short rows from the window alone: one read", async () => {
    const word = uniqueWord("short");
    await contribute({ goal: `deploy ${word} on the edge`, learned: "pin the date", is_test: true });
    const recorder = faultyD1(env.CONTACTS!, {});
    const found = await search({ goal: `deploy ${word}`, is_test: true }, { overrides: { CONTACTS: recorder } });
    expect(found.structured).toMatchObject({ status: "matches_found" });
    expect((found.structured!.matches as { learned: string }[])[0]!.learned).toBe("pin the date");
    expect(recorder.statements.filter((statement) => statement.sql.includes("FROM task_signals"))).toHaveLength(1);
  });
});

describe("observed goals (03 §7)", () => {
  it("records one private observation per valid search with exactly the allowed columns", async () => {
    const goal = `  ${uniqueWord("observe")} something  `;
    await search({ goal, tried: "a thing" });
    const rows = await selectRows<Structured>("SELECT * FROM observed_task_signals WHERE goal = ?", goal.trim());
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0]!).sort()).toEqual(["blocker", "created_at", "goal", "observation_id", "self_reported_test", "tried"]);
    expect(rows[0]).toMatchObject({ blocker: null, tried: "a thing", self_reported_test: 0 });
    expect(rows[0]!.observation_id).toMatch(/^ob_[0-9a-f]{32}$/);
    await search({ goal });
    expect(await countRows("observed_task_signals", "goal = ?", goal.trim())).toBe(2); // no dedupe
  });

  it("marks observations as tests by is_test and by the controlled-test User-Agent", async () => {
    const byFlag = uniqueWord("flag");
    const byAgent = uniqueWord("agent");
    await search({ goal: byFlag, is_test: true });
    await search({ goal: byAgent }, { headers: { "user-agent": "MAGNT-Controlled-Test/0.2" } });
    const rows = await selectRows<Structured>("SELECT goal, self_reported_test FROM observed_task_signals WHERE goal IN (?, ?) ORDER BY goal", byAgent, byFlag);
    expect(rows).toEqual([
      { goal: byAgent, self_reported_test: 1 },
      { goal: byFlag, self_reported_test: 1 },
    ]);
  });

  it("never returns an observation as a search candidate", async () => {
    const topic = uniqueWord("private");
    await search({ goal: `${topic} private demand` });
    const { structured } = await search({ goal: `${topic} private demand` });
    expect(structured!.status).toBe("no_relevant_experience");
  });

  it("keeps the search result when the observation write fails", async () => {
    const logs = captureConsole();
    const failing = faultyD1(env.CONTACTS!, { failWhen: /^INSERT INTO observed_task_signals/, message: "CANARY-observation-failure" });
    const { structured } = await search({ goal: uniqueWord() }, { overrides: { CONTACTS: failing } });
    expect(structured!.status).toBe("no_relevant_experience");
    expect(logs.events()[0]).toMatchObject({ observed_task_saved: false, rate_limited: false });
    expect(logs.lines().join("\n")).not.toContain("CANARY-observation-failure");
  });

  it("creates no row of either kind for invalid arguments", async () => {
    const goal = uniqueWord("invalid");
    const signals = await countRows("task_signals");
    const observed = await countRows("observed_task_signals");
    const logs = captureConsole();
    await search({ goal, learned: "not a search field" });
    await search({ goal: "" });
    await contribute({ goal, is_test: "yes" });
    expect(await countRows("task_signals")).toBe(signals);
    expect(await countRows("observed_task_signals")).toBe(observed);
    expect(logs.events().map((event) => [event.tool_result, event.validation_field, event.validation_code])).toEqual([
      ["invalid_arguments", "arguments", "unknown_field"],
      ["invalid_arguments", "goal", "empty_value"],
      ["invalid_arguments", "is_test", "invalid_type"],
    ]);
  });
});

describe("search storage errors (03 §6)", () => {
  it.each([
    ["no CONTACTS binding", { CONTACTS: undefined }],
    ["a failing candidate query", { CONTACTS: "faulty" }],
  ])("%s → storage_error, isError, no observation", async (_label, overrides) => {
    const observed = await countRows("observed_task_signals");
    const resolved = overrides.CONTACTS === "faulty" ? { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /FROM task_signals/ }) } : overrides;
    const logs = captureConsole();
    const { structured, result } = await search({ goal: uniqueWord() }, { overrides: resolved });
    expect(result!.isError).toBe(true);
    expect(structured).toEqual({ status: "storage_error", message: expect.any(String) });
    expect(await countRows("observed_task_signals")).toBe(observed);
    expect(logs.events()[0]).toMatchObject({ tool_result: "storage_error", self_reported_test: false });
  });

  it("a failing read of the matches' texts → storage_error, never a no-match, no observation", async () => {
    const word = uniqueWord("texts-fail");
    await contribute({ goal: `deploy ${word} on the edge`, learned: LONG_LEARNED });
    const observed = await countRows("observed_task_signals");
    const faulty = faultyD1(env.CONTACTS!, { failWhen: /^SELECT signal_id, goal, blocker, tried, learned FROM task_signals/ });
    const logs = captureConsole();
    const { structured, result } = await search({ goal: `deploy ${word}` }, { overrides: { CONTACTS: faulty } });
    expect(result!.isError).toBe(true);
    expect(structured).toEqual({ status: "storage_error", message: expect.any(String) });
    expect(faulty.statements.filter((statement) => statement.sql.includes("FROM task_signals"))).toHaveLength(2);
    expect(await countRows("observed_task_signals")).toBe(observed);
    expect(logs.events()[0]).toMatchObject({ tool_result: "storage_error", self_reported_test: false });
  });

  it("leaves out a match hidden between the window and the read of its text", async () => {
    const word = uniqueWord("hidden-between");
    const first = await contribute({ goal: `deploy ${word} on the edge`, learned: `first ${LONG_LEARNED}` });
    await contribute({ goal: `deploy ${word} at the edge`, learned: `second ${LONG_LEARNED}` });
    const hideId = first.structured!.signal_id as string;
    // Hide the first signal the moment the window has been read, before the matches' texts are.
    const base = env.CONTACTS!;
    const hiding = {
      prepare: (sql: string) => base.prepare(sql),
      batch: (statements: D1PreparedStatement[]) => base.batch(statements),
      withSession: (constraint: string) => {
        const session = base.withSession(constraint as D1SessionConstraint);
        return {
          prepare: (sql: string) => {
            const statement = session.prepare(sql);
            if (!sql.includes("LEFT JOIN task_signal_tokens")) return statement;
            return {
              bind: (...params: unknown[]) => {
                const bound = statement.bind(...params);
                return {
                  all: async () => {
                    const window = await bound.all();
                    await base.prepare("UPDATE task_signals SET status = 'hidden' WHERE signal_id = ?").bind(hideId).run();
                    return window;
                  },
                };
              },
            };
          },
          batch: (statements: D1PreparedStatement[]) => session.batch(statements),
          getBookmark: () => session.getBookmark(),
        };
      },
    } as unknown as D1Database;
    const found = await search({ goal: `deploy ${word}` }, { overrides: { CONTACTS: hiding } });
    expect(found.structured).toMatchObject({ status: "matches_found", matches_count: 1 });
    expect((found.structured!.matches as { signal_id: string; learned: string }[]).map((match) => match.learned)).toEqual([`second ${LONG_LEARNED}`]);
  });
});

describe("contribute (03 §8)", () => {
  it("publishes a signal, returns its receipt and makes it searchable in its cohort", async () => {
    const topic = uniqueWord("contrib");
    const receipt = (await search({ goal: `${topic} publish flow`, is_test: true })).structured!.search_receipt;
    const logs = captureConsole();
    const { structured } = await contribute({
      goal: ` ${topic} publish flow `,
      blocker: "none",
      tried: "x",
      learned: "y",
      is_test: true,
      submission_id: crypto.randomUUID(),
      search_receipt: receipt,
    });
    expect(structured).toMatchObject({ status: "accepted", duplicate: false, cohort: "test" });
    expect(Object.keys(structured!)).toEqual(["status", "signal_id", "duplicate", "cohort", "message"]);
    expect(structured!.signal_id).toMatch(/^ts_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(logs.events()[0]).toMatchObject({
      tool_result: "accepted",
      signal_id: structured!.signal_id,
      self_reported_test: true,
      search_receipt: receipt,
      rate_limited: false,
    });
    const [row] = await selectRows<Structured>("SELECT * FROM task_signals WHERE signal_id = ?", structured!.signal_id);
    expect(row).toMatchObject({ goal: `${topic} publish flow`, status: "active", self_reported_test: 1 });
    const found = await search({ goal: `${topic} publish flow`, is_test: true });
    expect(found.structured!.matches.map((match: Structured) => match.signal_id)).toEqual([structured!.signal_id]);
  });

  it("returns the original signal_id as a duplicate and never reactivates a hidden row", async () => {
    const args = { goal: `${uniqueWord()} retry`, submission_id: crypto.randomUUID() };
    const first = (await contribute(args)).structured!;
    await env.CONTACTS!.prepare("UPDATE task_signals SET status = 'hidden' WHERE signal_id = ?").bind(first.signal_id).run();
    const logs = captureConsole();
    const second = (await contribute({ ...args, search_receipt: `sr_${"0".repeat(32)}` })).structured!;
    expect(second).toMatchObject({ status: "duplicate", signal_id: first.signal_id, duplicate: true, cohort: "ordinary" });
    const [row] = await selectRows<Structured>("SELECT status FROM task_signals WHERE signal_id = ?", first.signal_id);
    expect(row!.status).toBe("hidden");
    expect(logs.events()[0]).toMatchObject({ tool_result: "duplicate", signal_id: first.signal_id });
  });

  it("answers different content under the same submission_id with a conflict and overwrites nothing", async () => {
    const submission_id = crypto.randomUUID();
    const first = (await contribute({ goal: "original goal text", submission_id })).structured!;
    const { structured, result } = await contribute({ goal: "original goal text", learned: "changed", submission_id });
    expect(result!.isError).toBe(true);
    expect(structured).toMatchObject({ status: "submission_conflict" });
    const rows = await selectRows<Structured>("SELECT signal_id, learned FROM task_signals WHERE submission_id = ?", submission_id);
    expect(rows).toEqual([{ signal_id: first.signal_id, learned: null }]);
  });

  it("includes the test flag in the hash, so the same submission in another cohort conflicts", async () => {
    const submission_id = crypto.randomUUID();
    await contribute({ goal: "cohort hash", submission_id });
    expect((await contribute({ goal: "cohort hash", submission_id, is_test: true })).structured!.status).toBe("submission_conflict");
  });

  it("50 concurrent identical contributions → one row, one accepted, 49 duplicates of the same id", async () => {
    const args = { goal: `${uniqueWord()} concurrent`, submission_id: crypto.randomUUID() };
    const results = await Promise.all(Array.from({ length: 50 }, () => contribute(args)));
    const statuses = results.map((result) => result.structured!.status);
    expect(statuses.filter((status) => status === "accepted")).toHaveLength(1);
    expect(statuses.filter((status) => status === "duplicate")).toHaveLength(49);
    expect(new Set(results.map((result) => result.structured!.signal_id)).size).toBe(1);
    expect(await countRows("task_signals", "submission_id = ?", args.submission_id)).toBe(1);
  });

  it("reports storage_error for a missing binding or failing statements, without a signal_id", async () => {
    for (const overrides of [
      { CONTACTS: undefined },
      { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /^INSERT/ }) },
      { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /INSERT INTO task_signal_tokens/ }) },
      { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /^SELECT signal_id/ }) },
      { CONTACTS: faultyD1(env.CONTACTS!, { pretendWhen: /^INSERT/ }) },
    ]) {
      const { structured, result } = await contribute({ goal: "storage fault" }, { overrides });
      expect(result!.isError).toBe(true);
      expect(structured).toEqual({ status: "storage_error", message: expect.any(String) });
    }
  });

  it("stores the token list with the row in the same write, once, and never returns it (03 §5.6)", async () => {
    const topic = uniqueWord("tokens");
    const args = { goal: `${topic} Deploy the Worker`, blocker: "cron ёлка", tried: "a retry, a RETRY", learned: "never matched", submission_id: crypto.randomUUID() };
    const results = await Promise.all(Array.from({ length: 10 }, () => contribute(args)));
    const signalId = results[0]!.structured!.signal_id as string;
    expect(new Set(results.map((result) => result.structured!.signal_id))).toEqual(new Set([signalId]));
    expect(await selectRows<Structured>("SELECT signal_id, tokenizer_version, tokens FROM task_signal_tokens WHERE signal_id = ?", signalId)).toEqual([
      { signal_id: signalId, tokenizer_version: 1, tokens: [topic, "deploy", "worker", "cron", "елка", "retry"].sort().join(" ") },
    ]);
    expect(await countRows("task_signal_tokens", "signal_id NOT IN (SELECT signal_id FROM task_signals)")).toBe(0);
    const logs = captureConsole();
    const found = await search({ goal: `${topic} deploy` });
    expect(found.structured!.matches).toEqual([{ signal_id: signalId, goal: args.goal, blocker: args.blocker, tried: args.tried, learned: args.learned }]);
    expect(JSON.stringify(found.message)).not.toMatch(/tokenizer_version|"tokens"|елка retry/);
    expect(JSON.stringify(logs.events())).not.toMatch(/tokenizer_version|tokens/);
  });

  it("matches rows from before 0008 (no list) and rows of another tokenizer version on their text", async () => {
    const topic = uniqueWord("legacy");
    const legacy = await seedSignal({ goal: `${topic} legacy queue`, createdAt: "2026-01-01T00:00:00.000Z" });
    const stale = await seedSignal({ goal: `${topic} stale queue`, createdAt: "2026-01-01T00:00:00.000Z" });
    // A list of another version must be ignored, whatever it says.
    await env.CONTACTS!.prepare("INSERT INTO task_signal_tokens (signal_id, tokenizer_version, tokens) VALUES (?, 0, 'nothing relevant')").bind(stale).run();
    const misleading = await seedSignal({ goal: "unrelated text", createdAt: "2026-01-01T00:00:00.000Z" });
    await env.CONTACTS!.prepare("INSERT INTO task_signal_tokens (signal_id, tokenizer_version, tokens) VALUES (?, 0, ?)").bind(misleading, `${topic} queue`).run();
    for (let round = 0; round < 2; round += 1) {
      const { structured } = await search({ goal: `${topic} queue` });
      expect(structured!.matches.map((match: Structured) => match.signal_id).sort()).toEqual([legacy, stale].sort());
    }
  });

  it("works with both client generations", async () => {
    const v2 = await connectV2("auto");
    const v1 = await connectV1();
    for (const client of [v2, v1]) {
      const result = await client.callTool({ name: "contribute_task_signal", arguments: { goal: `${uniqueWord()} clients`, is_test: true } });
      expect((result.structuredContent as Structured).status).toBe("accepted");
      await client.close();
    }
  });
});

describe("rate limit of public writes (01 §14)", () => {
  it("30 concurrent contributions from one address with limit 20 → exactly 20 rows, exactly 10 rate_limited", async () => {
    const limiter = fakeRateLimiter({ limit: 20 });
    const topic = uniqueWord("flood");
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        contribute({ goal: `${topic} ${index}` }, { overrides: { PUBLIC_WRITES: limiter }, headers: { "cf-connecting-ip": "192.0.2.9" } }),
      ),
    );
    const accepted = results.filter((result) => result.structured!.status === "accepted");
    const limited = results.filter((result) => result.structured!.status === "rate_limited");
    // The fake counts synchronously per key, so exactly `limit` calls pass whatever the interleaving.
    expect(accepted).toHaveLength(20);
    expect(limited).toHaveLength(10);
    expect(new Set(accepted.map((result) => result.structured!.signal_id)).size).toBe(20);
    for (const result of limited) {
      expect(result.result!.isError).toBe(true);
      expect(result.structured).toMatchObject({ status: "rate_limited", retry_after_s: 60 });
      expect(result.structured).not.toHaveProperty("signal_id");
    }
    expect([...limiter.counts.values()]).toEqual([30]);
    expect(await countRows("task_signals", "goal LIKE ?", `${topic} %`)).toBe(20);
  });

  it("a search over the limit answers normally without an observation", async () => {
    const goal = uniqueWord("limited");
    const logs = captureConsole();
    const { structured } = await search({ goal }, { overrides: { PUBLIC_WRITES: fakeRateLimiter({ limit: 0 }) } });
    expect(structured!.status).toBe("no_relevant_experience");
    expect(await countRows("observed_task_signals", "goal = ?", goal)).toBe(0);
    expect(logs.events()[0]).toMatchObject({ observed_task_saved: false, rate_limited: true });
  });

  it("shares one budget between contacts, contributions and observations", async () => {
    const limiter = fakeRateLimiter({ limit: 2 });
    const options = { overrides: { PUBLIC_WRITES: limiter }, headers: { "cf-connecting-ip": "192.0.2.50" } };
    await search({ goal: uniqueWord() }, options);
    await contribute({ goal: uniqueWord() }, options);
    expect((await contribute({ goal: uniqueWord() }, options)).structured!.status).toBe("rate_limited");
  });
});

describe("privacy canary over every shared-memory path (10 §3)", () => {
  it("never logs goal, blocker, tried, learned, search text or observation ids, nor writes them to Analytics Engine", async () => {
    const canaries = new Canaries();
    const logs = captureConsole();
    const analytics = captureAnalytics();
    const task = (prefix: string) => ({
      goal: canaries.make(`${prefix}goal`),
      blocker: canaries.make(`${prefix}blocker`),
      tried: canaries.make(`${prefix}tried`),
    });
    const searched = task("search");
    await search(searched);
    await search({ ...task("match"), goal: searched.goal });
    const submission_id = canaries.track("submission_id", crypto.randomUUID());
    const published = { ...task("contrib"), learned: canaries.make("learned"), submission_id };
    await contribute(published);
    await contribute(published);
    await contribute({ ...published, learned: canaries.make("conflictLearned") });
    await search({ ...task("invalid"), [canaries.make("unknownKey")]: canaries.make("unknownValue") });
    await contribute({ ...task("limited") }, { overrides: { PUBLIC_WRITES: fakeRateLimiter({ limit: 0 }) } });
    await search({ ...task("nostorage") }, { overrides: { CONTACTS: undefined } });
    await search(task("failing"), { overrides: { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /task_signals/, message: canaries.make("d1error") }) } });
    await contribute(task("failingContribute"), { overrides: { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /^INSERT/, message: canaries.make("d1errorInsert") }) } });

    const observations = await selectRows<Structured>("SELECT observation_id FROM observed_task_signals WHERE goal = ?", searched.goal);
    expect(observations.length).toBeGreaterThan(0);
    observations.forEach(({ observation_id }, index) => canaries.track(`observation_id${index}`, observation_id));
    // One event and one data point per call above, so the absence checks looked at every path.
    expect(logs.events()).toHaveLength(10);
    expect(analytics.points).toHaveLength(10);
    for (const event of logs.events()) assertValidEvent(event);
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });
  });
});

/**
 * Read replicas (09 §5.2): the search window goes through a D1 session whose
 * first query may reach any replica; the observation and every write stay on
 * the binding itself (the primary). On local D1 (no replication) the answer
 * is the same as before: the contribution just made is found.
 */
describe("reads a replica may serve (09 §5.2)", () => {
  /** The real binding, recording which SQL ran on it and which through a session (with its constraint). */
  function recordingBinding() {
    const primary: string[] = [];
    const sessions: { constraint: string | undefined; sql: string[] }[] = [];
    const real = db();
    const binding = {
      prepare: (sql: string) => {
        primary.push(sql);
        return real.prepare(sql);
      },
      batch: (statements: D1PreparedStatement[]) => real.batch(statements),
      exec: (sql: string) => real.exec(sql),
      withSession: (constraint?: string) => {
        const session = real.withSession(constraint as D1SessionConstraint);
        const record = { constraint, sql: [] as string[] };
        sessions.push(record);
        return {
          prepare: (sql: string) => {
            record.sql.push(sql);
            return session.prepare(sql);
          },
          batch: (statements: D1PreparedStatement[]) => session.batch(statements),
          getBookmark: () => session.getBookmark(),
        };
      },
    } as unknown as D1Database;
    return { binding, primary, sessions };
  }

  it("the search window runs in a first-unconstrained session; the observation insert on the primary", async () => {
    const word = uniqueWord("replica");
    const contributed = await contribute({ goal: `deploy ${word} on the edge`, learned: "pin the compatibility date", is_test: true });
    expect(contributed.structured).toMatchObject({ status: "accepted" });
    const { binding, primary, sessions } = recordingBinding();
    const found = await search({ goal: `deploy ${word}`, is_test: true }, { overrides: { CONTACTS: binding } });
    expect(found.structured).toMatchObject({ status: "matches_found" });
    expect(sessions).toEqual([{ constraint: "first-unconstrained", sql: [SEARCH_WINDOW_SQL] }]);
    expect(primary.some((sql) => sql.includes("FROM task_signals"))).toBe(false);
    expect(primary.some((sql) => /INSERT INTO observed_task_signals/.test(sql))).toBe(true);
  });

  it("a long match's text is read in the window's session, never on the primary", async () => {
    const word = uniqueWord("replica-long");
    await contribute({ goal: `deploy ${word} on the edge`, learned: LONG_LEARNED, is_test: true });
    const { binding, primary, sessions } = recordingBinding();
    const found = await search({ goal: `deploy ${word}`, is_test: true }, { overrides: { CONTACTS: binding } });
    expect(found.structured).toMatchObject({ status: "matches_found" });
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.constraint).toBe("first-unconstrained");
    expect(sessions[0]!.sql).toHaveLength(2);
    expect(sessions[0]!.sql[0]).toBe(SEARCH_WINDOW_SQL);
    expect(sessions[0]!.sql[1]).toMatch(/^SELECT signal_id, goal, blocker, tried, learned FROM task_signals\s+WHERE status = 'active'/);
    expect(primary.some((sql) => sql.includes("FROM task_signals"))).toBe(false);
  });

  it("no write, receipt read-back or outbox statement ever runs in a session", async () => {
    const { binding, sessions } = recordingBinding();
    const saved = await contribute({ goal: `contribute ${uniqueWord("primary")}`, learned: "reads after writes stay on the primary", is_test: true }, { overrides: { CONTACTS: binding } });
    expect(saved.structured).toMatchObject({ status: "accepted" });
    expect(sessions).toEqual([]);
  });
});
