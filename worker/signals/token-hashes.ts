/**
 * Held lists (03 §5.6) as 32-bit hashes of their tokens, so a search counts a
 * held candidate's common tokens with one probe of a small table per token
 * instead of comparing its characters with the query's. A hash only points:
 * a token is common when it is character for character a query token, which
 * is checked on every hash hit, so a collision can cost a comparison but
 * never change a count.
 *
 * Hashing a list reads its characters once and allocates two arrays, no
 * string per token: the first search of an isolate over a window it has
 * never seen pays about what merging the lists cost, and later ones only
 * the probes.
 */

/** The separator of a stored token list (03 §5.6). */
const SPACE = 0x20;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** A stored list (distinct tokens joined by one space) with each token's hash and where it starts. */
export interface HashedList {
  readonly tokens: string;
  readonly hashes: Int32Array;
  readonly starts: Int32Array;
}

/**
 * A query's distinct tokens as spans of its normalised text, each with its
 * hash (tokenize.ts `distinctTokenSpans`): what a search probes with, without
 * a string per token.
 */
export interface TokenSpans {
  readonly text: string;
  readonly hashes: Int32Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/** FNV-1a over the UTF-16 code units of `text[start, end)`. */
export function hashSpan(text: string, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let index = start; index < end; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), FNV_PRIME);
  return hash | 0;
}

/** A token's hash, as a hashed list holds it. */
export function tokenHash(token: string): number {
  return hashSpan(token, 0, token.length);
}

export function hashList(tokens: string): HashedList {
  if (tokens === "") return { tokens, hashes: new Int32Array(0), starts: new Int32Array(0) };
  let count = 1;
  for (let index = 0; index < tokens.length; index += 1) if (tokens.charCodeAt(index) === SPACE) count += 1;
  const hashes = new Int32Array(count);
  const starts = new Int32Array(count);
  // One pass, the hash folded in as it goes (as hashSpan computes it for the query's tokens).
  let token = 0;
  let hash = FNV_OFFSET;
  for (let index = 0; index < tokens.length; index += 1) {
    const code = tokens.charCodeAt(index);
    if (code === SPACE) {
      hashes[token] = hash;
      token += 1;
      starts[token] = index + 1;
      hash = FNV_OFFSET;
    } else {
      hash = Math.imul(hash ^ code, FNV_PRIME);
    }
  }
  hashes[token] = hash;
  return { tokens, hashes, starts };
}

/**
 * The counter of common tokens between the query's distinct tokens and a
 * hashed list: an open-addressing table of the query's hashes, at most a
 * quarter full, so a probe of a token not in the query usually ends at once.
 */
export function commonTokenCounter(query: TokenSpans): (list: HashedList) => number {
  let size = 16;
  while (size < query.hashes.length * 4) size *= 2;
  const mask = size - 1;
  const slotHash = new Int32Array(size);
  const slotToken = new Int32Array(size).fill(-1); // index into `query`, -1 for an empty slot
  query.hashes.forEach((hash, index) => {
    let slot = hash & mask;
    while (slotToken[slot] !== -1) slot = (slot + 1) & mask;
    slotHash[slot] = hash;
    slotToken[slot] = index;
  });
  return (list) => {
    const { hashes } = list;
    let common = 0;
    for (let token = 0; token < hashes.length; token += 1) {
      const hash = hashes[token]!;
      // Distinct query tokens: at most one can equal this token, but several may share its hash.
      for (let slot = hash & mask; slotToken[slot] !== -1; slot = (slot + 1) & mask) {
        if (slotHash[slot] !== hash) continue;
        if (listTokenEquals(list, token, query, slotToken[slot]!)) {
          common += 1;
          break;
        }
      }
    }
    return common;
  };
}

/** Whether token `index` of `list` is token `token` of `query`, code unit for code unit: what confirms every hash hit. */
export function listTokenEquals(list: HashedList, index: number, query: TokenSpans, token: number): boolean {
  const start = list.starts[index]!;
  const end = index + 1 < list.starts.length ? list.starts[index + 1]! - 1 : list.tokens.length;
  return spansEqual(list.tokens, start, end, query.text, query.starts[token]!, query.ends[token]!);
}

/** Whether `a[aStart, aEnd)` and `b[bStart, bEnd)` are the same code units. */
export function spansEqual(a: string, aStart: number, aEnd: number, b: string, bStart: number, bEnd: number): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let offset = 0; offset < aEnd - aStart; offset += 1) if (a.charCodeAt(aStart + offset) !== b.charCodeAt(bStart + offset)) return false;
  return true;
}

/** The tokens of `spans` as strings, in their order: for the counts that need strings (a list as text, a legacy text). */
export function spanTokens(spans: TokenSpans): string[] {
  // Sized once and filled by index: Array.from over the typed array goes through its iterator (an object per
  // token), and pushing grows the array several times over.
  const tokens = new Array<string>(spans.hashes.length);
  for (let index = 0; index < tokens.length; index += 1) tokens[index] = spans.text.slice(spans.starts[index], spans.ends[index]);
  return tokens;
}

/** A typed array twice as long, holding `array` at its start: how the scratch arrays of the tokeniser and the matcher grow. */
export function doubled(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(array.length * 2);
  larger.set(array);
  return larger;
}
