/**
 * The shared-memory tokeniser and matcher (03 §5), table-driven: the spec's
 * vectors, pinned stop lists, English and Russian, NFKC width forms, the 0.15
 * threshold on both sides, the common-token rules, ties and the result cap.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { completeWindow, type HeldLists } from "../../worker/signals/candidate-tokens";
import type { SignalCandidateRow } from "../../worker/signals/signal-store";
import { findMatches } from "../../worker/signals/matcher";
import { commonTokenCounter, hashList, hashSpan, tokenHash, type TokenSpans } from "../../worker/signals/token-hashes";
import { WindowIndex } from "../../worker/signals/window-index";
import { ENGLISH_STOP_WORDS, RUSSIAN_STOP_WORDS, SHORT_TERM_ALLOWLIST } from "../../worker/signals/stopwords";
import { distinctTokenSpans, distinctTokens, nfkc, storedTokens, taskTokens, tokenSet, TOKENIZER_VERSION, type TaskText } from "../../worker/signals/tokenize";

const sorted = (set: Set<string>) => [...set].sort();

/** Query spans over `tokens` laid out with other text between them, so no span starts where its index would. */
function spans(tokens: readonly string[]): TokenSpans {
  let text = "·";
  const starts: number[] = [];
  const ends: number[] = [];
  for (const token of tokens) {
    starts.push(text.length);
    text += token;
    ends.push(text.length);
    text += " ·· ";
  }
  return { text, starts: Int32Array.from(starts), ends: Int32Array.from(ends), hashes: Int32Array.from(starts, (start, index) => hashSpan(text, start, ends[index]!)) };
}

/** Two distinct tokens with one 32-bit hash (of one length, of two, or either when not said), found by the birthday search over short tokens. */
function collidingPair(sameLength?: boolean): [string, string] {
  const seen = new Map<number, string[]>();
  for (let index = 0; ; index += 1) {
    const token = `t${index.toString(36)}`;
    const hash = tokenHash(token);
    const others = seen.get(hash) ?? [];
    const other = others.find((candidate) => sameLength === undefined || (candidate.length === token.length) === sameLength);
    if (other !== undefined) return [other, token];
    seen.set(hash, [...others, token]);
  }
}

describe("tokeniser (03 §5.1, §5.5)", () => {
  it.each([
    ["Ёлка и ЕЛКА", ["елка"]],
    ["Deploy a Cloudflare Worker with D1 and cron", ["cloudflare", "cron", "deploy", "worker"]],
    ["ＡＩ agents for the UI", ["agents", "ai", "ui"]],
    ["don't retry on 404", ["404", "retry"]],
    ["Как настроить ИИ для БД?", ["бд", "ии", "настроить"]],
    ["a an to of в и", []],
    // Rule 7 counts code points, not UTF-16 units: two astral letters are two, three are kept.
    ["𠀀𠀀 𠀀𠀀𠀀 𝔸𝔹", ["𠀀𠀀𠀀"]],
  ])("%s", (input, expected) => {
    expect(sorted(tokenSet(input))).toEqual([...expected].sort());
  });

  it("normalises width forms, ё and case before the stop lists", () => {
    expect(sorted(tokenSet("ＴＨＥ Ｄｅｐｌｏｙ ЕЩЁ ещё"))).toEqual(["deploy"]);
  });

  it("keeps allow-listed short terms and numbers, drops other short tokens", () => {
    expect(sorted(tokenSet("c r go os qa 2d 3d 5g ос x y 42 no"))).toEqual(["2d", "3d", "5g", "c", "go", "os", "qa", "r", "ос"]);
  });

  it("splits on everything but letters, marks and numbers", () => {
    expect(sorted(tokenSet("node.js/typescript—workers_api (v2)"))).toEqual(["api", "js", "node", "typescript", "workers"]);
  });

  it("counts code points, not UTF-16 units, for the short-token rule", () => {
    // Deseret letters are outside the BMP (two UTF-16 units each) and unchanged by NFKC.
    expect(sorted(tokenSet("\u{10428}\u{10429} \u{10428}\u{10429}\u{1042a}"))).toEqual(["\u{10428}\u{10429}\u{1042a}"]);
  });

  it("matches goal, blocker and tried only", () => {
    expect(sorted(taskTokens({ goal: "deploy worker", blocker: "cron fails", tried: "retry" }))).toEqual(["cron", "deploy", "fails", "retry", "worker"]);
  });
});

describe("stop lists and allow-list (03 §5.3–§5.4)", () => {
  it("pins the English list (80 words)", () => {
    expect(ENGLISH_STOP_WORDS.size).toBe(80);
    expect([...ENGLISH_STOP_WORDS].join(" ")).toBe(
      "about after also and any are aren because been before being both but can could did didn does doesn don each for from had has have her here him his how into isn its just may might more most must not only other our over she should some such than that the their them then there these they this those too via was wasn were what when where which while who why will with without won would yet you your",
    );
  });

  it("pins the Russian list (80 words, spelled with е)", () => {
    expect(RUSSIAN_STOP_WORDS.size).toBe(80);
    expect([...RUSSIAN_STOP_WORDS].join(" ")).toBe(
      "без более больше будет был была были было быть вам вас весь вот все всего всех где для его если есть еще здесь или как какая какой когда кто куда меня мне может можно мой над надо нас него нее ней нет них ничего она они оно очень под после потом потому при про сам себе себя так такой там тем тогда того тоже только том тот тут уже чего чем через что чтобы эти это этого этой этом этот",
    );
    expect([...RUSSIAN_STOP_WORDS].some((word) => word.includes("ё"))).toBe(false);
  });

  it("pins the short-term allow-list and keeps it disjoint from the stop lists", () => {
    expect([...SHORT_TERM_ALLOWLIST].join(" ")).toBe("ai ml db ui ux ip js ts go os qa ci cd id io vm pr c r 2d 3d 5g ии бд ос");
    for (const term of SHORT_TERM_ALLOWLIST) {
      expect(ENGLISH_STOP_WORDS.has(term) || RUSSIAN_STOP_WORDS.has(term)).toBe(false);
    }
  });
});

/** A candidate whose goal is exactly these tokens. */
const candidate = (id: string, words: string[], extra: Partial<{ blocker: string; tried: string; learned: string }> = {}) => ({
  signal_id: id,
  goal: words.join(" "),
  blocker: extra.blocker ?? null,
  tried: extra.tried ?? null,
  learned: extra.learned ?? null,
});
const filler = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${String.fromCharCode(97 + (index % 26))}${Math.floor(index / 26)}x`);

describe("matcher (03 §5.2)", () => {
  it("matches the worked example", () => {
    const matches = findMatches({ goal: "deploy worker cron" }, [candidate("c1", ["deploy", "worker", "queue", "retry"])]);
    expect(matches.map((match) => match.signal_id)).toEqual(["c1"]);
  });

  it("matches at exactly 0.15 and not just below", () => {
    const query = { goal: "alpha bravo charlie" };
    const exactly = candidate("exact", ["alpha", "bravo", "charlie", ...filler("pad", 17)]); // common 3, union 20
    const below = candidate("below", ["alpha", "bravo", "charlie", ...filler("pad", 18)]); // common 3, union 21
    expect(findMatches(query, [exactly, below]).map((match) => match.signal_id)).toEqual(["exact"]);
  });

  it("requires two common tokens for a multi-token query", () => {
    const matches = findMatches({ goal: "alpha bravo" }, [candidate("one", ["alpha"]), candidate("two", ["alpha", "bravo", "delta"])]);
    expect(matches.map((match) => match.signal_id)).toEqual(["two"]);
  });

  it("needs one common token for a one-token query, still under the threshold", () => {
    const within = candidate("within", ["kubernetes", ...filler("pad", 5)]); // 1/6 ≥ 0.15
    const beyond = candidate("beyond", ["kubernetes", ...filler("pad", 6)]); // 1/7 < 0.15
    expect(findMatches({ goal: "Kubernetes" }, [within, beyond]).map((match) => match.signal_id)).toEqual(["within"]);
  });

  it("matches nothing for a stop-word-only query", () => {
    expect(findMatches({ goal: "what is the", blocker: "и для как" }, [candidate("any", ["what", "the"])])).toEqual([]);
  });

  it("orders by similarity, keeps candidate order on ties, returns at most three", () => {
    const query = { goal: "alpha bravo charlie delta" };
    const candidates = [
      candidate("tie-first", ["alpha", "bravo", "zulu"]), // 2/5
      candidate("best", ["alpha", "bravo", "charlie", "delta"]), // 4/4
      candidate("tie-second", ["alpha", "bravo", "yankee"]), // 2/5
      candidate("good", ["alpha", "bravo", "charlie"]), // 3/4
      candidate("tie-third", ["alpha", "bravo", "xray"]), // 2/5
    ];
    expect(findMatches(query, candidates).map((match) => match.signal_id)).toEqual(["best", "good", "tie-first"]);
    expect(findMatches(query, candidates, 10).map((match) => match.signal_id)).toEqual(["best", "good", "tie-first", "tie-second", "tie-third"]);
  });

  it("never matches on learned", () => {
    const matches = findMatches({ goal: "alpha bravo" }, [candidate("learned-only", ["zulu"], { learned: "alpha bravo" })]);
    expect(matches).toEqual([]);
  });

  it("matches across blocker and tried, in Russian with ё/е", () => {
    const query = { goal: "Настроить ёлку", blocker: "ошибка деплоя" };
    const hit = candidate("ru", ["настроить"], { tried: "елку ОШИБКА" });
    expect(findMatches(query, [hit]).map((match) => match.signal_id)).toEqual(["ru"]);
  });
});

describe("tokeniser equals its plain definition (property)", () => {
  /** The spec's rules written the slow, obvious way. */
  function referenceTokens(text: string): string[] {
    const normalised = text.normalize("NFKC").toLowerCase().replaceAll("ё", "е");
    const kept = (normalised.match(/[\p{L}\p{M}\p{N}]+/gu) ?? []).filter(
      (token) => !ENGLISH_STOP_WORDS.has(token) && !RUSSIAN_STOP_WORDS.has(token) && ([...token].length >= 3 || SHORT_TERM_ALLOWLIST.has(token)),
    );
    return [...new Set(kept)].sort();
  }

  /** The spec's matcher written the slow, obvious way. */
  function referenceMatches(query: TaskText, candidates: (TaskText & { signal_id: string })[]): string[] {
    const q = new Set(referenceTokens([query.goal, query.blocker, query.tried].filter(Boolean).join(" ")));
    if (q.size === 0) return [];
    const scored = candidates.flatMap((candidate) => {
      const c = new Set(referenceTokens([candidate.goal, candidate.blocker, candidate.tried].filter(Boolean).join(" ")));
      const common = [...q].filter((token) => c.has(token)).length;
      const union = new Set([...q, ...c]).size;
      const ok = common * 100 >= 15 * union && common >= (q.size === 1 ? 1 : 2);
      return ok ? [{ id: candidate.signal_id, common, union }] : [];
    });
    return scored
      .sort((a, b) => b.common * a.union - a.common * b.union)
      .slice(0, 3)
      .map((match) => match.id);
  }

  const alphabet = fc.constantFrom(
    ..."aAbBzZ09 ёЁеЕжЖ-_.,'’\u0301\u0482\u0483ＡＩ①²ǅß😀\u{10428}\u{1d400}\ud800\u200d\u00a0\t\nдлякакthewithaiииbdос".split(""),
    "the", "with", "для", "как", "ai", "ии", "бд", "деплой", "worker",
  );
  const text = fc.array(alphabet, { maxLength: 40 }).map((parts) => parts.join(""));

  it("the fast scanner finds exactly the regex's tokens", () => {
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: "binary", maxLength: 60 })), (value) => {
        expect(sorted(tokenSet(value))).toEqual(referenceTokens(value));
      }),
      { numRuns: 2000 },
    );
  });

  it("the matcher agrees with the plain definition", () => {
    const task = fc.record({ goal: text, blocker: fc.option(text, { nil: undefined }), tried: fc.option(text, { nil: undefined }) });
    fc.assert(
      fc.property(task, fc.array(task, { maxLength: 8 }), (query, rows) => {
        const candidates = rows.map((row, index) => ({ ...row, signal_id: `c${index}` }));
        expect(findMatches(query, candidates).map((match) => match.signal_id)).toEqual(referenceMatches(query, candidates));
      }),
      { numRuns: 1000 },
    );
  });

  /** A candidate as the window query returns it (03 §4). */
  function windowRow(candidate: TaskText & { signal_id: string; tokens: string | null; tokenizer_version: number | null }): SignalCandidateRow {
    const { signal_id, tokens, tokenizer_version, goal } = candidate;
    return { signal_id, tokens, tokenizer_version, list_held: 0, goal, blocker: candidate.blocker ?? null, tried: candidate.tried ?? null, learned: null };
  }

  /** A window as the search completes it (03 §5.6), with the lists it was told it holds. */
  function completed(rows: readonly SignalCandidateRow[], held: HeldLists = new Map()) {
    const window = completeWindow(rows, held);
    if (window.kind !== "complete") throw new Error("inconsistent window");
    return window.rows;
  }

  /**
   * The stored token lists (03 §5.6): each candidate as written since 0008 (its
   * list, current version), from before it (no list: NULL), with a list of
   * another tokenizer version (here a wrong list, which must be ignored), or
   * with its list left out because the isolate holds it — mixed in one window,
   * matched directly and after the search's `completeWindow`.
   */
  it("stored (with or without the text), held, missing and other-version token lists match exactly as the plain definition", () => {
    const task = fc.record({ goal: text, blocker: fc.option(text, { nil: undefined }), tried: fc.option(text, { nil: undefined }) });
    const storage = fc.constantFrom("current", "held", "null", "other-version");
    fc.assert(
      fc.property(task, fc.array(fc.tuple(task, storage), { maxLength: 8 }), (query, rows) => {
        const candidates = rows.map(([row, kind], index) => ({
          ...row,
          signal_id: `c${index}`,
          ...(kind === "current" || kind === "held"
            ? { tokens: storedTokens(row), tokenizer_version: TOKENIZER_VERSION }
            : kind === "null"
              ? { tokens: null, tokenizer_version: null }
              : { tokens: `${storedTokens(query)} stale`, tokenizer_version: TOKENIZER_VERSION + 1 }),
        }));
        const expected = referenceMatches(query, candidates);
        expect(findMatches(query, candidates).map((match) => match.signal_id)).toEqual(expected);
        const window = candidates.map(windowRow);
        expect(findMatches(query, completed(window)).map((match) => match.signal_id)).toEqual(expected);
        // As the search window hands them over (03 §4, §5.6): a row with a current list comes without its text, and a
        // held one also without its list, which the isolate has from an earlier search.
        const held = completeWindow(window, new Map());
        if (held.kind !== "complete") throw new Error("inconsistent window");
        const asWindow = window.map((row, index) => {
          const kind = rows[index]![1];
          if (kind === "current") return { ...row, goal: null, blocker: null, tried: null };
          if (kind === "held") return { ...row, goal: null, blocker: null, tried: null, tokens: null, list_held: 1 };
          return row;
        });
        expect(findMatches(query, completed(asWindow, held.held)).map((match) => match.signal_id)).toEqual(expected);
        // With the cohort's index, shared by every run (windows that overlap, repeat and replace each other), as the
        // search matches (window-index.ts).
        expect(findMatches(query, completed(asWindow, held.held), 3, sharedIndex).map((match) => match.signal_id)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  /** One index across the runs of the property below, as an isolate keeps one per cohort across searches. */
  const sharedIndex = new WindowIndex();

  it("the cohort's index matches exactly as the plain definition, over windows that share, repeat and change their rows", () => {
    // A small pool of ids, so windows of later runs hold rows of earlier ones, some with a changed text (a new list).
    const task = fc.record({ goal: text, blocker: fc.option(text, { nil: undefined }), tried: fc.option(text, { nil: undefined }) });
    const row = fc.tuple(fc.integer({ min: 0, max: 11 }), task);
    const index = new WindowIndex();
    const lists = new Map<string, { tokens: string; hashed: ReturnType<typeof hashList> }>();
    fc.assert(
      fc.property(task, fc.array(row, { maxLength: 10 }), (query, rows) => {
        const candidates = rows.map(([id, row]) => {
          const tokens = storedTokens(row);
          // The same list is the same object, as held lists are between searches.
          const signal_id = `s${id}`;
          const known = lists.get(`${signal_id} ${tokens}`);
          const hashed = known?.hashed ?? hashList(tokens);
          lists.set(`${signal_id} ${tokens}`, { tokens, hashed });
          return { ...row, signal_id, tokens, tokenizer_version: TOKENIZER_VERSION, hashed };
        });
        expect(findMatches(query, candidates, 3, index).map((match) => match.signal_id)).toEqual(referenceMatches(query, candidates));
      }),
      { numRuns: 1000 },
    );
  });

  it("a query's distinct tokens are the reference token set, each once, whatever their hashes", () => {
    const task = fc.record({ goal: text, blocker: fc.option(text, { nil: undefined }), tried: fc.option(text, { nil: undefined }) });
    fc.assert(
      fc.property(task, (row) => {
        const tokens = distinctTokens(row);
        expect(new Set(tokens).size).toBe(tokens.length);
        expect([...tokens].sort()).toEqual(referenceTokens([row.goal, row.blocker, row.tried].filter(Boolean).join(" ")));
      }),
      { numRuns: 500 },
    );
    const [first, second] = collidingPair(true);
    expect(distinctTokens({ goal: `${first} ${second} ${first} ${second}` })).toEqual([first, second]);
  });

  it("a query's token spans are its distinct tokens in its normalised text, each with its hash", () => {
    const task = fc.record({ goal: text, blocker: fc.option(text, { nil: undefined }), tried: fc.option(text, { nil: undefined }) });
    fc.assert(
      fc.property(task, (row) => {
        const spans = distinctTokenSpans(row);
        const tokens = Array.from(spans.hashes, (hash, index) => {
          const token = spans.text.slice(spans.starts[index], spans.ends[index]);
          expect(hash).toBe(tokenHash(token));
          return token;
        });
        expect(new Set(tokens).size).toBe(tokens.length);
        expect([...tokens].sort()).toEqual(referenceTokens([row.goal, row.blocker, row.tried].filter(Boolean).join(" ")));
      }),
      { numRuns: 500 },
    );
  });

  it.each([3000, 5000])("a stored list of %i tokens sharing their first code units is in code-unit order", (count) => {
    // One run of tokens with one two-unit prefix, with others around it; 5 000 takes the plain sort's path.
    const words = Array.from({ length: count }, (_, index) => `ab${index.toString(36)}`);
    const task = { goal: `${words.join(" ")} zz9 c3po c r2d2 r 😀😀😀 ёлка` };
    const expected = [...distinctTokens(task)].sort();
    expect(storedTokens(task)).toBe(expected.join(" "));
  });

  it("a stored list is the reference token set, distinct, in one string", () => {
    const task = fc.record({ goal: text, blocker: fc.option(text, { nil: undefined }), tried: fc.option(text, { nil: undefined }) });
    fc.assert(
      fc.property(task, (row) => {
        const stored = storedTokens(row);
        const list = stored === "" ? [] : stored.split(" ");
        expect(new Set(list).size).toBe(list.length);
        expect(list).toEqual([...list].sort());
        expect([...list].sort()).toEqual(referenceTokens([row.goal, row.blocker, row.tried].filter(Boolean).join(" ")));
      }),
      { numRuns: 500 },
    );
  });
});

describe("a search's window lists (03 §5.6)", () => {
  const row = { signal_id: "ts_cache", goal: "deploy worker cron", blocker: null, tried: null, learned: null, tokens: null, tokenizer_version: null, list_held: 0 };

  it("computes the list of a row without a current one from its text, again when the text differs, and never holds it", () => {
    const first = completeWindow([row], new Map());
    expect(first).toMatchObject({ kind: "complete", rows: [{ tokens: "cron deploy worker", tokenizer_version: TOKENIZER_VERSION }] });
    expect(first.kind === "complete" && first.held.size).toBe(0);
    const edited = completeWindow([{ ...row, goal: "queue retry" }], new Map());
    expect(edited.kind === "complete" && edited.rows[0]!.tokens).toBe("queue retry");
  });

  it("holds this window's stored lists for the next search, and only those", () => {
    const stored = { ...row, signal_id: "ts_stored", tokens: "kept as stored", tokenizer_version: TOKENIZER_VERSION };
    const first = completeWindow([stored, row], new Map([["ts_gone", hashList("no longer in the window")]]));
    if (first.kind !== "complete") throw new Error("inconsistent window");
    expect([...first.held.keys()]).toEqual(["ts_stored"]);
    expect(first.rows[0]).toMatchObject({ tokens: "kept as stored" });
    // The next window leaves that list out; the held one completes it.
    const next = completeWindow([{ ...stored, tokens: null, list_held: 1 }], first.held);
    expect(next).toMatchObject({ kind: "complete", rows: [{ signal_id: "ts_stored", tokens: "kept as stored", tokenizer_version: TOKENIZER_VERSION }] });
  });

  it("keeps the held lists as they are while the window does not change, and holds anew once it does", () => {
    const stored = (id: string) => ({ ...row, signal_id: id, tokens: `list of ${id}`, tokenizer_version: TOKENIZER_VERSION });
    const heldRow = (id: string) => ({ ...row, signal_id: id, tokens: null, tokenizer_version: TOKENIZER_VERSION, list_held: 1 });
    const first = completeWindow([stored("ts_a"), stored("ts_b"), row], new Map());
    if (first.kind !== "complete") throw new Error("inconsistent window");
    const same = completeWindow([heldRow("ts_a"), heldRow("ts_b"), row], first.held);
    expect(same.kind === "complete" && same.held).toBe(first.held);
    // The same rows again are the same candidates; a row whose fields differ is a new one, with its fields.
    const again = completeWindow([heldRow("ts_a"), heldRow("ts_b"), row], first.held);
    if (again.kind !== "complete" || same.kind !== "complete") throw new Error("inconsistent window");
    expect(again.rows).toHaveLength(3);
    again.rows.forEach((candidate, position) => expect(candidate).toBe(same.rows[position]));
    const edited = completeWindow([{ ...heldRow("ts_a"), learned: "a note" }, heldRow("ts_b"), row], first.held);
    expect(edited.kind === "complete" && edited.rows[0]).toMatchObject({ signal_id: "ts_a", learned: "a note", tokens: "list of ts_a" });
    expect(edited.kind === "complete" && edited.rows[0]).not.toBe(same.rows[0]);
    // A held row that left the window is not held again; a new stored row is.
    const shorter = completeWindow([heldRow("ts_b"), row], first.held);
    expect(shorter.kind === "complete" && [...shorter.held.keys()]).toEqual(["ts_b"]);
    const longer = completeWindow([stored("ts_c"), heldRow("ts_a"), heldRow("ts_b")], first.held);
    expect(longer.kind === "complete" && [...longer.held.keys()]).toEqual(["ts_c", "ts_a", "ts_b"]);
    expect(longer.kind === "complete" && longer.held.get("ts_a")).toBe(first.held.get("ts_a"));
  });

  it("a list left out that the search does not hold is inconsistent, never matched as empty", () => {
    const leftOut = { ...row, signal_id: "ts_unknown", tokens: null, tokenizer_version: TOKENIZER_VERSION, list_held: 1 };
    expect(completeWindow([leftOut], new Map())).toEqual({ kind: "inconsistent" });
  });
});

describe("hashed lists (03 §5.6)", () => {
  const token = fc.stringMatching(/^[a-zа-я0-9]{1,6}$/);

  it("count exactly the common tokens of the merge, on any lists", () => {
    fc.assert(
      fc.property(fc.uniqueArray(token, { maxLength: 30 }), fc.uniqueArray(token, { maxLength: 30 }), (query, list) => {
        const stored = [...list].sort().join(" ");
        const expected = list.filter((item) => query.includes(item)).length;
        expect(commonTokenCounter(spans(query))(hashList(stored))).toBe(expected);
        expect(hashList(stored).hashes.length).toBe(list.length);
      }),
      { numRuns: 1000 },
    );
  });

  it("a hash collision costs a comparison, never a count", () => {
    const [first, second] = collidingPair();
    expect(tokenHash(first)).toBe(tokenHash(second));
    expect(commonTokenCounter(spans([first]))(hashList(second))).toBe(0);
    expect(commonTokenCounter(spans([first, second]))(hashList([first, second].sort().join(" ")))).toBe(2);
    expect(commonTokenCounter(spans([second]))(hashList([first, "zzz"].sort().join(" ")))).toBe(0);
  });
});

describe("a cohort's window index (03 §5.6)", () => {
  // A small vocabulary, so queries and lists share tokens and counts are rarely 0.
  const token = fc.stringMatching(/^[abcабв1]{1,3}$/);
  const list = fc.uniqueArray(token, { maxLength: 40 }).map((tokens) => hashList([...tokens].sort().join(" ")));

  it("counts exactly what probing each list counts, window after window, through rebuilds", () => {
    const index = new WindowIndex();
    const pool = new Map<number, ReturnType<typeof hashList>>();
    fc.assert(
      fc.property(fc.uniqueArray(token, { maxLength: 40 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.boolean(), list), { maxLength: 120 }), (query, rows) => {
        // An id keeps its list unless the row says it changed; the window's ids are distinct, as SQL returns them.
        const window = new Map<number, ReturnType<typeof hashList>>();
        for (const [id, changed, fresh] of rows) {
          const kept = pool.get(id);
          const hashed = kept === undefined || changed ? fresh : kept;
          pool.set(id, hashed);
          window.set(id, hashed);
        }
        const candidates = [...window].map(([id, hashed]) => ({ signal_id: `s${id}`, hashed }));
        const probe = commonTokenCounter(spans(query));
        expect([...index.count(spans(query), candidates)]).toEqual(candidates.map((candidate) => probe(candidate.hashed)));
      }),
      { numRuns: 300 },
    );
  });

  it("an id given twice in one window is counted for each of its lists", () => {
    const index = new WindowIndex();
    const first = hashList("alpha bravo");
    const second = hashList("bravo charlie delta");
    expect([...index.count(spans(["bravo", "delta"]), [{ signal_id: "s", hashed: first }, { signal_id: "s", hashed: second }, { signal_id: "s", hashed: first }])]).toEqual([1, 2, 1]);
    expect([...index.count(spans(["alpha"]), [{ signal_id: "s", hashed: second }])]).toEqual([0]);
  });

  it.each([true, false])("a hash collision costs a comparison, never a count (tokens of one length: %s)", (sameLength) => {
    const [first, second] = collidingPair(sameLength);
    expect(tokenHash(first)).toBe(tokenHash(second));
    const index = new WindowIndex();
    const window = [{ signal_id: "a", hashed: hashList(second) }, { signal_id: "b", hashed: hashList([first, second].sort().join(" ")) }];
    expect([...index.count(spans([first]), window)]).toEqual([0, 1]);
    expect([...index.count(spans([second]), window)]).toEqual([1, 1]);
  });

  it("holds at most about three windows of postings, however many windows it has counted", () => {
    const index = new WindowIndex();
    const window = (round: number) =>
      Array.from({ length: 100 }, (_, row) => ({
        signal_id: `s${round}-${row}`,
        hashed: hashList(Array.from({ length: 50 }, (_, item) => `w${round}x${row}x${item}`).sort().join(" ")),
      }));
    for (let round = 0; round < 40; round += 1) {
      const candidates = window(round);
      expect([...index.count(spans([`w${round}x7x3`]), candidates)].filter((count) => count === 1)).toHaveLength(1);
      expect(index.capacity).toBeLessThanOrEqual(3 * 100 * 50);
    }
  });

  it("holds a bounded number of lists when they have no tokens at all", () => {
    const index = new WindowIndex();
    for (let round = 0; round < 50; round += 1) {
      const candidates = Array.from({ length: 100 }, (_, row) => ({ signal_id: `s${round}-${row}`, hashed: hashList("") }));
      expect([...index.count(spans(["alpha"]), candidates)]).toEqual(candidates.map(() => 0));
      expect(index.entries).toBeLessThanOrEqual(index.capacity);
      expect(index.capacity).toBe(1024);
    }
  });
});

describe("NFKC fast path", () => {
  it("ASCII and the Cyrillic block are NFKC-stable, alone and in every pair", () => {
    const alphabet: string[] = [];
    for (let code = 0; code < 0x80; code += 1) alphabet.push(String.fromCharCode(code));
    for (let code = 0x400; code <= 0x4ff; code += 1) alphabet.push(String.fromCharCode(code));
    for (const first of alphabet) {
      expect(first.normalize("NFKC")).toBe(first);
      for (const second of alphabet) {
        const pair = first + second;
        if (pair.normalize("NFKC") !== pair) expect.fail(`not NFKC-stable: U+${first.charCodeAt(0).toString(16)} U+${second.charCodeAt(0).toString(16)}`);
      }
    }
    expect(nfkc("Ёлка ＡＩ")).toBe("Ёлка AI");
    expect(nfkc("plain ascii и кириллица")).toBe("plain ascii и кириллица");
  });
});
