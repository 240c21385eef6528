/**
 * How a smoke step judges a door's answer: the two failure kinds (a failed
 * expectation → exit 1; an endpoint that never answered → exit 3) and small
 * checks over `structuredContent`. A server-provided value is only ever quoted
 * back when it looks like a status word, never as free text (08 §6: the output
 * carries receipts, statuses and flags only).
 */
import { isRecord } from "../../../worker/contracts/guards";

export { isRecord };

/** A step's expectation did not hold (exit 1). */
export class StepFailure extends Error {}
/** The endpoint could not be reached at all (exit 3). */
export class Unreachable extends Error {}

export function expectStatus(content: Record<string, unknown>, expected: string): void {
  if (content.status !== expected) throw new StepFailure(`status ${safeWord(content.status)} (expected ${expected})`);
}

export function expectPattern(content: Record<string, unknown>, key: string, pattern: RegExp): string {
  const value = content[key];
  if (typeof value !== "string" || !pattern.test(value)) throw new StepFailure(`${key} is missing or malformed`);
  return value;
}

/** The `signal_id`s of a search result's matches. */
export function matchIds(content: Record<string, unknown>): string[] {
  return Array.isArray(content.matches) ? content.matches.filter(isRecord).map((match) => String(match.signal_id)) : [];
}

/** A server-provided status is printed only if it looks like a status word, never as free text. */
export function safeWord(value: unknown): string {
  return typeof value === "string" && /^[a-z0-9_]{1,48}$/.test(value) ? value : "(unexpected value)";
}

