/**
 * Text → token set (03 §5.1). Deliberately literal: no stemming, no
 * transliteration, no models. The same rules tokenise the query and every
 * candidate, so both sides are always compared alike.
 *
 * A token is a maximal run of code points in the Unicode categories Letter,
 * Mark or Number. Scanning with a `\p{…}` regex costs most of a search's time
 * in V8, so the scanner classifies ASCII and the Cyrillic block directly and
 * asks the regex only about other code points; a property test proves it
 * equal to the plain regex definition (test/node/matcher.test.ts). Every
 * stop word has at least three code points, so rule 7 is checked first.
 */
import { SHORT_TERM_ALLOWLIST, STOP_WORDS } from "./stopwords";
import { doubled, hashSpan, spansEqual, spanTokens, tokenHash, type TokenSpans } from "./token-hashes";

/** The task fields that are matched; `learned` never is. */
export interface TaskText {
  goal: string;
  blocker?: string | null;
  tried?: string | null;
}

/** The definition of a token character: Unicode Letter, Mark or Number. */
const TOKEN_CHARACTER = /^[\p{L}\p{M}\p{N}]$/u;
const MIN_CODE_POINTS = 3;
const CYRILLIC_THOUSANDS_SIGN = 0x0482; // the one symbol (So) in the Cyrillic block

/**
 * A task's text as a search candidate carries it: a candidate matched on its
 * stored list comes without its text (03 §4), so every field may be absent.
 */
export interface CandidateText {
  readonly goal?: string | null;
  readonly blocker?: string | null;
  readonly tried?: string | null;
}

/** Rule 1: goal, blocker and tried joined by one space (absent ones skipped). */
export function taskText(task: CandidateText): string {
  const parts = [task.goal, task.blocker, task.tried].filter((part): part is string => typeof part === "string");
  return parts.join(" ");
}

export function taskTokens(task: CandidateText): Set<string> {
  return tokenSet(taskText(task));
}

/**
 * The version of these rules that stored token lists were computed with
 * (09 §3, 0008). Bump it with any change to the rules or the stop lists:
 * lists of another version are then ignored and recomputed, never trusted.
 */
export const TOKENIZER_VERSION = 1;

/**
 * A task's token set as it is stored with its signal: the distinct tokens
 * sorted by UTF-16 code units (the order of `Array.prototype.sort` and of `<`
 * on strings), joined by one space (a token never contains a space, 03 §5.1
 * rule 5). The empty string is the empty set. Sorted, so the matcher can
 * intersect it with the sorted query tokens in one pass without splitting it.
 */
export function storedTokens(task: CandidateText): string {
  return sortedTokens(task).join(" ");
}

/**
 * A task's distinct tokens in code-unit order, as a stored list holds them:
 * `distinctTokens`, sorted as `Array.prototype.sort` sorts strings.
 *
 * Sorting 800 Cyrillic strings with string comparisons was a tenth of a
 * worst contribution's CPU time. The spans are ordered instead by their first
 * two code units (a number, sorted natively; a one-unit token counts its
 * second as 0, before every code unit a token can hold), and only tokens
 * sharing both are compared as strings: the same order, with few string
 * comparisons. Far more tokens than a task's text allows fall back to the
 * plain sort, so the order never depends on a bound.
 */
export function sortedTokens(task: CandidateText): string[] {
  const spans = distinctTokenSpans(task);
  const { text, starts, ends } = spans;
  const count = starts.length;
  if (count >= SORT_INDEX_LIMIT) return spanTokens(spans).sort();
  const keys = new Float64Array(count);
  for (let token = 0; token < count; token += 1) {
    const start = starts[token]!;
    const second = ends[token]! - start > 1 ? text.charCodeAt(start + 1) : 0;
    keys[token] = (text.charCodeAt(start) * 0x10000 + second) * SORT_INDEX_LIMIT + token;
  }
  keys.sort();
  const tokens = new Array<string>(count);
  for (let place = 0; place < count; place += 1) {
    const token = keys[place]! % SORT_INDEX_LIMIT;
    tokens[place] = text.slice(starts[token], ends[token]);
  }
  // Tokens that share their first two code units, in order among themselves.
  for (let runStart = 0; runStart < count; ) {
    const prefix = Math.floor(keys[runStart]! / SORT_INDEX_LIMIT);
    let runEnd = runStart + 1;
    while (runEnd < count && Math.floor(keys[runEnd]! / SORT_INDEX_LIMIT) === prefix) runEnd += 1;
    if (runEnd - runStart > 1) tokens.splice(runStart, runEnd - runStart, ...tokens.slice(runStart, runEnd).sort());
    runStart = runEnd;
  }
  return tokens;
}

/** Token indices fit below this in a sort key: (two code units) × 4096 + index stays an exact double (< 2^53). */
const SORT_INDEX_LIMIT = 4096;

/**
 * A task's distinct tokens in the order first seen, as strings: the spans of
 * `distinctTokenSpans`, sliced.
 */
export function distinctTokens(task: CandidateText): string[] {
  return spanTokens(distinctTokenSpans(task));
}

/** Scratch of `distinctTokenSpans`, grown as needed and reused: a call runs to its end synchronously, so no two share it. */
let wordStarts = new Int32Array(256);
let wordEnds = new Int32Array(256);
let wordHashes = new Int32Array(256);
let seenSlots = new Int32Array(512);

/** Stop words by hash, so a word is checked without becoming a string; longer words are never looked up. */
const STOP_WORDS_BY_HASH = new Map<number, string[]>();
let stopWordMax = 0;
for (const word of STOP_WORDS) {
  const hash = tokenHash(word);
  STOP_WORDS_BY_HASH.set(hash, [...(STOP_WORDS_BY_HASH.get(hash) ?? []), word]);
  stopWordMax = Math.max(stopWordMax, word.length);
}

/**
 * A task's distinct tokens in the order first seen, as spans of its
 * normalised text with their hashes: `taskTokens` without a string per token
 * (a 4 000-character query has 800, 44 KB a search) or a `Set` (whose table
 * it grows five times over). Rules 6 and 7 are checked on the span (a word
 * becomes a string only when it is short enough for the allow-list to
 * decide); duplicates are found through a table of hashes, every hit
 * compared code unit for code unit, so a collision never drops a token. A
 * search needs no order, and sorting would cost more than finding them.
 */
export function distinctTokenSpans(task: CandidateText): TokenSpans {
  return distinctSpansOf(taskText(task));
}

/** `distinctTokenSpans` of a text (rules 2–7): the one tokeniser of the query, stored lists and `tokenSet`. */
function distinctSpansOf(source: string): TokenSpans {
  const text = normalise(source);
  let words = 0;
  forEachWordSpan(text, (start, end) => {
    if (isShortSpan(text, start, end) && !SHORT_TERM_ALLOWLIST.has(text.slice(start, end))) return;
    const hash = hashSpan(text, start, end);
    if (end - start <= stopWordMax && isStopSpan(text, start, end, hash)) return;
    if (words === wordStarts.length) growScratch();
    wordStarts[words] = start;
    wordEnds[words] = end;
    wordHashes[words] = hash;
    words += 1;
  });
  let size = 16;
  while (size < words * 2) size *= 2;
  if (seenSlots.length < size) seenSlots = new Int32Array(size);
  const mask = size - 1;
  seenSlots.fill(-1, 0, size); // index of a kept word, -1 for an empty slot
  let kept = 0;
  for (let word = 0; word < words; word += 1) {
    const hash = wordHashes[word]!;
    const start = wordStarts[word]!;
    const end = wordEnds[word]!;
    let slot = hash & mask;
    let seen = false;
    for (let other = seenSlots[slot]!; other !== -1; slot = (slot + 1) & mask, other = seenSlots[slot]!) {
      if (wordHashes[other] === hash && spansEqual(text, start, end, text, wordStarts[other]!, wordEnds[other]!)) {
        seen = true;
        break;
      }
    }
    if (seen) continue;
    seenSlots[slot] = kept;
    // kept ≤ word: only words already read are overwritten.
    wordStarts[kept] = start;
    wordEnds[kept] = end;
    wordHashes[kept] = hash;
    kept += 1;
  }
  return { text, hashes: wordHashes.slice(0, kept), starts: wordStarts.slice(0, kept), ends: wordEnds.slice(0, kept) };
}

function growScratch(): void {
  wordStarts = doubled(wordStarts);
  wordEnds = doubled(wordEnds);
  wordHashes = doubled(wordHashes);
}

function isStopSpan(text: string, start: number, end: number, hash: number): boolean {
  const candidates = STOP_WORDS_BY_HASH.get(hash);
  if (candidates === undefined) return false;
  for (const word of candidates) if (spansEqual(text, start, end, word, 0, word.length)) return true;
  return false;
}

/** The token set of `text` (03 §5.1): the spans of the one tokeniser, as strings. */
export function tokenSet(text: string): Set<string> {
  return new Set(spanTokens(distinctSpansOf(text)));
}

/**
 * Calls `onWord` for every run of letters, marks and numbers of the normalised
 * text (rules 2–5), before the stop-word and length rules. The matcher applies
 * those rules itself, folded into the one map lookup it needs per word anyway.
 */
export function forEachWord(text: string, onWord: (word: string) => void): void {
  const normalised = normalise(text);
  forEachWordSpan(normalised, (start, end) => onWord(normalised.slice(start, end)));
}

/** Rules 2–4: NFKC, lower case, ё → е. */
function normalise(text: string): string {
  return nfkc(text).toLowerCase().replaceAll("ё", "е");
}

/** Calls `onWord` with the bounds of every run of letters, marks and numbers of normalised `text` (rule 5). */
function forEachWordSpan(text: string, onWord: (start: number, end: number) => void): void {
  let start = -1;
  let index = 0;
  while (index < text.length) {
    const codePoint = text.codePointAt(index)!;
    if (isTokenCodePoint(codePoint)) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      onWord(start, index);
      start = -1;
    }
    index += codePoint > 0xffff ? 2 : 1;
  }
  if (start >= 0) onWord(start, text.length);
}

/**
 * Text made only of ASCII and the Cyrillic block is already in NFKC (a test
 * checks every character and every pair), and it is most of what visitors
 * write; skipping the ICU call for it is a cheap win on the search path.
 */
const OUTSIDE_NFKC_STABLE_RANGES = /[^\u0000-\u007f\u0400-\u04ff]/;

export function nfkc(text: string): string {
  return OUTSIDE_NFKC_STABLE_RANGES.test(text) ? text.normalize("NFKC") : text;
}

function isTokenCodePoint(codePoint: number): boolean {
  if (codePoint < 0x80) {
    return (codePoint >= 0x61 && codePoint <= 0x7a) || (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x41 && codePoint <= 0x5a);
  }
  if (codePoint >= 0x0400 && codePoint <= 0x04ff) return codePoint !== CYRILLIC_THOUSANDS_SIGN;
  return TOKEN_CHARACTER.test(String.fromCodePoint(codePoint));
}

/** Rule 7: shorter than three code points and not an allow-listed technical term. */
export function isDroppedAsShort(word: string): boolean {
  return isShortSpan(word, 0, word.length) && !SHORT_TERM_ALLOWLIST.has(word);
}

/**
 * Whether `text[start, end)` has fewer than three code points; counted only
 * for short spans, where it decides. Counted over code units (a low surrogate
 * after a high one is the same code point) rather than with the string
 * iterator, which allocates a string per code point outside Latin-1: 3 200
 * of them for a 4 000-character Cyrillic task.
 */
function isShortSpan(text: string, start: number, end: number): boolean {
  if (end - start >= MIN_CODE_POINTS * 2) return false; // ≥ 3 code points for sure
  let count = 0;
  for (let index = start; index < end; index += 1) {
    const unit = text.charCodeAt(index);
    const continuesPair = unit >= 0xdc00 && unit <= 0xdfff && index > start && isHighSurrogate(text.charCodeAt(index - 1));
    if (!continuesPair) count += 1;
  }
  return count < MIN_CODE_POINTS;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
