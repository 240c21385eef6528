import type { RequestEvent } from "../contracts/events";
import type { Env } from "../config/env";

/**
 * One Analytics Engine point per request when the optional `ANALYTICS` binding
 * exists (01 §13). Only coarse, allow-listed dimensions: no User-Agent,
 * referrer, query, ids or tool-result detail. Errors are swallowed because
 * analytics must never affect a response.
 */
export function writeAnalyticsPoint(event: RequestEvent, env: Env): void {
  if (!env.ANALYTICS) return;
  try {
    env.ANALYTICS.writeDataPoint({
      blobs: [
        event.path,
        event.method,
        event.event_type,
        event.outcome,
        event.mcp_method ?? "",
        event.tool_name ?? "",
        event.clientKind,
        event.clientName,
        event.country,
        event.colo,
      ],
      doubles: [1, event.status, event.duration_ms],
      indexes: [event.host],
    });
  } catch {
    // Intentionally ignored: see the function comment.
  }
}
