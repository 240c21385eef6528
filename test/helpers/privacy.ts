/**
 * The privacy harness (10 §3): unique canaries planted wherever visitor or
 * secret data can enter, and a check that none of them — nor the lower-case
 * hex SHA-256 of any — appears in any captured log line or Analytics Engine
 * point.
 */
import { expect } from "vitest";

export class Canaries {
  private readonly values = new Map<string, string>();

  /** A fresh marker for `label`, unique per run. */
  make(label: string): string {
    const value = `CANARY${label.replace(/[^A-Za-z0-9]/g, "")}${crypto.randomUUID().replaceAll("-", "")}`;
    this.values.set(label, value);
    return value;
  }

  /** Tracks an existing value (e.g. a UUID the API requires) as a canary under `label`. */
  track(label: string, value: string): string {
    this.values.set(label, value);
    return value;
  }

  all(): string[] {
    return [...this.values.values()];
  }

  /** Asserts that no canary, raw, lower-cased or hashed, occurs in `lines` (`where` names them in failures). */
  async assertAbsentFrom(lines: readonly string[], where = "the logs"): Promise<void> {
    const haystack = lines.join("\n");
    for (const [label, value] of this.values) {
      expect(haystack, `canary "${label}" leaked into ${where}`).not.toContain(value);
      expect(haystack.toLowerCase(), `canary "${label}" leaked into ${where} as a lower-case copy`).not.toContain(value.toLowerCase());
      const hash = await sha256Hex(value);
      expect(haystack, `the SHA-256 of canary "${label}" leaked into ${where}`).not.toContain(hash);
    }
  }
}

/** What a request leaves behind in telemetry: its log lines and its Analytics Engine points. */
export interface TelemetryCapture {
  readonly logs: { lines(): string[]; events(): unknown[] };
  readonly analytics: { readonly points: readonly unknown[]; lines(): string[] };
}

/**
 * Asserts that no canary reached a log line or an Analytics Engine point, and
 * that the check was not vacuous: at least one event was logged and exactly one
 * data point was written per event (01 §13).
 */
export async function assertNoCanaryInTelemetry(canaries: Canaries, { logs, analytics }: TelemetryCapture): Promise<void> {
  expect(canaries.all().length, "no canary was planted").toBeGreaterThan(0);
  expect(logs.events().length, "no event was logged").toBeGreaterThan(0);
  expect(analytics.points, "one Analytics Engine point per event").toHaveLength(logs.events().length);
  await canaries.assertAbsentFrom(logs.lines());
  await canaries.assertAbsentFrom(analytics.lines(), "an Analytics Engine point");
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
