/**
 * `magnt-observer` as the transitional public monolith (00 §3): every public
 * route served in place, plus the cron run. Wiring only.
 */
import type { Env } from "../config/env";
import { createDoor } from "../edge/pipeline";
import { dialogueServed, servePublicMcp } from "../mcp/public-server";
import { runScheduled } from "../notify/index";
import { localProbe } from "../site/probe";
import { scopeD1 } from "../storage/d1-retry";
import { publicRoutes } from "./public-routes";

const door = createDoor(
  "monolith",
  publicRoutes({ mcpPost: servePublicMcp, mcpEventType: "mcp_request", probe: localProbe(dialogueServed) }),
  scopeD1,
);

export default {
  fetch: door.fetch,
  async scheduled(controller, env) {
    await runScheduled(controller, env, "monolith");
  },
} satisfies ExportedHandler<Env>;
