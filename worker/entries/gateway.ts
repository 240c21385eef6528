/**
 * `magnt-observer` as the final public gateway (00 §3): static site, probe,
 * cards and A2A served here; `POST /mcp` forwarded to core over `CORE`. No
 * D1, no cron, no tool code. Wiring only.
 */
import type { Env } from "../config/env";
import { createDoor } from "../edge/pipeline";
import { forwardMcpToCore } from "../mcp/forward";
import { gatewayProbe } from "../site/probe";
import { publicRoutes } from "./public-routes";

const door = createDoor("gateway", publicRoutes({ mcpPost: forwardMcpToCore, mcpEventType: "http", probe: gatewayProbe }));

export default { fetch: door.fetch } satisfies ExportedHandler<Env>;
