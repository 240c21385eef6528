/**
 * The classification and the bounds of the door's D1 retries (09 §5,
 * decisions 175–177): pure functions, no runtime.
 */
import { describe, expect, it } from "vitest";
import { backoffDelayMs, D1_RETRY, failureMessage, isTransientD1Error } from "../../worker/storage/d1-retry";

describe("which D1 failures are transient (09 §5.1)", () => {
  it.each([
    "D1_ERROR: Network connection lost.",
    "D1_ERROR: D1 DB reset because its code was updated.",
    "D1_ERROR: Internal error while starting up D1 DB storage caused object to be reset.",
  ])("%s → retried", (message) => {
    expect(isTransientD1Error(message)).toBe(true);
  });

  it.each([
    "D1_ERROR: UNIQUE constraint failed: contacts.submission_id: SQLITE_CONSTRAINT",
    "D1_ERROR: no such table: contacts: SQLITE_ERROR",
    "D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'",
    "D1_ERROR: D1 DB is overloaded. Too many requests queued.",
    "D1_ERROR: Exceeded maximum DB size.",
    "",
  ])("%j → fails at once", (message) => {
    expect(isTransientD1Error(message)).toBe(false);
  });

  it("reads a thrown error's message, a string, or nothing", () => {
    expect(failureMessage(new Error("Network connection lost"))).toBe("Network connection lost");
    expect(failureMessage("Network connection lost")).toBe("Network connection lost");
    expect(failureMessage({ message: "Network connection lost" })).toBe("");
    expect(failureMessage(undefined)).toBe("");
  });
});

describe("backoff with full jitter (09 §5.1)", () => {
  it("draws below 100 ms before the second attempt and below 200 ms before the third", () => {
    expect(backoffDelayMs(2, 0)).toBe(0);
    expect(backoffDelayMs(2, 0.999)).toBe(99);
    expect(backoffDelayMs(3, 0.999)).toBe(199);
    expect(backoffDelayMs(3, 0.5)).toBe(100);
  });

  it("never exceeds the per-wait ceiling, whatever the draw", () => {
    for (let attempt = 2; attempt <= 12; attempt += 1) {
      expect(backoffDelayMs(attempt, 1)).toBeLessThanOrEqual(D1_RETRY.maxDelayMs);
      expect(backoffDelayMs(attempt, 7)).toBeLessThanOrEqual(D1_RETRY.maxDelayMs);
      expect(backoffDelayMs(attempt, -1)).toBe(0);
    }
  });

  it("one statement's worst case fits the per-request budget", () => {
    let worst = 0;
    for (let attempt = 2; attempt <= D1_RETRY.maxAttempts; attempt += 1) worst += backoffDelayMs(attempt, 1);
    expect(worst).toBe(300);
    expect(worst).toBeLessThanOrEqual(D1_RETRY.budgetMs);
  });
});
