/**
 * `magnt-core` (00 §3): holds D1, executes the public tools behind the
 * gateway, runs the cron. No public route: reachable only through Service
 * Bindings. Wiring only.
 */
import type { Env } from "../config/env";
import { createDoor } from "../edge/pipeline";
import { dialogueServed, servePublicMcp } from "../mcp/public-server";
import { runScheduled } from "../notify/index";
import { localProbe } from "../site/probe";
import { coreRoutes } from "./core-routes";

const door = createDoor("core", coreRoutes({ mcpPost: servePublicMcp, probe: localProbe(dialogueServed) }));

export default {
  fetch: door.fetch,
  async scheduled(controller, env) {
    await runScheduled(controller, env, "core");
  },
} satisfies ExportedHandler<Env>;
