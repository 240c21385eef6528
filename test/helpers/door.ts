/**
 * Driving the door in the workers suites: the monolith's own `fetch` called in
 * the real runtime with the test env (optionally with bindings replaced, for
 * storage faults or a rate limiter), and console and Analytics Engine capture
 * for telemetry.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { onTestFinished, vi } from "vitest";
import worker from "../../worker/entries/monolith";
import type { Env } from "../../worker/config/env";
import type { RequestEvent } from "../../worker/contracts/events";
import { fakeAnalytics, type FakeAnalytics } from "../fakes/analytics";

export const ORIGIN = "https://magnt.ru";

/** The `ANALYTICS` recorder installed by `captureAnalytics` for the current test, if any. */
let activeAnalytics: FakeAnalytics | undefined;

/** The test env with some bindings or variables replaced (a key set to undefined removes it). */
export function doorEnv(overrides: Partial<Record<keyof Env, unknown>> = {}): Env {
  const captured = activeAnalytics ? { ANALYTICS: activeAnalytics } : {};
  const merged: Record<string, unknown> = { ...(env as unknown as Record<string, unknown>), ...captured, ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete merged[key];
  return merged as Env;
}

/** One request through the monolith's fetch handler. */
export async function callDoor(
  input: string | URL | Request,
  init?: RequestInit,
  overrides: Partial<Record<keyof Env, unknown>> = {},
): Promise<Response> {
  const request = input instanceof Request && !init ? input : new Request(new URL(String(input instanceof Request ? input.url : input), ORIGIN), init);
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, doorEnv(overrides), ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** A `fetch` for MCP/A2A clients that dispatches into the door in-process. */
export function doorFetch(overrides: Partial<Record<keyof Env, unknown>> = {}, headers: Record<string, string> = {}) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
    return callDoor(request, undefined, overrides);
  };
}

export interface ConsoleCapture {
  /** Every console line of every level, as printed. */
  lines(): string[];
  /** The parsed telemetry events (lines that are JSON objects with an event_id). */
  events(): RequestEvent[];
}

/** Captures all console output (every level) until the test's mocks are restored. */
export function captureConsole(): ConsoleCapture {
  const lines: string[] = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((arg) => (typeof arg === "string" ? arg : safeStringify(arg))).join(" "));
    });
  }
  return {
    lines: () => [...lines],
    events: () =>
      lines.flatMap((line) => {
        try {
          const value = JSON.parse(line) as unknown;
          return typeof value === "object" && value !== null && "event_id" in value ? [value as RequestEvent] : [];
        } catch {
          return [];
        }
      }),
  };
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Binds a recording `ANALYTICS` (Analytics Engine) to every door call of the
 * current test that does not set `ANALYTICS` itself, so every data point the
 * door writes can be checked like a log line (10 §2). Cleared when the test ends.
 */
export function captureAnalytics(): FakeAnalytics {
  const analytics = fakeAnalytics();
  activeAnalytics = analytics;
  onTestFinished(() => {
    if (activeAnalytics === analytics) activeAnalytics = undefined;
  });
  return analytics;
}
