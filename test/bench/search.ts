/**
 * The matcher benchmark (10 §6, issue 14): tokeniser + matcher over 100
 * candidates of realistic length plus one query, in Node, 5000 iterations
 * after a warm-up; p50 gated at 1 ms (10 §6), target 0.5 ms (issue 14).
 * Maximum-length candidates are reported, not gated.
 */
import { findMatches } from "../../worker/signals/matcher";
import { prng, realisticTask, sentence } from "./corpus";
import type { Report } from "./report";
import { median, percentile } from "./stats";

const BENCH = "search";

export function benchSearch(report: Report): void {
  const realistic = Array.from({ length: 100 }, (_, index) => {
    const [goal, blocker, tried] = realisticTask(index);
    return { signal_id: `ts_${index}`, goal, blocker, tried, learned: null };
  });
  const maximal = Array.from({ length: 100 }, (_, index) => {
    const random = prng(index + 1000);
    return { signal_id: `ts_${index}`, goal: sentence(random, 1000), blocker: sentence(random, 1000), tried: sentence(random, 2000), learned: null };
  });
  const query = { goal: "deploy a cloudflare worker with a cron queue", blocker: "retry timeout on the database migration", tried: "развернуть воркер и поиск ошибка" };

  const measureSamples = (candidates: typeof realistic, iterations: number) => {
    const samples: number[] = [];
    for (let index = 0; index < iterations; index += 1) {
      const start = performance.now();
      findMatches(query, candidates);
      samples.push(performance.now() - start);
    }
    return samples;
  };
  const measure = (candidates: typeof realistic, iterations: number) => median(measureSamples(candidates, iterations));
  measure(realistic, 500); // warm-up
  // 5000 iterations in 5 blocks: the row is the p50 of all 5000; the blocks' p50s give its spread
  // (on a shared machine, other work shows up as a wide spread rather than silently).
  const samples: number[] = [];
  const blockP50s: number[] = [];
  for (let block = 0; block < 5; block += 1) {
    const blockSamples = measureSamples(realistic, 1000);
    blockP50s.push(median(blockSamples));
    samples.push(...blockSamples);
  }
  const realisticP50 = median(samples);
  report.record(
    { benchmark: BENCH, measurement: "matcher (tokenise + match) over 100 realistic candidates, p50 of 5000", value: realisticP50, unit: "ms", budget: "≤ 1", kind: "gate" },
    realisticP50 <= 1,
    {
      target: { budget: "≤ 0.5", met: realisticP50 <= 0.5 },
      spread: `${Math.min(...blockP50s).toFixed(3)}–${Math.max(...blockP50s).toFixed(3)} over 5 blocks`,
      detail: `p99 ${percentile(samples, 99).toFixed(3)} ms`,
    },
  );
  const maximalP50 = measure(maximal, 500); // reported only: fewer iterations keep the run short
  report.record({ benchmark: BENCH, measurement: "matcher over 100 maximum-length candidates, p50 of 500", value: maximalP50, unit: "ms", budget: "reported", kind: "info" }, true);
}
