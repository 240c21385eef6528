/**
 * Driving the split deployment in the "split" suites: the public gateway (the
 * pool's main Worker) in-process with the test env, whose `CORE` binding
 * reaches the real core bundle running as an auxiliary Worker; core's console
 * lines and rate-limit keys read back through its test taps; the monolith in
 * the same isolate, for comparisons of the public surface.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import gateway from "../../worker/entries/gateway";
import monolith from "../../worker/entries/monolith";
import type { Env } from "../../worker/config/env";
import type { RequestEvent } from "../../worker/contracts/events";
import { MODERN, modernMeta } from "../helpers/mcp";

export const ORIGIN = "https://magnt.ru";
export const MCP_URL = `${ORIGIN}/mcp`;

type Overrides = Partial<Record<keyof Env, unknown>>;
type Entry = { fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> };

/**
 * The pool's main Worker (the gateway entry) as the runtime serves it, i.e.
 * `SELF`: requests go through the real entry with the real env, CORE included.
 */
export function gatewaySelf(): Fetcher {
  return (exports as unknown as { default: Fetcher }).default;
}

/** Core's D1 database, as the test runner sees it (the same storage core writes). */
export function coreDb(): D1Database {
  const db = env.TEST_CONTACTS;
  if (!db) throw new Error("TEST_CONTACTS is bound only in the split project");
  return db;
}

/** Core's test taps (console lines and rate-limit keys of the magnt-core auxiliary Worker). */
export function coreTaps() {
  const taps = env.TEST_CORE;
  if (!taps) throw new Error("TEST_CORE is bound only in the split project");
  return taps;
}

/** The telemetry events core printed since the current test started. */
export async function coreEvents(): Promise<RequestEvent[]> {
  return parseEvents(await coreTaps().lines());
}

/** Parses console lines into telemetry events (JSON objects with an event_id). */
export function parseEvents(lines: readonly string[]): RequestEvent[] {
  return lines.flatMap((line) => {
    try {
      const value = JSON.parse(line) as unknown;
      return typeof value === "object" && value !== null && "event_id" in value ? [value as RequestEvent] : [];
    } catch {
      return [];
    }
  });
}

/** The gateway's env: the runner's env (CORE → magnt-core) with some bindings replaced (undefined removes one). */
export function gatewayEnv(overrides: Overrides = {}): Env {
  const merged: Record<string, unknown> = { ...(env as unknown as Record<string, unknown>), ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete merged[key];
  return merged as Env;
}

/** The monolith's env for comparisons: the same variables, core's database as `CONTACTS`, no `CORE`. */
export function monolithEnv(): Env {
  return gatewayEnv({ CONTACTS: coreDb(), CORE: undefined });
}

function toRequest(input: string | URL | Request, init?: RequestInit): Request {
  if (input instanceof Request && !init) return input;
  return new Request(new URL(String(input instanceof Request ? input.url : input), ORIGIN), init);
}

async function call(worker: Entry, request: Request, workerEnv: Env): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, workerEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** One request through the gateway's fetch handler (the module the pool serves as `SELF`). */
export function callGateway(input: string | URL | Request, init?: RequestInit, overrides: Overrides = {}): Promise<Response> {
  return call(gateway, toRequest(input, init), gatewayEnv(overrides));
}

/** One request through the monolith's fetch handler, on core's database. */
export function callMonolith(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  return call(monolith, toRequest(input, init), monolithEnv());
}

/** A `fetch` for MCP clients that dispatches into the gateway in-process. */
export function gatewayFetch(overrides: Overrides = {}) {
  return (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    callGateway(new Request(input, init), undefined, overrides);
}

/** The official v2 MCP client (`@modelcontextprotocol/client` 2.4.0) connected through the gateway. */
export async function connectThroughGateway(overrides: Overrides = {}): Promise<Client> {
  const client = new Client({ name: "split-client-v2", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: gatewayFetch(overrides) }));
  return client;
}

/** Headers of a modern (2026-07-28) MCP POST. */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
  };
}

/** A modern JSON-RPC body with its `_meta` envelope. */
export function modernBody(method: string, params: Record<string, unknown> = {}, id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: modernMeta() } });
}
