/**
 * Fuzz settings (10 §5): runs per property from `FUZZ_RUNS` (default 200;
 * `npm run test:fuzz` sets 2000) and the seed from `FC_SEED` (random when
 * unset; fast-check prints it on failure). workerd has no process.env, so
 * vitest.config.ts passes both in as bindings.
 */
import { env } from "cloudflare:workers";

const knobs = env as unknown as Record<string, unknown>;

export const FUZZ_RUNS = Number(knobs.FUZZ_RUNS ?? 200) || 200;
export const FUZZ_SEED = knobs.FC_SEED === undefined || knobs.FC_SEED === "" ? undefined : Number(knobs.FC_SEED);

/** fast-check parameters for one property. */
export function fuzzParameters(): { numRuns: number; seed?: number } {
  return FUZZ_SEED === undefined ? { numRuns: FUZZ_RUNS } : { numRuns: FUZZ_RUNS, seed: FUZZ_SEED };
}

/** Generous per-property time limit: 2000 runs take tens of seconds on 2 cores; CI never waits on it at 200. */
export const FUZZ_TIMEOUT_MS = 300_000;
