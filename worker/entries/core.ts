/**
 * `magnt-core` (00 §3): holds D1, executes the public tools behind the
 * gateway and the owner tools behind the owner gateway (`OwnerEntrypoint`),
 * runs the cron. No public route: reachable only through Service Bindings.
 * Wiring only.
 *
 * The spent owner OAuth ids are deleted by the cron's hourly cleanup
 * (notify/cleanup.ts), which core already runs.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import type { Env } from "../config/env";
import type { OwnerMcpRpcResponse } from "../contracts/owner-wire";
import { createDoor } from "../edge/pipeline";
import { handleOwnerMcp, ownerIsSpent, ownerSpendOnce } from "../mcp/owner-rpc";
import { dialogueServed, servePublicMcp } from "../mcp/public-server";
import { runScheduled } from "../notify/index";
import { localProbe } from "../site/probe";
import { scopeD1 } from "../storage/d1-retry";
import { coreRoutes } from "./core-routes";

const door = createDoor("core", coreRoutes({ mcpPost: servePublicMcp, probe: localProbe(dialogueServed) }), scopeD1);

/**
 * The owner gateway's binding `OWNER_CORE` (06 §5). RPC only: not reachable
 * over HTTP. Every argument is untrusted; the modules behind it refuse when
 * core's own `OWNER_MCP_ENABLED` is off and verify every token again.
 */
export class OwnerEntrypoint extends WorkerEntrypoint<Env> {
  handleOwnerMcp(req: unknown, auth: unknown): Promise<OwnerMcpRpcResponse> {
    return handleOwnerMcp(this.env, this.ctx, req, auth);
  }

  spendOnce(id: unknown, kind: unknown, expiresAt: unknown): Promise<boolean> {
    return ownerSpendOnce(this.env, id, kind, expiresAt);
  }

  isSpent(id: unknown): Promise<boolean> {
    return ownerIsSpent(this.env, id);
  }
}

export default {
  fetch: door.fetch,
  async scheduled(controller, env) {
    await runScheduled(controller, env, "core");
  },
} satisfies ExportedHandler<Env>;
