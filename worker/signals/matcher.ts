/**
 * The shared-memory matcher (03 §5.2): Jaccard similarity over token sets,
 * computed in integers, with a minimum number of common tokens. Ordering is by
 * similarity only; ties keep the candidates' SQL order (newest first).
 */
import { SEARCH_RESULTS_MAX } from "../contracts/limits";
import { STOP_WORDS } from "./stopwords";
import { forEachWord, isDroppedAsShort, taskText, taskTokens, type TaskText } from "./tokenize";

/** Jaccard ≥ 15/100. */
const THRESHOLD_NUMERATOR = 15;
const THRESHOLD_DENOMINATOR = 100;

interface Scored<Candidate> {
  candidate: Candidate;
  common: number;
  union: number;
}

const STOP = 0;
const QUERY = 1;

/**
 * The at most `limit` candidates that match `query`, best first.
 * A candidate matches when `common × 100 ≥ 15 × union` and `common ≥ 2`
 * (`common ≥ 1` for a one-token query); an empty query matches nothing.
 */
export function findMatches<Candidate extends TaskText>(
  query: TaskText,
  candidates: readonly Candidate[],
  limit: number = SEARCH_RESULTS_MAX,
): Candidate[] {
  const queryTokens = taskTokens(query);
  if (queryTokens.size === 0) return [];
  const minimumCommon = queryTokens.size === 1 ? 1 : 2;

  // One lookup per candidate word answers both "stop word?" and "query token?"
  // (query tokens are never stop words); this is the hot path of a search.
  const wordClass = new Map<string, number>();
  for (const word of STOP_WORDS) wordClass.set(word, STOP);
  for (const token of queryTokens) wordClass.set(token, QUERY);

  const matches: Scored<Candidate>[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    seen.clear();
    let common = 0;
    forEachWord(taskText(candidate), (word) => {
      if (isDroppedAsShort(word)) return;
      const kind = wordClass.get(word);
      if (kind === STOP) return;
      const before = seen.size;
      seen.add(word);
      if (kind === QUERY && seen.size > before) common += 1;
    });
    const union = queryTokens.size + seen.size - common;
    if (common >= minimumCommon && common * THRESHOLD_DENOMINATOR >= THRESHOLD_NUMERATOR * union) {
      matches.push({ candidate, common, union });
    }
  }
  // Array.prototype.sort is stable, so equal similarities keep candidate order.
  matches.sort((a, b) => b.common * a.union - a.common * b.union);
  return matches.slice(0, limit).map((match) => match.candidate);
}
