/**
 * The token lists a search's candidates are matched on (03 §5.6), and the two
 * things this isolate keeps of them between searches:
 *
 * - **Held lists.** The stored lists of each cohort's last window, by signal
 *   id. The next search binds those ids to its window query, and D1 leaves
 *   their lists out (`list_held`), so a search decodes only the lists it has
 *   not seen yet — typically none, or the latest contribution's. A window of
 *   100 maximum-length signals carries about 400 000 characters of lists;
 *   decoding them on every search cost twice the platform's CPU budget in
 *   collections alone (decision 206). Safe because a stored list never
 *   changes (0008 is insert-or-ignore and nothing updates it) and signal ids
 *   are random UUIDs never reused: a list held by id is the list stored.
 * - **Legacy lists.** Rows without a current stored list (contributed before
 *   0008, or under another tokenizer version) always come with their text;
 *   each is tokenised once per isolate and kept here, keyed by `signal_id` and
 *   checked against the text it was made from (the door never changes a
 *   stored signal's text, but a hand-edited row must not be matched on its
 *   old tokens).
 *
 * `completeWindow` decides, given a snapshot; `windowLists` holds the state.
 * Concurrent searches each work from the snapshot they started with, and the
 * last to finish leaves its window: every held list is a stored fact, so
 * either is correct.
 */
import { currentTokens } from "./matcher";
import type { SignalCandidateRow } from "./signal-store";
import { hashList, type HashedList } from "./token-hashes";
import { storedTokens, TOKENIZER_VERSION } from "./tokenize";
import { WindowIndex } from "./window-index";

/** A window row with its current list, hashed: what the matcher is given (03 §5.6). */
export interface SearchCandidate extends SignalCandidateRow {
  readonly tokens: string;
  readonly tokenizer_version: number;
  readonly hashed: HashedList;
}

/** One cohort's held lists: signal id → list, for the rows of its last window. */
export type HeldLists = ReadonlyMap<string, HashedList>;

/** A completed window: every row with its current list, hashed, and what to hold next. */
export type CompletedWindow = { readonly kind: "complete"; readonly rows: SearchCandidate[]; readonly held: HeldLists } | { readonly kind: "inconsistent" };

/**
 * Every row of `rows` with its current list, hashed — held, as stored, or
 * computed from its text once per isolate — and the lists to hold for the
 * next search: this window's stored ones. A row whose list D1 left out
 * although `held` lacks it is an answer to another question than the one
 * asked: `inconsistent`, which the search reports as a storage fault.
 */
export function completeWindow(rows: readonly SignalCandidateRow[], held: HeldLists): CompletedWindow {
  const completed: SearchCandidate[] = [];
  const stored: SearchCandidate[] = []; // the rows whose lists are held next
  let decoded = false;
  for (const row of rows) {
    let hashed: HashedList | undefined;
    if (row.list_held === 1) {
      hashed = held.get(row.signal_id);
      if (hashed === undefined) return { kind: "inconsistent" };
    } else {
      const tokens = currentTokens(row);
      if (tokens !== null) {
        hashed = hashList(tokens);
        decoded = true;
      }
    }
    const candidate = withList(row, hashed ?? legacyList(row));
    completed.push(candidate);
    if (hashed !== undefined) stored.push(candidate);
  }
  // Every stored list was held and all held ones are in this window (ids are distinct): what to hold next is
  // exactly what is held, so the same map is kept, and with it the ids already bound (`heldIdsOf`).
  if (!decoded && stored.length === held.size) return { kind: "complete", rows: completed, held };
  return { kind: "complete", rows: completed, held: new Map(stored.map((candidate) => [candidate.signal_id, candidate.hashed])) };
}

/**
 * The last candidate made with each list: a row that comes back as it was
 * (a held row's text left out, or the same short text) is the same
 * candidate, so a search over an unchanged window makes none.
 */
const candidateOf = new WeakMap<HashedList, SearchCandidate>();

/**
 * The row with its list, built field by field: spreading an object D1's JSON
 * answer made costs about 1 µs and several hundred bytes per row in V8, a
 * tenth of a millisecond per search for nothing. Candidates are never
 * mutated, so one made before for the same list and the same fields is
 * returned instead.
 */
function withList(row: SignalCandidateRow, hashed: HashedList): SearchCandidate {
  const known = candidateOf.get(hashed);
  if (known !== undefined && sameFields(known, row)) return known;
  const candidate = made(row, hashed);
  candidateOf.set(hashed, candidate);
  return candidate;
}

function sameFields(candidate: SearchCandidate, row: SignalCandidateRow): boolean {
  return (
    candidate.signal_id === row.signal_id &&
    candidate.list_held === row.list_held &&
    candidate.goal === row.goal &&
    candidate.blocker === row.blocker &&
    candidate.tried === row.tried &&
    candidate.learned === row.learned
  );
}

function made(row: SignalCandidateRow, hashed: HashedList): SearchCandidate {
  return {
    signal_id: row.signal_id,
    tokens: hashed.tokens,
    tokenizer_version: TOKENIZER_VERSION,
    list_held: row.list_held,
    goal: row.goal,
    blocker: row.blocker,
    tried: row.tried,
    learned: row.learned,
    hashed,
  };
}

/** Each cohort's held lists (keyed by the test flag); replaced, never mutated, so a snapshot stays whole. */
const heldByCohort = new Map<boolean, HeldLists>();
const NONE: HeldLists = new Map();
/** Each cohort's index of its windows' lists (window-index.ts): changed only inside the matcher's one synchronous call. */
const indexByCohort = new Map<boolean, WindowIndex>();

/**
 * One search's view of its cohort's lists: the ids to bind, then the window
 * completed (and remembered), and the cohort's index to match it with.
 */
export function windowLists(isTest: boolean): { heldIds: readonly string[]; complete(rows: readonly SignalCandidateRow[]): CompletedWindow; index: WindowIndex } {
  const held = heldByCohort.get(isTest) ?? NONE;
  let index = indexByCohort.get(isTest);
  if (index === undefined) indexByCohort.set(isTest, (index = new WindowIndex()));
  return {
    heldIds: heldIdsOf(held),
    index,
    complete(rows) {
      const window = completeWindow(rows, held);
      if (window.kind === "complete") heldByCohort.set(isTest, window.held);
      return window;
    },
  };
}

/**
 * The ids of `held`, one array per map (maps are never mutated): while the
 * window does not change, every search binds the same array, so the storage
 * layer encodes it once (storage/signals/sql.ts).
 */
const heldIds = new WeakMap<HeldLists, readonly string[]>();

function heldIdsOf(held: HeldLists): readonly string[] {
  let ids = heldIds.get(held);
  if (ids === undefined) heldIds.set(held, (ids = Object.freeze([...held.keys()])));
  return ids;
}

/** Two cohorts' windows of 100 twice over; past that the cache starts again (legacy rows only get fewer). */
const LEGACY_CACHE_MAX = 400;

/** A legacy row's list, with the fields it was made from (compared field by field: no joined text per search). */
interface LegacyEntry {
  readonly goal: string | null;
  readonly blocker: string | null;
  readonly tried: string | null;
  readonly list: HashedList;
}

const legacyCache = new Map<string, LegacyEntry>();

function legacyList(row: SignalCandidateRow): HashedList {
  const { goal, blocker, tried } = row;
  const entry = legacyCache.get(row.signal_id);
  if (entry !== undefined && entry.goal === goal && entry.blocker === blocker && entry.tried === tried) return entry.list;
  if (legacyCache.size >= LEGACY_CACHE_MAX) legacyCache.clear();
  const list = hashList(storedTokens(row));
  legacyCache.set(row.signal_id, { goal, blocker, tried, list });
  return list;
}
