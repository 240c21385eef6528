/**
 * Outbound HTTP of the CLI (smoke, probe-check): every request carries the
 * controlled-test User-Agent (00 §4), and a tracker records whether any HTTP
 * response ever arrived, which is how "unreachable" (exit 3: DNS, TCP, TLS,
 * connect timeout) is told apart from "reached but wrong" (exit 1).
 */
import { CONTROLLED_TEST_USER_AGENT } from "../../worker/contracts";
import { UsageError } from "./errors";

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface ReachTracker {
  /** HTTP responses received (any status). */
  responses: number;
  /** The first network-level failure, e.g. `ECONNREFUSED`, `ENOTFOUND`. */
  networkError?: string;
}

/** A fetch that sets the controlled-test User-Agent and records reachability. */
export function controlledFetch(tracker: ReachTracker, base: FetchLike = fetch): FetchLike {
  return async function fetchWithControlledUserAgent(url, init) {
    const headers = new Headers(init?.headers);
    headers.set("user-agent", CONTROLLED_TEST_USER_AGENT);
    try {
      const response = await base(url, { ...init, headers });
      tracker.responses += 1;
      return response;
    } catch (error) {
      // An abort is the caller's own timeout, not a network fault; the caller words that case.
      if (!(error instanceof Error && error.name === "AbortError")) tracker.networkError ??= networkErrorText(error);
      throw error;
    }
  };
}

/** The most specific description of a fetch failure: the socket error code when undici gives one. */
export function networkErrorText(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  if (error instanceof Error && error.name === "TimeoutError") return "timed out";
  return error instanceof Error ? error.message : String(error);
}

/** Parses an http(s) URL argument; anything else is a usage error. */
export function parseHttpUrl(raw: string, name = "url"): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${name} is not a valid URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${name} must be http:// or https://: ${raw}`);
  return url;
}
