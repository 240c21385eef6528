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
import { isStopWord, SHORT_TERM_ALLOWLIST } from "./stopwords";
import { tokenHash } from "./token-hashes";

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
 * `distinctTokens`, sorted.
 */
export function sortedTokens(task: CandidateText): string[] {
  return distinctTokens(task).sort();
}

/**
 * A task's distinct tokens in the order first seen: the token set of
 * `taskTokens` without a `Set` (whose table a 4 000-character query grows
 * five times over), deduplicated in place through a table of the tokens'
 * hashes (every hit compared, so a collision never drops a token). A search
 * needs no order: sorting 800 Cyrillic tokens costs seven times what
 * finding them does.
 */
export function distinctTokens(task: CandidateText): string[] {
  const tokens: string[] = [];
  forEachToken(taskText(task), (token) => tokens.push(token));
  let size = 16;
  while (size < tokens.length * 2) size *= 2;
  const mask = size - 1;
  const slots = new Int32Array(size).fill(-1); // index of a kept token, -1 for an empty slot
  let kept = 0;
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    let slot = tokenHash(token) & mask;
    while (slots[slot] !== -1 && tokens[slots[slot]!] !== token) slot = (slot + 1) & mask;
    if (slots[slot] !== -1) continue; // seen before
    slots[slot] = kept;
    tokens[kept++] = token; // kept ≤ index: only tokens already read are overwritten
  }
  tokens.length = kept;
  return tokens;
}

export function tokenSet(text: string): Set<string> {
  const tokens = new Set<string>();
  forEachToken(text, (token) => tokens.add(token));
  return tokens;
}

/** Calls `onToken` for every kept token of `text`, in order, duplicates included (rules 2–7). */
function forEachToken(text: string, onToken: (token: string) => void): void {
  forEachWord(text, (word) => {
    if (isDroppedAsShort(word) || isStopWord(word)) return;
    onToken(word);
  });
}

/**
 * Calls `onWord` for every run of letters, marks and numbers of the normalised
 * text (rules 2–5), before the stop-word and length rules. The matcher applies
 * those rules itself, folded into the one map lookup it needs per word anyway.
 */
export function forEachWord(text: string, onWord: (word: string) => void): void {
  const normalised = nfkc(text).toLowerCase().replaceAll("ё", "е");
  let start = -1;
  let index = 0;
  while (index < normalised.length) {
    const codePoint = normalised.codePointAt(index)!;
    if (isTokenCodePoint(codePoint)) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      onWord(normalised.slice(start, index));
      start = -1;
    }
    index += codePoint > 0xffff ? 2 : 1;
  }
  if (start >= 0) onWord(normalised.slice(start));
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
  return codePointLength(word) < MIN_CODE_POINTS && !SHORT_TERM_ALLOWLIST.has(word);
}

/**
 * Length in code points; only counted for short words, where it decides.
 * Counted over code units (a low surrogate after a high one is the same code
 * point) rather than with the string iterator, which allocates a string per
 * code point outside Latin-1: 3 200 of them for a 4 000-character Cyrillic task.
 */
function codePointLength(word: string): number {
  if (word.length >= MIN_CODE_POINTS * 2) return MIN_CODE_POINTS; // ≥ 3 code points for sure
  let count = 0;
  for (let index = 0; index < word.length; index += 1) {
    const unit = word.charCodeAt(index);
    const continuesPair = unit >= 0xdc00 && unit <= 0xdfff && index > 0 && isHighSurrogate(word.charCodeAt(index - 1));
    if (!continuesPair) count += 1;
  }
  return count;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
