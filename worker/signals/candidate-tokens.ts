/**
 * Token lists for search candidates that have no current stored list (03 §5.6):
 * rows contributed before migration 0008, or under another tokenizer version.
 * Each is tokenised once per isolate and kept here, so even a window made only
 * of such rows costs its full tokenisation once, not on every search. Rows
 * written since 0008 carry their list and never enter the cache.
 *
 * Keyed by `signal_id`, and the entry remembers the text it was made from: the
 * door never changes a stored signal's text, but a hand-edited row must not be
 * matched on its old tokens.
 */
import { currentTokens, type MatchCandidate } from "./matcher";
import { storedTokens, taskText, TOKENIZER_VERSION } from "./tokenize";

/** Two cohorts' windows of 100 twice over; past that the cache starts again (legacy rows only get fewer). */
const CACHE_MAX = 400;

const cache = new Map<string, { text: string; tokens: string }>();

/** Every row with a current token list: its stored one, or one computed here once. */
export function withTokens<Row extends MatchCandidate & { readonly signal_id: string }>(rows: readonly Row[]): Row[] {
  return rows.map((row) => (currentTokens(row) === null ? { ...row, tokens: cachedTokens(row), tokenizer_version: TOKENIZER_VERSION } : row));
}

function cachedTokens(row: MatchCandidate & { readonly signal_id: string }): string {
  const text = taskText(row);
  const entry = cache.get(row.signal_id);
  if (entry !== undefined && entry.text === text) return entry.tokens;
  if (cache.size >= CACHE_MAX) cache.clear();
  const tokens = storedTokens(row);
  cache.set(row.signal_id, { text, tokens });
  return tokens;
}
