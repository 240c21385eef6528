/**
 * "Ready means ready" for `magnt dev` (08 §13, issue 19 item 2): the door is
 * announced only once every process answers through its bindings, so the
 * first request after the announcement is never a 503.
 *
 * Why a probe answering is not enough: in the split run the gateway answers
 * `/__magnt_probe` before its Service Binding to core (another process, found
 * through the dev registry) is connected; a `tools/list` in that window is a
 * 503. So the public check is a real `tools/list` through the door, and the
 * owner check the authorization server metadata through the owner gateway.
 * Core itself is checked by its entry in the run's dev registry, which
 * Miniflare writes only once its runtime listens.
 *
 * Every check is a bounded poll (`waitUntilReady`): no fixed sleep, no timing
 * assumption, a generous limit for a loaded machine. Requests carry the
 * controlled-test User-Agent, so they never count in `magnt metrics`.
 */
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { CONTROLLED_TEST_USER_AGENT, MCP_MODERN_PROTOCOL_VERSION, PACKAGE_VERSION } from "../../worker/contracts";
import { EnvironmentError } from "./errors";
import { networkErrorText, type FetchLike } from "./http";

/** One thing that must answer: `undefined` when it does, else why not yet (shown if the limit is reached). */
export interface ReadinessCheck {
  name: string;
  probe(): Promise<string | undefined>;
}

/** How long `magnt dev` waits for everything to answer (generous: three cold workerd starts on two cores). */
export const READY_TIMEOUT_MS = 180_000;
const POLL_INTERVAL_MS = 250;
/** One request may take long on a cold start (its first bundle load); cutting it short only makes workerd log a broken pipe. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * Polls the checks in order (each until it answers, then the next) until all
 * have answered, `abandon` settles (the processes ended: its outcome wins), or
 * `timeoutMs` has passed (exit 3 naming the check and its last answer).
 */
export async function waitUntilReady(checks: readonly ReadinessCheck[], options: { timeoutMs: number; abandon: Promise<unknown> }): Promise<"ready" | "abandoned"> {
  let abandoned = false;
  const gone = options.abandon.then(
    () => (abandoned = true),
    () => (abandoned = true),
  );
  const deadline = Date.now() + options.timeoutMs;
  for (const check of checks) {
    for (;;) {
      if (abandoned) return "abandoned";
      const reason = await check.probe().catch((error: unknown) => networkErrorText(error));
      if (reason === undefined) break;
      if (abandoned) return "abandoned";
      if (Date.now() > deadline) {
        throw new EnvironmentError(`${check.name} did not answer within ${Math.round(options.timeoutMs / 1000)} s (last: ${reason}); everything was stopped`);
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS)), gone]);
    }
  }
  return abandoned ? "abandoned" : "ready";
}

/** A fetch with a per-request limit and the controlled-test User-Agent. */
async function request(fetchImpl: FetchLike, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("user-agent", CONTROLLED_TEST_USER_AGENT);
  return fetchImpl(url, { ...init, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
}

/** The one stateless `tools/list` of the modern revision (02 §1), as any client would send it. */
export function toolsListRequest(): RequestInit {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MCP_MODERN_PROTOCOL_VERSION,
      "mcp-method": "tools/list",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MCP_MODERN_PROTOCOL_VERSION,
          "io.modelcontextprotocol/clientInfo": { name: "magnt-dev-readiness", version: PACKAGE_VERSION },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  };
}

/** A public `tools/list` through the door answers 200 with a tool list (in the split run: gateway → core). */
export function publicToolsListCheck(fetchImpl: FetchLike, origin: string): ReadinessCheck {
  return {
    name: `the public tools/list at ${origin}/mcp`,
    async probe() {
      const response = await request(fetchImpl, `${origin}/mcp`, toolsListRequest());
      const text = await response.text();
      if (response.status !== 200) return `HTTP ${response.status}`;
      return /"tools"\s*:\s*\[\s*\{/.test(text) ? undefined : "no tool list in the answer";
    },
  };
}

/**
 * The owner gateway answers its authorization server metadata: 200 when the
 * owner MCP is on; 404 (off) and 503 (misconfigured) are its own final
 * answers too — waiting would not change them — and the caller reports them.
 */
export function ownerMetadataCheck(fetchImpl: FetchLike, origin: string, seen: (status: number) => void): ReadinessCheck {
  return {
    name: `the owner metadata at ${origin}/.well-known/oauth-authorization-server`,
    async probe() {
      const response = await request(fetchImpl, `${origin}/.well-known/oauth-authorization-server`);
      await response.arrayBuffer();
      if (response.status !== 200 && response.status !== 404 && response.status !== 503) return `HTTP ${response.status}`;
      seen(response.status);
      return undefined;
    },
  };
}

/**
 * One cron pass answers 200 (Wrangler's scheduled-handler URL of the process
 * where the cron runs). With notifications on, the first pass pins their
 * activation time (05 §5, step 3): contacts left after it are sent at the next pass,
 * older ones never.
 */
export function cronPassCheck(fetchImpl: FetchLike, url: string): ReadinessCheck {
  return {
    name: `the first cron pass at ${url}`,
    async probe() {
      const response = await request(fetchImpl, url);
      await response.arrayBuffer();
      return response.status === 200 ? undefined : `HTTP ${response.status}`;
    },
  };
}

/** Something accepts TCP connections on a loopback port (a stand-in; no request, so nothing shows in its log). */
export function listeningCheck(name: string, host: string, port: number): ReadinessCheck {
  return {
    name,
    probe: () =>
      new Promise<string | undefined>((resolvePromise) => {
        const socket = connect({ host, port });
        socket.once("connect", () => {
          socket.destroy();
          resolvePromise(undefined);
        });
        socket.once("error", (error: NodeJS.ErrnoException) => resolvePromise(error.code ?? error.message));
      }),
  };
}

/** The run's dev registry holds `worker`: its process has started listening (Miniflare registers only then). */
export function registeredCheck(registry: string, worker: string): ReadinessCheck {
  return {
    name: `${worker} in the dev registry`,
    probe: async () => (existsSync(join(registry, worker)) ? undefined : "not registered yet"),
  };
}
