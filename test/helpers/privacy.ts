/**
 * The privacy harness (10 §3): unique canaries planted wherever visitor or
 * secret data can enter, and a check that none of them — nor the lower-case
 * hex SHA-256 of any — appears in any captured log line.
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

  all(): string[] {
    return [...this.values.values()];
  }

  /** Asserts that no canary, raw or hashed, occurs in `lines`. */
  async assertAbsentFrom(lines: readonly string[]): Promise<void> {
    const haystack = lines.join("\n");
    for (const [label, value] of this.values) {
      expect(haystack, `canary "${label}" leaked into the logs`).not.toContain(value);
      expect(haystack.toLowerCase(), `canary "${label}" leaked as a lower-case copy`).not.toContain(value.toLowerCase());
      const hash = await sha256Hex(value);
      expect(haystack, `the SHA-256 of canary "${label}" leaked into the logs`).not.toContain(hash);
    }
  }
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
