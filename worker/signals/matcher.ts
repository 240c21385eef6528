/**
 * The shared-memory matcher (03 §5.2): Jaccard similarity over token sets,
 * computed in integers, with a minimum number of common tokens. Ordering is by
 * similarity only; ties keep the candidates' SQL order (newest first).
 */
import { SEARCH_RESULTS_MAX } from "../contracts/limits";
import { STOP_WORDS } from "./stopwords";
import { commonTokenCounter, doubled, spanTokens, type HashedList } from "./token-hashes";
import { distinctTokenSpans, forEachWord, isDroppedAsShort, taskText, TOKENIZER_VERSION, type CandidateText, type TaskText } from "./tokenize";
import type { IndexedCandidate, WindowIndex } from "./window-index";

/** Jaccard ≥ 15/100. */
const THRESHOLD_NUMERATOR = 15;
const THRESHOLD_DENOMINATOR = 100;
/** The word id of a stop word. */
const STOP = -1;
/** The separator of a stored token list. */
const SPACE = 0x20;

/**
 * A candidate, with the token list stored when it was contributed (03 §5.6)
 * when there is one. A list of another tokenizer version, or none (a row from
 * before migration 0008), means the candidate's text is tokenised here; a
 * candidate with a current list may come without its text (03 §4).
 */
export interface MatchCandidate extends CandidateText {
  readonly signal_id?: string;
  readonly tokens?: string | null;
  readonly tokenizer_version?: number | null;
  /** The current list with its tokens' hashes (a held list, candidate-tokens.ts): counted by probing, not merging. */
  readonly hashed?: HashedList;
}

interface Scored<Candidate> {
  candidate: Candidate;
  common: number;
  union: number;
}

/** How many distinct tokens a candidate has, and how many of them are query tokens. */
interface Counts {
  distinct: number;
  common: number;
}

/**
 * The at most `limit` candidates that match `query`, best first.
 * A candidate matches when `common × 100 ≥ 15 × union` and `common ≥ 2`
 * (`common ≥ 1` for a one-token query); an empty query matches nothing.
 *
 * Hot path of every search. Only the query is tokenised when the candidates
 * carry their stored token lists. With the cohort's `index` and every
 * candidate's list hashed (a search's completed window), common tokens are
 * counted with one probe per query token (window-index.ts). Otherwise a
 * hashed list is counted with one table probe per token of the list, and a
 * list as text is merged with the sorted query.
 */
export function findMatches<Candidate extends MatchCandidate>(
  query: TaskText,
  candidates: readonly Candidate[],
  limit: number = SEARCH_RESULTS_MAX,
  index?: WindowIndex,
): Candidate[] {
  // Distinct spans, in no order: made strings (and sorted) only for the counts over text, which need them.
  const queryTokens = distinctTokenSpans(query);
  const queryCount = queryTokens.hashes.length;
  if (queryCount === 0) return [];
  const minimumCommon = queryCount === 1 ? 1 : 2;
  let textCounter: ((text: string, stamp: number) => Counts) | undefined;
  let hashedCounter: ((list: HashedList) => number) | undefined;
  let queryStrings: string[] | undefined;
  let sortedQuery: string[] | undefined;
  const indexed = index !== undefined && allIndexable(candidates) ? index.count(queryTokens, candidates) : null;

  const matches: Scored<Candidate>[] = [];
  candidates.forEach((candidate, position) => {
    const { distinct, common } = countCandidate(candidate, position);
    const union = queryCount + distinct - common;
    if (common >= minimumCommon && common * THRESHOLD_DENOMINATOR >= THRESHOLD_NUMERATOR * union) {
      matches.push({ candidate, common, union });
    }
  });
  // Array.prototype.sort is stable, so equal similarities keep candidate order.
  matches.sort((a, b) => b.common * a.union - a.common * b.union);
  return matches.slice(0, limit).map((match) => match.candidate);

  function countCandidate(candidate: Candidate, position: number): Counts {
    if (indexed !== null) return { distinct: candidate.hashed!.hashes.length, common: indexed[position]! };
    const stored = currentTokens(candidate);
    const { hashed } = candidate;
    if (hashed !== undefined && hashed.tokens === stored) {
      return { distinct: hashed.hashes.length, common: (hashedCounter ??= commonTokenCounter(queryTokens))(hashed) };
    }
    queryStrings ??= spanTokens(queryTokens);
    if (stored !== null) return countStoredTokens(stored, (sortedQuery ??= [...queryStrings].sort()));
    return (textCounter ??= countTextTokens(queryStrings))(taskText(candidate), position + 1);
  }
}

/** Whether the index may count every candidate. */
function allIndexable<Candidate extends MatchCandidate>(candidates: readonly Candidate[]): candidates is readonly (Candidate & IndexedCandidate)[] {
  return candidates.every(isIndexable);
}

/** Whether the index may count this candidate: its current list, hashed, under its id. */
function isIndexable(candidate: MatchCandidate): candidate is MatchCandidate & IndexedCandidate {
  return typeof candidate.signal_id === "string" && candidate.hashed !== undefined && candidate.hashed.tokens === currentTokens(candidate);
}

/** The candidate's stored token list if it was made by these rules, else null. */
export function currentTokens(candidate: MatchCandidate): string | null {
  return candidate.tokenizer_version === TOKENIZER_VERSION && typeof candidate.tokens === "string" ? candidate.tokens : null;
}

/**
 * A stored list holds distinct tokens in code-unit order, joined by one space
 * (`storedTokens`); `sortedQuery` is the query's tokens in the same order. One
 * merge pass over both counts the common tokens, comparing each list token in
 * place: no substring, no hash, no allocation per token, so the cost is linear
 * in the list's length whatever its words are.
 */
function countStoredTokens(tokens: string, sortedQuery: readonly string[]): Counts {
  if (tokens === "") return { distinct: 0, common: 0 };
  let distinct = 0;
  let common = 0;
  let next = 0; // the first query token not below the current list token
  let start = 0;
  for (;;) {
    // A plain scan: `indexOf` per token costs more than the token's characters.
    let end = start;
    while (end < tokens.length && tokens.charCodeAt(end) !== SPACE) end += 1;
    distinct += 1;
    while (next < sortedQuery.length) {
      const order = compareSpan(tokens, start, end, sortedQuery[next]!);
      if (order > 0) next += 1;
      else {
        if (order === 0) {
          common += 1;
          next += 1;
        }
        break;
      }
    }
    if (end === tokens.length) return { distinct, common };
    start = end + 1;
  }
}

/** `text.slice(start, end)` compared with `other` by UTF-16 code units (negative, 0, positive), without the slice. */
function compareSpan(text: string, start: number, end: number, other: string): number {
  const length = end - start;
  const shorter = Math.min(length, other.length);
  for (let index = 0; index < shorter; index += 1) {
    const difference = text.charCodeAt(start + index) - other.charCodeAt(index);
    if (difference !== 0) return difference;
  }
  return length - other.length;
}

/**
 * Counting over a candidate's text, for candidates without a current stored
 * list: each word costs one map lookup. The map gives every word an id (stop
 * words -1, query tokens 0…|Q|-1, other words the next free id), and a stamp
 * per id remembers the last candidate that counted it, so a candidate's
 * distinct tokens are counted without a set per candidate.
 */
function countTextTokens(queryTokens: readonly string[]): (text: string, stamp: number) => Counts {
  const wordIds = new Map<string, number>();
  for (const word of STOP_WORDS) wordIds.set(word, STOP);
  for (const token of queryTokens) wordIds.set(token, wordIds.size - STOP_WORDS.size);
  let stamps = new Int32Array(256);
  return (text, stamp) => {
    let distinct = 0;
    let common = 0;
    forEachWord(text, (word) => {
      if (isDroppedAsShort(word)) return;
      let id = wordIds.get(word);
      if (id === STOP) return;
      if (id === undefined) {
        id = wordIds.size - STOP_WORDS.size;
        wordIds.set(word, id);
        if (id >= stamps.length) stamps = doubled(stamps);
      }
      if (stamps[id] === stamp) return;
      stamps[id] = stamp;
      distinct += 1;
      if (id < queryTokens.length) common += 1;
    });
    return { distinct, common };
  };
}
