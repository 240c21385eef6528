/**
 * `magnt-observer` as the transitional public monolith (00 §3): every public
 * route served in place, plus the cron run. Wiring only.
 */
import type { Env } from "../config/env";
import { createDoor } from "../edge/pipeline";
import { servePublicMcp } from "../mcp/handler";
import { runScheduled } from "../notify/scheduler";
import { serveProbe } from "../site/probe";
import { publicRoutes } from "./public-routes";

const door = createDoor(
  "monolith",
  publicRoutes({ mcpPost: servePublicMcp, mcpEventType: "mcp_request", probe: serveProbe }),
);

export default {
  fetch: door.fetch,
  async scheduled(controller, env) {
    await runScheduled(controller, env, "monolith");
  },
} satisfies ExportedHandler<Env>;
