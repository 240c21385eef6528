/**
 * An inverted index of a cohort's window lists (03 §5.6), kept by the isolate
 * between searches: for each token hash, every (list, token) of the indexed
 * lists with that hash. A search then counts its common tokens with one
 * probe per *query* token plus the postings it hits, instead of one probe per
 * token of every candidate: over a window of 100 maximum-length signals that
 * is 800 probes instead of 80 000 (decision 209). A search visits only the
 * postings of its own tokens' hashes: when every candidate holds every query
 * token, the most a search can hit, that is one comparison per candidate
 * token, what the per-candidate probing cost.
 *
 * Exactness: a hash only points. A posting counts when its token is, code
 * unit for code unit, the query token (checked on every hit), so a collision
 * costs a comparison and never changes a count. Both sides are distinct token
 * lists, so a candidate's count is exactly |query ∩ list|.
 *
 * Identity: a list is indexed under its candidate's `signal_id` and its
 * `HashedList` object. Held lists keep their object between searches
 * (candidate-tokens.ts), so a window that did not change costs one map
 * lookup per candidate; a list that is not the object indexed under its id
 * (a new row, a legacy row whose text was edited) is indexed as a new entry.
 * Entries of lists that left the window stay until the next rebuild: their
 * postings are compared like any other (a candidate's count is read from its
 * own entry only), and two concurrent searches over windows a contribution
 * apart both count right without re-indexing anything.
 *
 * Bounds: when a window's new lists do not fit, the index is rebuilt from
 * that window alone, with room for half as much again (at least 1 024
 * postings, and never more entries than postings). So it holds at most about
 * three windows' postings — 28 bytes each, 3.5 MB of typed arrays for 100
 * maximum-length signals — and a window that moves by one contribution at a
 * time is rebuilt only every few dozen contributions. The stale postings a
 * search may visit are bounded by the same room.
 *
 * Concurrency: `count` indexes the window and counts in one synchronous call,
 * so no other search can change the index between the two.
 */
import { listTokenEquals, type HashedList, type TokenSpans } from "./token-hashes";

/** A candidate as the index sees it: its id, and its current list with the tokens' hashes. */
export interface IndexedCandidate {
  readonly signal_id: string;
  readonly hashed: HashedList;
}

const EMPTY = -1;

export class WindowIndex {
  /** signal id → the entry its current list is indexed under. */
  private readonly entryOf = new Map<string, number>();
  /** entry → its list. */
  private lists: HashedList[] = [];

  /** Postings: entry, token index within its list, and the next posting of the same hash (or EMPTY). */
  private postingEntry = new Int32Array(0);
  private postingToken = new Int32Array(0);
  private postingNext = new Int32Array(0);
  private postings = 0;

  /** Open addressing on the token hash, at most half full: the hash and its first posting (EMPTY: a free slot). */
  private slotHash = new Int32Array(0);
  private slotHead = new Int32Array(0);

  constructor() {
    this.reset(0);
  }

  /** The postings the index has room for (28 bytes of typed arrays each): what it holds in memory. */
  get capacity(): number {
    return this.postingEntry.length;
  }

  /** The lists it holds, of this window and earlier ones (never more than `capacity`). */
  get entries(): number {
    return this.lists.length;
  }

  /**
   * For each candidate, how many of `query`'s tokens its list holds. `query`
   * must be distinct tokens (as `distinctTokenSpans` gives). The index
   * afterwards holds every candidate's list, for the next search.
   */
  count(query: TokenSpans, candidates: readonly IndexedCandidate[]): Int32Array {
    const entries = this.index(candidates);
    const perEntry = new Int32Array(this.lists.length);
    for (let token = 0; token < query.hashes.length; token += 1) {
      for (let posting = this.slotHead[this.slotOf(query.hashes[token]!)]!; posting !== EMPTY; posting = this.postingNext[posting]!) {
        const entry = this.postingEntry[posting]!;
        if (listTokenEquals(this.lists[entry]!, this.postingToken[posting]!, query, token)) perEntry[entry] = perEntry[entry]! + 1;
      }
    }
    const counts = new Int32Array(candidates.length);
    for (let position = 0; position < candidates.length; position += 1) counts[position] = perEntry[entries[position]!]!;
    return counts;
  }

  /** Indexes what of `candidates` is not indexed yet; returns each one's entry. */
  private index(candidates: readonly IndexedCandidate[]): Int32Array {
    const entries = new Int32Array(candidates.length);
    let windowPostings = 0;
    let newPostings = 0;
    candidates.forEach((candidate, position) => {
      const entry = this.entryOf.get(candidate.signal_id);
      const known = entry !== undefined && this.lists[entry] === candidate.hashed;
      entries[position] = known ? entry : EMPTY;
      windowPostings += candidate.hashed.hashes.length;
      if (!known) newPostings += candidate.hashed.hashes.length;
    });
    // No room for the new lists (or more entries than that room, which lists without tokens could otherwise grow
    // without bound): start again from this window alone, with room for half as much again.
    if (this.postings + newPostings > this.postingEntry.length || this.lists.length + candidates.length > this.postingEntry.length) {
      this.reset(windowPostings + (windowPostings >> 1));
      entries.fill(EMPTY);
    }
    candidates.forEach((candidate, position) => {
      let entry = entries[position]!;
      if (entry === EMPTY) {
        // Indexed earlier in this call when an id appears twice with one list.
        const earlier = this.entryOf.get(candidate.signal_id);
        entry = earlier !== undefined && this.lists[earlier] === candidate.hashed ? earlier : this.add(candidate);
        entries[position] = entry;
      }
    });
    return entries;
  }

  /** Indexes one list, in the room `index` made for it. */
  private add(candidate: IndexedCandidate): number {
    const entry = this.lists.length;
    this.lists.push(candidate.hashed);
    this.entryOf.set(candidate.signal_id, entry);
    const { hashes } = candidate.hashed;
    for (let token = 0; token < hashes.length; token += 1) {
      const hash = hashes[token]!;
      const slot = this.slotOf(hash);
      if (this.slotHead[slot] === EMPTY) this.slotHash[slot] = hash;
      const posting = this.postings++;
      this.postingEntry[posting] = entry;
      this.postingToken[posting] = token;
      this.postingNext[posting] = this.slotHead[slot]!;
      this.slotHead[slot] = posting;
    }
    return entry;
  }

  /** The table slot of `hash`: the one holding it, or the free slot where it belongs. */
  private slotOf(hash: number): number {
    const mask = this.slotHash.length - 1;
    let slot = hash & mask;
    while (this.slotHead[slot] !== EMPTY && this.slotHash[slot] !== hash) slot = (slot + 1) & mask;
    return slot;
  }

  /**
   * Empty, with room for `capacity` postings (a power of two, at least 1024)
   * and a table twice that size, so it is never more than half full.
   */
  private reset(capacity: number): void {
    let size = 1024;
    while (size < capacity) size *= 2;
    this.entryOf.clear();
    this.lists = [];
    this.postingEntry = new Int32Array(size);
    this.postingToken = new Int32Array(size);
    this.postingNext = new Int32Array(size);
    this.postings = 0;
    this.slotHash = new Int32Array(size * 2);
    this.slotHead = new Int32Array(size * 2).fill(EMPTY);
  }
}
