/**
 * MCP clients for the workers suites: both official generations, wired to the
 * door in-process through a custom fetch, plus raw JSON-RPC builders for the
 * modern (2026-07-28, no handshake) and legacy lanes.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Env } from "../../worker/config/env";
import { callDoor, doorFetch, ORIGIN } from "./door";

export const MCP_URL = `${ORIGIN}/mcp`;
export const MODERN = "2026-07-28";

type Overrides = Partial<Record<keyof Env, unknown>>;
export type V2Mode = "legacy" | "auto" | { pin: string };

/** The v2 client (`@modelcontextprotocol/client` 2.4.0) in the given negotiation mode. */
export async function connectV2(mode: V2Mode = "auto", overrides: Overrides = {}, headers: Record<string, string> = {}) {
  const client = new Client({ name: "test-client-v2", version: "2.4.0" }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: doorFetch(overrides, headers) }));
  return client;
}

/** The 2025-generation client (`@modelcontextprotocol/sdk` 1.32.2). */
export async function connectV1(overrides: Overrides = {}, headers: Record<string, string> = {}) {
  const client = new ClientV1({ name: "test-client-v1", version: "1.32.2" });
  await client.connect(new TransportV1(new URL(MCP_URL), { fetch: doorFetch(overrides, headers) }));
  return client;
}

/** A modern request envelope: `_meta` with version, client info and capabilities. */
export function modernMeta(clientName = "raw-modern", clientVersion = "1.0.0") {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: clientName, version: clientVersion },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
}

export interface RawOptions {
  headers?: Record<string, string>;
  overrides?: Overrides;
}

/** POST /mcp with a modern JSON-RPC request (headers and `_meta` as 2026-07-28 requires). */
export function modernRequest(method: string, params: Record<string, unknown> = {}, options: RawOptions & { id?: number | string; name?: string } = {}) {
  const name = options.name ?? (typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
    ...options.headers,
  };
  const body = { jsonrpc: "2.0", id: options.id ?? 1, method, params: { ...params, _meta: modernMeta() } };
  return callDoor("/mcp", { method: "POST", headers, body: JSON.stringify(body) }, options.overrides);
}

/** A modern `tools/call`; returns the HTTP response and the parsed JSON-RPC message. */
export async function callToolModern(name: string, args: unknown, options: RawOptions = {}) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  const response = await modernRequest("tools/call", params, options);
  const message = (await response.json()) as JsonRpcMessage;
  return { response, message, result: message.result as ToolCallResult | undefined };
}

/** POST /mcp with an arbitrary body and headers (legacy lane or malformed input). */
export function rawPost(body: string | Uint8Array | ReadableStream, headers: Record<string, string> = {}, overrides: Overrides = {}) {
  return callDoor(
    "/mcp",
    {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body,
      ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit,
    overrides,
  );
}

export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export interface ToolCallResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Parses a JSON or SSE response body into its JSON-RPC messages. */
export async function readMessages(response: Response): Promise<JsonRpcMessage[]> {
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    return text
      .split(/\n\n/)
      .map((block) => block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join(""))
      .filter((data) => data !== "")
      .map((data) => JSON.parse(data) as JsonRpcMessage);
  }
  return [JSON.parse(text) as JsonRpcMessage];
}
