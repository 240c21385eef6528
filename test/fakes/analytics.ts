/**
 * A fake `ANALYTICS` binding (Analytics Engine, 01 §13): records every data
 * point the door writes, so the privacy harness can check them as it checks
 * log lines (10 §2–§3). It never throws, like the platform's fire-and-forget
 * `writeDataPoint`.
 */
import type { AnalyticsBinding } from "../../worker/config/env";

export type DataPoint = Parameters<AnalyticsBinding["writeDataPoint"]>[0];

export interface FakeAnalytics extends AnalyticsBinding {
  /** Every point written, in order (deep copies, so later mutation by the caller cannot hide a value). */
  readonly points: DataPoint[];
  /** Each point serialised to one line, for substring checks. */
  lines(): string[];
}

export function fakeAnalytics(): FakeAnalytics {
  const points: DataPoint[] = [];
  return {
    points,
    writeDataPoint(point) {
      points.push(structuredClone(point));
    },
    lines: () => points.map((point) => JSON.stringify(point)),
  };
}
