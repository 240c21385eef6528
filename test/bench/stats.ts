/**
 * Order statistics for the benchmark: nearest-rank percentiles over latency
 * samples, and the median with its min–max spread over per-round ratios (the
 * figure `npm run bench` reports for every interleaved comparison, 10 §6).
 */

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** A ratio measured once per round: its median and the spread across rounds. */
export interface RatioSummary {
  median: number;
  min: number;
  max: number;
  rounds: number;
}

export function summariseRatios(ratios: readonly number[]): RatioSummary {
  const sorted = [...ratios].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  // The true median (mean of the two middle rounds for an even count): rounds are few.
  const med = sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median: med, min: sorted[0]!, max: sorted[sorted.length - 1]!, rounds: sorted.length };
}

/** A row's spread field: "0.88–1.02 over 8 rounds" (the value column already shows the median). */
export function formatSpread(summary: RatioSummary): string {
  return `${summary.min.toFixed(2)}–${summary.max.toFixed(2)} over ${summary.rounds} rounds`;
}

/** "0.93× (0.88–1.02, 8 rounds)", for a log line that shows the median too. */
export function formatRatio(summary: RatioSummary): string {
  return `${summary.median.toFixed(2)}× (${summary.min.toFixed(2)}–${summary.max.toFixed(2)}, ${summary.rounds} rounds)`;
}
