/**
 * A small in-memory MCP door for the smoke node tests: the SDK's own
 * `createMcpHandler` (the same server package the Worker uses) behind a
 * `node:http` listener on 127.0.0.1, with behaviour that each test can bend
 * (extra tools, wrong statuses, an echoing error) to prove which step fails.
 * It is not the real door: the e2e suite runs smoke against that.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import {
  MCP_SUPPORTED_PROTOCOL_VERSIONS,
  PROFILE_RESOURCE_NAME,
  PROFILE_RESOURCE_URI,
  PUBLIC_TOOL_NAMES,
  TOOL_ABOUT,
  TOOL_CONTRIBUTE,
  TOOL_PROPOSE_CONTACT,
  TOOL_SEARCH,
} from "../../worker/contracts";

type Args = Record<string, unknown>;
type Result = Record<string, unknown>;

export interface FakeDoorBehaviour {
  tools?: string[];
  profile?: Result;
  about?: () => Result;
  propose?: (args: Args) => Result;
  search?: (args: Args) => Result;
  contribute?: (args: Args) => Result;
  /** Answer every POST with this HTTP status and a plain body (a broken deployment). */
  httpStatus?: number;
  /** Answer like a 2025-only server: a modern request (server/discover) gets the 2025 "not initialized" error. */
  legacyOnly?: boolean;
}

export interface FakeDoor {
  url: string;
  userAgents: string[];
  close(): Promise<void>;
}

export const FAKE_PROFILE = { name: "MAGNT", contact: { storage_available: true }, purpose: "profile prose that smoke must never print" };

/** A correct door in memory: idempotent contacts and signals, cohort-separated search. */
export function correctBehaviour(): Required<Omit<FakeDoorBehaviour, "httpStatus" | "legacyOnly">> {
  const contacts = new Map<string, string>();
  const signals = new Map<string, { id: string; goal: string; test: boolean }>();
  return {
    tools: [...PUBLIC_TOOL_NAMES],
    profile: FAKE_PROFILE,
    about: () => FAKE_PROFILE,
    propose(args) {
      const key = String(args.submission_id);
      const existing = contacts.get(key);
      if (existing !== undefined) return { status: "accepted_for_human_review", contact_id: existing, duplicate: true };
      const id = `mc_${randomUUID()}`;
      contacts.set(key, id);
      return { status: "accepted_for_human_review", contact_id: id, duplicate: false };
    },
    search(args) {
      const matches = [...signals.values()].filter((signal) => signal.test === (args.is_test === true) && signal.goal === args.goal);
      return matches.length > 0
        ? { status: "matches_found", matches: matches.map((m) => ({ signal_id: m.id, goal: m.goal, blocker: null, tried: null, learned: null })), matches_count: matches.length }
        : { status: "no_relevant_experience", matches: [], matches_count: 0, search_receipt: `sr_${randomBytes(16).toString("hex")}` };
    },
    contribute(args) {
      const key = String(args.submission_id);
      const existing = signals.get(key);
      if (existing !== undefined) return { status: "duplicate", signal_id: existing.id, duplicate: true };
      const id = `ts_${randomUUID()}`;
      signals.set(key, { id, goal: String(args.goal), test: args.is_test === true });
      return { status: "accepted", signal_id: id, duplicate: false };
    },
  };
}

export async function startFakeDoor(overrides: FakeDoorBehaviour = {}): Promise<FakeDoor> {
  const behaviour = { ...correctBehaviour(), ...overrides };
  const userAgents: string[] = [];
  const handlers: Record<string, (args: Args) => Result> = {
    [TOOL_ABOUT]: () => behaviour.about(),
    [TOOL_PROPOSE_CONTACT]: behaviour.propose,
    [TOOL_SEARCH]: behaviour.search,
    [TOOL_CONTRIBUTE]: behaviour.contribute,
  };
  const buildServer = (): McpServer => {
    const server = new McpServer(
      { name: "fake-door", version: "0.0.0" },
      { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } }, supportedProtocolVersions: [...MCP_SUPPORTED_PROTOCOL_VERSIONS] },
    );
    for (const name of behaviour.tools) {
      server.registerTool(name, { description: name, inputSchema: z.object({}).passthrough() }, async (args: unknown) => {
        const result = (handlers[name] ?? (() => ({ status: "ok" })))(args as Args);
        const isError = typeof result.status === "string" && /error|conflict|not_saved/.test(result.status);
        return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result, ...(isError ? { isError: true } : {}) };
      });
    }
    server.registerResource(PROFILE_RESOURCE_NAME, PROFILE_RESOURCE_URI, { mimeType: "application/json" }, async () => ({
      contents: [{ uri: PROFILE_RESOURCE_URI, mimeType: "application/json", text: JSON.stringify(behaviour.profile) }],
    }));
    return server;
  };
  const handler = createMcpHandler(buildServer, { legacy: "stateless", onerror: () => undefined });
  const http: Server = createServer((req, res) => {
    userAgents.push(String(req.headers["user-agent"]));
    void (async () => {
      const body = await readBody(req);
      if (behaviour.httpStatus !== undefined) {
        res.writeHead(behaviour.httpStatus, { "content-type": "text/plain" }).end("broken");
        return;
      }
      if (behaviour.legacyOnly === true && isModernRequest(body)) {
        const id = (JSON.parse(body.toString("utf8")) as { id?: unknown }).id ?? null;
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message: "Bad Request: Server not initialized" } }));
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${req.url ?? "/"}`, { method: req.method, headers, ...(req.method === "POST" ? { body } : {}) }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      res.end(Buffer.from(await response.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    userAgents,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** A 2026-07-28 request: `server/discover`, or any request carrying the modern `_meta` envelope. */
function isModernRequest(body: Buffer): boolean {
  try {
    const message = JSON.parse(body.toString("utf8")) as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
    return message.method === "server/discover" || Object.keys(message.params?._meta ?? {}).some((key) => key.endsWith("/protocolVersion"));
  } catch {
    return false;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
