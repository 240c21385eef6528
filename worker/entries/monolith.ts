/**
 * `magnt-observer` as the transitional public monolith (00 §3): every public
 * route served in place, plus (in a later release) the notification cron.
 * Wiring only.
 */
import { createDoor } from "../edge/pipeline";
import { servePublicMcp } from "../mcp/handler";
import { serveProbe } from "../site/probe";
import { publicRoutes } from "./public-routes";

const door = createDoor(
  "monolith",
  publicRoutes({ mcpPost: servePublicMcp, mcpEventType: "mcp_request", probe: serveProbe }),
);

export default {
  fetch: door.fetch,
} satisfies ExportedHandler<import("../config/env").Env>;
