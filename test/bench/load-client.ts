/**
 * The load client of the door-overhead benchmark (`overhead.ts` starts it as
 * a child process and sends it one block at a time over IPC): keep-alive
 * HTTP/1.1 connections to Miniflare's entry Worker, which routes each request
 * to a Worker by its original URL (the `MF-Original-URL` header, as
 * `dispatchFetch` does).
 *
 * Why a process of its own with a plain `node:http` client (decision 222):
 * `dispatchFetch` builds an undici `Request` and opens a new connection for
 * every request, about 1.8 ms of CPU per request at 16 in flight on a machine
 * whose other core runs workerd, and it ran in the bench process, whose heap
 * (Miniflare, esbuild, the report) made its collection pauses 20–40 ms: a
 * pause there delayed every answer in flight of whichever side was being
 * measured. This process holds nothing but the client; its pauses stay
 * around 1 ms (7 ms at most in scratch runs).
 *
 * Any answer but 200 ends the block with an error: a request routed to the
 * wrong Worker, or a Worker that broke, must stop the bench, not be timed.
 */
import { Agent, request as httpRequest } from "node:http";
import { prng, sentence } from "./corpus";
import { toolCall, toolsList, toolsListAs, type McpRequest } from "./requests";

/** What a block sends, by name (built here, so a request never crosses the process boundary). */
export type RequestKind = "tools/list" | "tools/list as new client software" | "about_magnt" | "echo" | "search_shared_experience" | "echo_search";

export type ClientCommand =
  | { readonly type: "start"; readonly entry: string }
  | {
      readonly type: "block";
      readonly id: number;
      readonly url: string;
      readonly kind: RequestKind;
      /** 1: `calls` sequential calls; more: that many lanes for at least `seconds` and `minSamples` answers. */
      readonly inFlight: number;
      readonly calls: number;
      readonly seconds: number;
      readonly minSamples: number;
    };

export type ClientReply = { readonly type: "ready" } | { readonly type: "done"; readonly id: number; readonly samples: number[]; readonly seconds: number } | { readonly type: "error"; readonly id: number; readonly message: string };

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
let entry: URL | undefined;

/** Each kind's own generator: the door's search and the echo's draw the same sequence of goals (the same seed). */
const goals = new Map<RequestKind, () => string>();
let clientSoftware = 0;

function build(kind: RequestKind): McpRequest {
  switch (kind) {
    case "tools/list":
      return toolsList();
    case "tools/list as new client software":
      return toolsListAs(`bench-${(clientSoftware += 1)}`);
    case "about_magnt":
      return toolCall("about_magnt", {});
    case "echo":
      return toolCall("echo", { text: "hello" });
    case "search_shared_experience":
    case "echo_search": {
      let next = goals.get(kind);
      if (next === undefined) {
        const random = prng(42);
        goals.set(kind, (next = () => sentence(random, 100)));
      }
      return toolCall(kind, { goal: next() });
    }
  }
}

/**
 * Sends one request; resolves with when the attempt that was answered started. A keep-alive connection the
 * server closed while it sat idle (between blocks) fails at once on reuse ("socket hang up", ECONNRESET); that
 * request never reached a Worker, so it is sent again on a new connection and timed from there, as Node's
 * documentation advises for reused sockets.
 */
async function sendTimed(url: string, request: McpRequest): Promise<number> {
  for (;;) {
    const begin = performance.now();
    try {
      await send(url, request);
      return begin;
    } catch (error) {
      if (!(error instanceof StaleConnection)) throw error;
    }
  }
}

/** A reused keep-alive connection the server had closed. */
class StaleConnection extends Error {
  constructor() {
    super("a reused keep-alive connection was closed by the server");
    this.name = "StaleConnection";
  }
}

function send(url: string, { method, headers, body }: McpRequest): Promise<void> {
  const target = entry;
  if (target === undefined) return Promise.reject(new Error("load client: no entry URL yet"));
  return new Promise<void>((resolve, reject) => {
    const bytes = Buffer.from(body);
    const outgoing = httpRequest(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method,
        path: new URL(url).pathname,
        headers: { ...headers, "content-length": bytes.byteLength, "MF-Original-URL": url, "MF-Disable-Pretty-Error": "true" },
      },
      (response) => {
        response.on("data", () => undefined);
        response.on("error", reject);
        response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`${url} answered ${response.statusCode} during a measured block`))));
      },
    );
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      const stale = outgoing.reusedSocket && (error.code === "ECONNRESET" || error.message === "socket hang up");
      reject(stale ? new StaleConnection() : error);
    });
    outgoing.end(bytes);
  });
}

async function block(command: Extract<ClientCommand, { type: "block" }>): Promise<{ samples: number[]; seconds: number }> {
  const samples: number[] = [];
  const start = performance.now();
  const one = async () => {
    const begin = await sendTimed(command.url, build(command.kind));
    samples.push(performance.now() - begin);
  };
  if (command.inFlight === 1) {
    for (let index = 0; index < command.calls; index += 1) await one();
  } else {
    const deadline = start + command.seconds * 1000;
    const lane = async () => {
      while (performance.now() < deadline || samples.length < command.minSamples) await one();
    };
    await Promise.all(Array.from({ length: command.inFlight }, lane));
  }
  return { samples, seconds: (performance.now() - start) / 1000 };
}

function reply(message: ClientReply): void {
  process.send?.(message);
}

process.on("message", (command: ClientCommand) => {
  if (command.type === "start") {
    entry = new URL(command.entry);
    reply({ type: "ready" });
    return;
  }
  block(command).then(
    ({ samples, seconds }) => reply({ type: "done", id: command.id, samples, seconds }),
    (error: unknown) => reply({ type: "error", id: command.id, message: error instanceof Error ? error.message : String(error) }),
  );
});
