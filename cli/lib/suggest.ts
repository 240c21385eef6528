/**
 * "Did you mean …?" for values commander does not know about (flag names of
 * `magnt flags enable|disable`): the closest candidate by edit distance,
 * compared case-insensitively, because `dialogue_enabled` for
 * `DIALOGUE_ENABLED` is the most likely slip. Commander suggests options and
 * subcommands itself.
 */

/** Optimal-string-alignment distance (a swap of two neighbours counts as one edit). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `word` (case-insensitive), if it is close enough
 * to be a slip: at most a third of the word's length in edits (at least one).
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  if (best === undefined) return undefined;
  return best.distance <= Math.max(1, Math.floor(typed.length / 3)) ? best.candidate : undefined;
}
