/**
 * The owner deployment in one workers-project isolate (issue 14): the owner
 * gateway's real route table (`createDoor("owner_gateway", ownerRoutes())`)
 * in front of core's real `OwnerEntrypoint` functions (`handleOwnerMcp`,
 * `spendOnce`, `isSpent`), joined by an in-process stand-in for the
 * `OWNER_CORE` Service Binding — so a test can give core a faulty D1 binding
 * and still drive the whole path (OAuth endpoints, bearer check, owner MCP
 * server, the owner tools, telemetry of both Workers).
 *
 * The split project runs the same code as real separate Workers; this stack
 * exists because there the binding between core and its D1 cannot be swapped
 * for a fault injector.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import type { Env, OwnerCoreBinding, OwnerMcpRpcRequest } from "../../worker/config/env";
import { createDoor } from "../../worker/edge/pipeline";
import { ownerRoutes } from "../../worker/entries/owner-routes";
import { handleOwnerMcp, ownerIsSpent, ownerSpendOnce } from "../../worker/mcp/owner-rpc";
import type { OwnerEnv } from "../../worker/owner/index";
import type { FakeAnalytics } from "../fakes/analytics";
import { db } from "../helpers/db";
import { readMessages, modernMeta, MODERN, type JsonRpcMessage, type ToolCallResult } from "../helpers/mcp";
import { OWNER_ORIGIN } from "../helpers/owner";
import { TOKEN_KEY } from "./dialogue-harness";

const gateway = createDoor("owner_gateway", ownerRoutes());

export interface OwnerStackOptions {
  /** Core's D1 (default: the test database). */
  readonly coreDb?: D1Database;
  /** Recording Analytics Engine for both Workers. */
  readonly analytics?: FakeAnalytics;
  /** More core variables. */
  readonly core?: Partial<Env>;
}

/** Core's flags: owner tools with writes, and the dialogue tools registered (07 §1). */
export const CORE_FLAGS: Partial<Env> = {
  OWNER_MCP_WRITE_ENABLED: "true",
  DIALOGUE_ENABLED: "true",
  DIALOGUE_REPLIES_ENABLED: "true",
  DIALOGUE_TOKEN_KEY: TOKEN_KEY,
};

/** The `OWNER_CORE` binding of the gateway, served in-process by core's entrypoint functions on `coreEnv`. */
export function coreBinding(coreEnv: Env): OwnerCoreBinding {
  return {
    async handleOwnerMcp(req: OwnerMcpRpcRequest, auth) {
      const ctx = createExecutionContext();
      const answer = await handleOwnerMcp(coreEnv, ctx, req, auth);
      await waitOnExecutionContext(ctx);
      return answer;
    },
    spendOnce: (id, kind, expiresAt) => ownerSpendOnce(coreEnv, id, kind, expiresAt),
    isSpent: (id) => ownerIsSpent(coreEnv, id),
  };
}

/** A `fetch` into the owner gateway (paths relative to OWNER_ORIGIN) whose core uses `options.coreDb`. */
export function ownerStack(ownerEnv: OwnerEnv, options: OwnerStackOptions = {}) {
  const analytics = options.analytics ? { ANALYTICS: options.analytics } : {};
  const coreEnv: Env = { ...ownerEnv, ...CORE_FLAGS, ...options.core, ...analytics, CONTACTS: options.coreDb ?? db() };
  const gatewayEnv: Env = { ...ownerEnv, ...analytics, CONTACTS: undefined, OWNER_CORE: coreBinding(coreEnv) };
  return async (input: string | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request && init === undefined ? input : new Request(new URL(String(input), OWNER_ORIGIN), init);
    const ctx = createExecutionContext();
    const response = await gateway.fetch(request, gatewayEnv, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
}

export type OwnerFetch = ReturnType<typeof ownerStack>;

/** Headers of a modern owner `/mcp` request with a bearer token. */
export function ownerMcpHeaders(token: string, method: string, name?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
    authorization: `Bearer ${token}`,
  };
}

/** A modern owner `tools/call`: the HTTP response, its JSON-RPC message and the tool result. */
export async function ownerTool(fetcher: OwnerFetch, token: string, name: string, args: unknown) {
  const response = await fetcher("/mcp", {
    method: "POST",
    headers: ownerMcpHeaders(token, "tools/call", name),
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: modernMeta() } }),
  });
  const status = response.status;
  const [message] = status === 200 ? await readMessages(response) : [undefined as JsonRpcMessage | undefined];
  const result = message?.result as ToolCallResult | undefined;
  return {
    status,
    message,
    result,
    structured: result?.structuredContent as Record<string, any> | undefined,
    isError: result?.isError === true,
    text: JSON.stringify(message ?? null),
  };
}

/** POST /oauth/token through the stack. */
export function ownerTokenRequest(fetcher: OwnerFetch, form: Record<string, string>): Promise<Response> {
  return fetcher("/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
}
