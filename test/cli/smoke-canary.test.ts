/**
 * The smoke privacy canary (08 §6: output never contains task text, the
 * contact summary, profile prose or tokens), against a door that tries every
 * way of getting them printed: echoing them in result fields, in JSON-RPC
 * error messages, in HTTP error bodies, whole or in part. The door records
 * what smoke actually sent, so the canary checks the real texts, not copies
 * of smoke's constants. Words of a private text that appear 4 in a row count
 * as a leak.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TOOL_CONTRIBUTE, TOOL_PROPOSE_CONTACT, TOOL_SEARCH } from "../../worker/contracts";
import { redact } from "../../cli/commands/smoke/redaction";
import { correctBehaviour, FAKE_PROFILE, startFakeDoor, type FakeDoor } from "./fake-door";
import { runMagnt, type Captured } from "./harness";

const PROSE = {
  purpose: "canary prose: a human point of contact for AI systems and their operators",
  capabilities: ["canary capability one about structured finance and securitisation", "canary capability two about joint research"],
  contact: { storage_available: true, reply: "canary reply prose: give reply_to if you want an answer" },
};
const PROFILE = { ...FAKE_PROFILE, ...PROSE, contact: { ...PROSE.contact } };

/** Every run of four consecutive words of `text`. */
function windows(text: string): string[] {
  const words = text.split(/\s+/).filter((word) => word !== "");
  if (words.length < 4) return [text];
  return Array.from({ length: words.length - 3 }, (_, i) => words.slice(i, i + 4).join(" "));
}

function expectNoLeak(run: Captured, secrets: readonly string[]): void {
  expect(secrets.length).toBeGreaterThan(0);
  for (const secret of secrets) {
    for (const fragment of windows(secret)) {
      expect(run.stdout, `stdout leaks "${fragment}"`).not.toContain(fragment);
      expect(run.stderr, `stderr leaks "${fragment}"`).not.toContain(fragment);
    }
  }
}

/** What the door received: the contact summary, the task fields. */
interface Sent {
  summaries: string[];
  task: string[];
}

function recordingBehaviour(sent: Sent): Parameters<typeof startFakeDoor>[0] {
  const base = correctBehaviour();
  return {
    profile: PROFILE,
    about: () => PROFILE,
    propose(args) {
      sent.summaries.push(String(args.summary));
      return { ...base.propose(args), summary: args.summary, message: `saved: ${String(args.summary)}`, echo: PROSE.purpose };
    },
    search(args) {
      sent.task.push(String(args.goal), String(args.blocker), String(args.tried));
      return { ...base.search(args), echo: `${String(args.goal)} ${PROSE.purpose}` };
    },
    contribute(args) {
      sent.task.push(String(args.goal), String(args.blocker), String(args.tried));
      return { ...base.contribute(args), echo: String(args.goal) };
    },
  };
}

type Echo = "jsonrpc_error" | "http_500" | "partial_jsonrpc_error";

/**
 * A loopback proxy in front of the fake door that answers `tools/call` of one
 * tool with an error echoing the call's arguments and the profile prose.
 */
async function startEchoProxy(upstream: string, tool: string, echo: Echo): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const message = parseJson(body);
      const params = message?.params as { name?: unknown; arguments?: Record<string, unknown> } | undefined;
      if (message?.method === "tools/call" && params?.name === tool) {
        const args = params.arguments ?? {};
        const full = `${Object.values(args).map(String).join(" | ")} | ${PROSE.purpose}`;
        const text = echo === "partial_jsonrpc_error" ? full.slice(0, 70) : full;
        if (echo === "http_500") {
          res.writeHead(500, { "content-type": "text/plain" }).end(`upstream rejected: ${text}`);
        } else {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: message.id ?? null, error: { code: -32603, message: `cannot process: ${text}` } }));
        }
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string" && name !== "host" && name !== "content-length") headers.set(name, value);
      const response = await fetch(upstream, { method: req.method, headers, ...(req.method === "POST" ? { body } : {}) });
      const responseHeaders = Object.fromEntries([...response.headers.entries()].filter(([name]) => name !== "content-length" && name !== "transfer-encoding"));
      res.writeHead(response.status, responseHeaders).end(Buffer.from(await response.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(body.toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
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

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function door(sent: Sent): Promise<FakeDoor> {
  const started = await startFakeDoor(recordingBehaviour(sent));
  cleanups.push(() => started.close());
  return started;
}

const ALL = ["--submit-test", "--shared-memory-test"];
const privateTexts = (sent: Sent): string[] => [...sent.summaries, ...sent.task, PROSE.purpose, ...PROSE.capabilities, PROSE.contact.reply];

describe("smoke never prints the summary, the task or profile prose", () => {
  it.each([["human"], ["--json"]])("a door that echoes them in every result (%s): all steps pass, nothing leaks", async (mode) => {
    const sent: Sent = { summaries: [], task: [] };
    const fake = await door(sent);
    const run = await runMagnt(["smoke", fake.url, "--legacy", ...ALL, ...(mode === "--json" ? ["--json"] : [])]);
    expect(run.code).toBe(0);
    expect(sent.summaries).toHaveLength(2);
    expect(sent.task.length).toBeGreaterThanOrEqual(12);
    expectNoLeak(run, privateTexts(sent));
  });

  it.each([
    [TOOL_PROPOSE_CONTACT, "jsonrpc_error"],
    [TOOL_PROPOSE_CONTACT, "http_500"],
    [TOOL_PROPOSE_CONTACT, "partial_jsonrpc_error"],
    [TOOL_SEARCH, "jsonrpc_error"],
    [TOOL_SEARCH, "http_500"],
    [TOOL_CONTRIBUTE, "partial_jsonrpc_error"],
  ] as const)("%s answered by an error that echoes the arguments and the profile (%s): the step fails, nothing leaks", async (tool, echo) => {
    const sent: Sent = { summaries: [], task: [] };
    const fake = await door(sent);
    const proxy = await startEchoProxy(fake.url, tool, echo);
    cleanups.push(() => proxy.close());
    for (const mode of [[], ["--json"]]) {
      const run = await runMagnt(["smoke", proxy.url, "--legacy", ...ALL, ...mode]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`smoke failed at step (propose_contact|search_before|contribute)`));
      // The error itself is still reported (with the private parts cut out).
      expect(run.stderr).toMatch(/cannot process|upstream rejected/);
      const texts = privateTexts(sent);
      if (tool === TOOL_PROPOSE_CONTACT) texts.push("Owner-authorised deployment check: this message was sent by the magnt smoke test");
      expectNoLeak(run, texts);
    }
  });
});

describe("redact", () => {
  it("removes exact and partial (four-word) echoes, keeps the rest", () => {
    const secret = "one two three four five six seven";
    expect(redact(`x ${secret} y`, [secret])).toBe("x [redacted] y");
    expect(redact("error: two three four five, then more", [secret])).toBe("error: [redacted], then more");
    expect(redact("three four only", [secret])).toBe("three four only");
    expect(redact("token abcdefghijkl here", ["abcdefghijkl"])).toBe("token [redacted] here");
    expect(redact("nothing", ["", "  "])).toBe("nothing");
  });
});
