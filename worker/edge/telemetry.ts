/**
 * Request telemetry (01 §9): exactly one content-free JSON line per request.
 *
 * This is the only module in worker/ that writes to the console. Everything a
 * capability wants to record goes through `annotate()` with fields from the
 * allow-listed `RequestEvent` contract, so no code path can log a message body,
 * a search text or a token by accident: there is no free-form logging to misuse.
 */
import { CONTROLLED_TEST_UA_PREFIX } from "../contracts/versions";
import { EVENT_FIELD_MAX } from "../contracts/limits";
import type { EventAnnotations, EventType, Outcome, RequestEvent, Role, ScheduledEvent } from "../contracts/events";
import { FORWARDING_HEADERS, type EdgeFact } from "../contracts/forwarding";
import type { Env } from "../config/env";
import { parseStrictInteger, sanitizeOrEmpty } from "./sanitize";
import { classifyUserAgent } from "./ua";
import { writeAnalyticsPoint } from "./analytics";

/** Paths whose query string and referrer never reach the event (01 §9.1). */
export function isSensitivePath(role: Role, path: string): boolean {
  if (role === "owner_gateway") return true;
  return (
    path === "/mcp" ||
    path.startsWith("/mcp/") ||
    path === "/.well-known/mcp/server-card.json" ||
    path === "/.well-known/ai-catalog.json" ||
    path === "/a2a" ||
    path === "/a2a/"
  );
}

const MCP_EVENT_TYPES: readonly EventType[] = ["mcp_request", "owner_mcp_request"];

/** The per-request telemetry record. Created first, emitted last, never shared between requests. */
export interface RequestTelemetry {
  readonly eventId: string;
  /** True when the User-Agent starts with the controlled-test prefix (not authentication). */
  readonly controlledTest: boolean;
  /** Adds allow-listed fields to this request's event; later values win. */
  annotate(fields: EventAnnotations): void;
  /** The outcome a handler has set so far, if any. */
  outcome(): Outcome | undefined;
  /** Builds the final event; the status is the response's, or 503 when none was produced. */
  finish(status: number): RequestEvent;
}

export function startRequestTelemetry(request: Request, url: URL, role: Role, eventType: EventType): RequestTelemetry {
  const startedAt = Date.now();
  const userAgentRaw = request.headers.get("user-agent") ?? "";
  const userAgent = sanitizeOrEmpty(userAgentRaw, EVENT_FIELD_MAX.userAgent);
  const { clientKind, clientName } = classifyUserAgent(userAgent);
  const sensitive = isSensitivePath(role, url.pathname);
  const facts = edgeFacts(request, role);
  const annotations: EventAnnotations = { event_type: eventType };

  const base = {
    event_id: crypto.randomUUID(),
    time: new Date(startedAt).toISOString(),
    role,
    event_type: eventType,
    method: sanitizeOrEmpty(request.method, EVENT_FIELD_MAX.method),
    host: sanitizeOrEmpty(url.hostname, EVENT_FIELD_MAX.host),
    path: sanitizeOrEmpty(url.pathname, EVENT_FIELD_MAX.path),
    query: sensitive ? "" : sanitizeOrEmpty(url.search, EVENT_FIELD_MAX.query),
    userAgent,
    clientKind,
    clientName,
    referrer: sensitive ? "" : sanitizeOrEmpty(request.headers.get("referer"), EVENT_FIELD_MAX.referrer),
    ...facts,
  };
  const controlledTest = userAgentRaw.startsWith(CONTROLLED_TEST_UA_PREFIX);

  return {
    eventId: base.event_id,
    controlledTest,
    annotate(fields) {
      Object.assign(annotations, fields);
    },
    outcome() {
      return annotations.outcome;
    },
    finish(status) {
      const finalType = annotations.event_type ?? eventType;
      // Copied with Object.assign, never as `{ ...base, … }`: in V8 11 an object that starts as a spread and then
      // gains fields outlives the young generation's collections, so each request's event filled the old one
      // (decision 213). The fields and their order are the same.
      const event = Object.assign({}, base) as RequestEvent;
      event.event_type = finalType;
      event.status = status;
      event.duration_ms = Math.max(0, Math.round(Date.now() - startedAt));
      event.outcome = annotations.outcome ?? (status < 400 ? "http_success" : "http_error");
      event.controlled_test = controlledTest;
      event.identity_verified = false;
      if (MCP_EVENT_TYPES.includes(finalType)) Object.assign(event, MCP_FIELD_DEFAULTS);
      if (finalType === "a2a_request") Object.assign(event, A2A_FIELD_DEFAULTS);
      const { event_type: _type, outcome: _outcome, ...rest } = annotations;
      return Object.assign(event, rest);
    },
  };
}

/** MCP fields are always present on MCP events, null when they do not apply (01 §9.2). */
const MCP_FIELD_DEFAULTS = {
  mcp_protocol_version: null,
  mcp_method: null,
  client_name: null,
  client_version: null,
  tool_name: null,
  resource_name: null,
  rpc_error_code: null,
  tool_result: null,
} as const;

/**
 * A2A fields are always present on `a2a_request` events (04 §7), null when the
 * request stopped before they were known, including the edge's 403/405/413.
 */
const A2A_FIELD_DEFAULTS = { a2a_protocol_version: null, a2a_method: null } as const;

interface EdgeFacts {
  country: string;
  colo: string;
  city: string;
  asn: number | null;
}

/**
 * Country, colo, city and ASN. The public Workers read `request.cf`; core has no
 * public route and learns them only from the gateway's edge-fact headers
 * (contracts/forwarding.ts), which it honours in the core role only (01 §2.3).
 */
function edgeFacts(request: Request, role: Role): EdgeFacts {
  if (role === "core") {
    const header = (fact: EdgeFact) => request.headers.get(FORWARDING_HEADERS.edge[fact]);
    return {
      country: sanitizeOrEmpty(header("country"), EVENT_FIELD_MAX.country),
      colo: sanitizeOrEmpty(header("colo"), EVENT_FIELD_MAX.colo),
      city: sanitizeOrEmpty(header("city"), EVENT_FIELD_MAX.city),
      asn: parseStrictInteger(header("asn")),
    };
  }
  const cf = (request as { cf?: Record<string, unknown> }).cf ?? {};
  return {
    country: sanitizeOrEmpty(cf.country, EVENT_FIELD_MAX.country),
    colo: sanitizeOrEmpty(cf.colo, EVENT_FIELD_MAX.colo),
    city: sanitizeOrEmpty(cf.city, EVENT_FIELD_MAX.city),
    asn: typeof cf.asn === "number" && Number.isInteger(cf.asn) ? cf.asn : null,
  };
}

/**
 * Writes the event as one JSON line, then the optional Analytics Engine point.
 * Telemetry must never change a response, so failures here are dropped on
 * purpose: there is nowhere safer to report them than the log that just failed.
 */
export function emitRequestEvent(event: RequestEvent, env: Env): void {
  writeLine(event);
  writeAnalyticsPoint(event, env);
}

/** Writes the one event of a cron run (05 §8). */
export function emitScheduledEvent(event: ScheduledEvent): void {
  writeLine(event);
}

function writeLine(event: RequestEvent | ScheduledEvent): void {
  try {
    console.log(JSON.stringify(event));
  } catch {
    // Intentionally ignored: telemetry must never change what the Worker does.
  }
}
