/**
 * A2A request builders for the workers suites. Bodies are always sent as
 * bytes, so the runtime never adds a `Content-Type` of its own (a string body
 * would get `text/plain;charset=UTF-8`): the header is exactly what a test
 * sets, and "no Content-Type" is really absent.
 */
import { expect } from "vitest";
import { callDoor, type ConsoleCapture } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import type { Env } from "../../worker/config/env";
import type { RequestEvent } from "../../worker/contracts/events";

/** What a v1.0 client sends on every call. */
export const V1_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "application/json",
  "A2A-Version": "1.0",
};

/** A JSON-RPC 2.0 request object. */
export function rpc(method: string, params?: Record<string, unknown>, id: string | number | null = 1) {
  return { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) };
}

/** A well-formed v1.0 user message. */
export function userMessage(overrides: Record<string, unknown> = {}) {
  return { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }], ...overrides };
}

/** The data part of the pointer, in both dialects (04 §4, §6), for the test origin. */
export function pointerData(origin: string) {
  return {
    mcpUrl: `${origin}/mcp`,
    mcpTransport: "streamable-http",
    serverCardUrl: `${origin}/mcp/server-card`,
    agentCardUrl: `${origin}/.well-known/agent-card.json`,
  };
}

/** What a 0.3 client sends: no `A2A-Version` at all. */
export const V03_HEADERS: Readonly<Record<string, string>> = { "Content-Type": "application/json" };

/** A well-formed A2A 0.3 user message (`kind` discriminators, lower-case role). */
export function userMessageV03(overrides: Record<string, unknown> = {}) {
  return { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "hello" }], ...overrides };
}

export interface A2aPostOptions {
  /** `/a2a` unless given; may carry a query string. */
  readonly path?: string;
  /** Replaces V1_HEADERS entirely. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly env?: Partial<Record<keyof Env, unknown>>;
}

const encoder = new TextEncoder();

/** POSTs `body` (a value is JSON-serialised; a string or bytes are sent as they are). */
export function postA2a(body: unknown, options: A2aPostOptions = {}): Promise<Response> {
  const bytes =
    body instanceof Uint8Array ? body : encoder.encode(typeof body === "string" ? body : JSON.stringify(body));
  return callDoor(
    options.path ?? "/a2a",
    { method: "POST", headers: options.headers ?? V1_HEADERS, body: bytes },
    options.env ?? {},
  );
}

/** A parsed JSON-RPC answer. */
export interface RpcAnswer {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown>[] };
}

export async function readRpc(response: Response): Promise<RpcAnswer> {
  return (await response.json()) as RpcAnswer;
}

/** The A2A fields of an `a2a_request` event a test expects (04 §7). */
export interface ExpectedA2aEvent {
  readonly outcome: RequestEvent["outcome"];
  readonly a2a_protocol_version: "1.0" | "0.3" | "unsupported" | null;
  readonly a2a_method: string | null;
  /** Required with `protocol_error`; absent from every other event. */
  readonly rpc_error_code?: number;
}

/**
 * Exactly one schema-valid `a2a_request` event with these fields, no query
 * string or referrer (sensitive path), and `rpc_error_code` only on protocol errors.
 */
export function expectOneA2aEvent(logs: ConsoleCapture, expected: ExpectedA2aEvent, status?: number): RequestEvent {
  const events = logs.events();
  expect(events).toHaveLength(1);
  const event = events[0]!;
  assertValidEvent(event);
  expect(event.event_type).toBe("a2a_request");
  expect(event.query).toBe("");
  expect(event.referrer).toBe("");
  expect({
    outcome: event.outcome,
    a2a_protocol_version: event.a2a_protocol_version,
    a2a_method: event.a2a_method,
    ...("rpc_error_code" in event ? { rpc_error_code: event.rpc_error_code } : {}),
  }).toEqual(expected);
  if (status !== undefined) expect(event.status).toBe(status);
  return event;
}

/** Headers every `/a2a` answer carries (04 §2), plus the JSON ones when there is a body. */
export function expectEndpointHeaders(response: Response, json: boolean): void {
  expect(response.headers.get("access-control-allow-origin")).toBe("*");
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(response.headers.get("x-magnt-observer")).toBe("1");
  expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  if (json) {
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("a2a-version")).toBe("1.0");
  } else {
    expect(response.headers.get("content-type")).toBeNull();
  }
}
