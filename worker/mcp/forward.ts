/**
 * The gateway's `POST /mcp` (01 §2.3): forward to core over the `CORE`
 * Service Binding and return core's answer unchanged. The gateway's own event
 * is `http` with `forwarded_to_core: true` and no MCP fields; core emits the
 * tool-level event, so no call is counted twice. SDK-free: the gateway bundle
 * carries no MCP server code.
 */
import type { DoorRequest } from "../edge/pipeline";
import { forwardedRequest } from "../edge/forward";
import { mcpRejections } from "./http";

export async function forwardMcpToCore(req: DoorRequest): Promise<Response> {
  req.telemetry.annotate({ forwarded_to_core: true });
  const core = req.env.CORE;
  if (core) {
    try {
      return await core.fetch(await forwardedRequest(req));
    } catch {
      // The binding's error may describe core's internals; it is not kept (01 §1).
    }
  }
  req.telemetry.annotate({ outcome: "core_unavailable" });
  return mcpRejections.unavailable(req.allowedOrigin);
}
