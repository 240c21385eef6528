/**
 * `magnt-owner`, the owner gateway (00 §3, 06 §1–§2): the local OAuth server
 * pinned to one GitHub account and owner `/mcp`, forwarded to core's
 * `OwnerEntrypoint` over `OWNER_CORE`. No D1, no cron, no tool code. Wiring only.
 */
import type { Env } from "../config/env";
import { createDoor } from "../edge/pipeline";
import { ownerRoutes } from "./owner-routes";

const door = createDoor("owner_gateway", ownerRoutes());

export default { fetch: door.fetch } satisfies ExportedHandler<Env>;
