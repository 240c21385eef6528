/**
 * The request pipeline every public deployable runs (01 §1):
 *
 *   start telemetry → host check → Origin check (where the route asks for it)
 *   → POST body guard → route → finish (exactly one event, in `finally`).
 *
 * Capabilities never see a request that failed a guard, and never log: they
 * annotate the request's telemetry and return a Response.
 */
import type { EventType, Role } from "../contracts/events";
import type { Env } from "../config/env";
import { readBodyWithinLimit } from "./body-limit";
import { validateHost } from "./host";
import { validateOrigin } from "./origin";
import { methodNotAllowed, serviceUnavailable, textResponse, withHeaders, withoutBody } from "./responses";
import { emitRequestEvent, startRequestTelemetry, type RequestTelemetry } from "./telemetry";

/** What a route handler receives: the request after every guard passed. */
export interface DoorRequest {
  readonly request: Request;
  readonly url: URL;
  readonly env: Env;
  readonly ctx: ExecutionContext;
  readonly role: Role;
  readonly telemetry: RequestTelemetry;
  /** The buffered POST body (≤ 24 KiB); null for other methods. */
  readonly body: Uint8Array | null;
  /** The request's Origin when present and allowed on an Origin-checked route. */
  readonly allowedOrigin: string | null;
}

export type Handler = (req: DoorRequest) => Response | Promise<Response>;

/**
 * How one route words the door's own rejections. The pipeline decides *when*
 * each applies; the route decides *how* it looks, so every answer of a route
 * carries that route's required headers (01 §2–§5, 04 §2).
 */
export interface RouteRejections {
  /** The 403 for a rejected Host or Origin; the MCP endpoint answers in JSON-RPC (01 §3, §4). */
  readonly forbidden: (message: "Host not allowed" | "Origin not allowed") => Response;
  /** The 413 for an oversized POST (the A2A bridge answers in JSON-RPC, 04 §3); CORS for an allowed Origin. */
  readonly tooLarge: (allowedOrigin: string | null) => Response;
  /** Any method outside `methods`; `allow` is derived from `methods` by the pipeline. */
  readonly methodNotAllowed: (req: DoorRequest, allow: string) => Response;
  /** The 503 when a handler throws (01 §1); CORS for an allowed Origin. */
  readonly unavailable: (allowedOrigin: string | null) => Response;
}

export interface Route extends RouteRejections {
  readonly eventType: EventType;
  /** Browser Origin validation applies (the MCP endpoints only, 01 §4). */
  readonly checkOrigin: boolean;
  /** Handlers by HTTP method; their keys, in order, are the route's `Allow` header. */
  readonly methods: Readonly<Record<string, Handler>>;
}

/** The plain-text rejections used everywhere except where a route words its own. */
export const textRejections: RouteRejections = {
  forbidden: () => textResponse(403, "Forbidden"),
  tooLarge: () => textResponse(413, "Request body exceeds 24 KiB"),
  methodNotAllowed: (_req, allow) => methodNotAllowed(allow),
  unavailable: () => serviceUnavailable(),
};

/** The `Allow` header of a route: its method map's keys. */
function allowHeader(route: Pick<Route, "methods">): string {
  return Object.keys(route.methods).join(", ");
}

/** Finds the route for a raw (not percent-decoded) pathname. Total: unknown paths get a fallback route. */
export type RouteLookup = (path: string) => Route;

interface DoorWorker {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

/**
 * The request's own view of the bindings, from the entry: storage's D1 retry
 * scope (09 §5) wraps `CONTACTS` per request, so the event can carry the
 * request's retry count. The edge never imports storage; the entry wires it.
 */
export type RequestScope = (env: Env) => { readonly env: Env; d1Retries(): number };

const unscoped: RequestScope = (env) => ({ env, d1Retries: () => 0 });

/** Builds the `fetch` handler of one deployable role from its route table. */
export function createDoor(role: Role, lookup: RouteLookup, scope: RequestScope = unscoped): DoorWorker {
  return {
    async fetch(request, env, ctx) {
      const url = new URL(request.url);
      const route = lookup(url.pathname);
      const telemetry = startRequestTelemetry(request, url, role, route.eventType);
      const seen: Seen = { allowedOrigin: null };
      const scoped = scope(env);
      let response: Response | undefined;
      try {
        response = await handleRequest({ request, url, env: scoped.env, ctx, role, telemetry }, route, seen);
      } catch {
        // Never logged: an exception's message or stack can quote visitor text or a secret, and logs must stay content-free (01 §1).
        telemetry.annotate({ outcome: "internal_error" });
        response = route.unavailable(seen.allowedOrigin);
      } finally {
        const d1Retries = scoped.d1Retries();
        if (d1Retries > 0) telemetry.annotate({ d1_retries: d1Retries });
        emitRequestEvent(telemetry.finish(response?.status ?? 503), env);
      }
      // HEAD answers never carry a body, whichever handler produced them.
      const final = request.method === "HEAD" ? withoutBody(response) : response;
      return withHeaders(final, { "x-magnt-observer": "1" });
    },
  };
}

type PendingRequest = Omit<DoorRequest, "body" | "allowedOrigin">;

/** What the guards learned, kept for a rejection built after a handler threw. */
interface Seen {
  allowedOrigin: string | null;
}

async function handleRequest(pending: PendingRequest, route: Route, seen: Seen): Promise<Response> {
  const { request, url, env, telemetry } = pending;

  if (!validateHost(url, env).ok) {
    telemetry.annotate({ outcome: "host_rejected" });
    return route.forbidden("Host not allowed");
  }

  let allowedOrigin: string | null = null;
  if (route.checkOrigin) {
    const origin = validateOrigin(request, env);
    if (!origin.ok) {
      telemetry.annotate({ outcome: "origin_rejected" });
      return route.forbidden("Origin not allowed");
    }
    allowedOrigin = origin.origin;
    seen.allowedOrigin = allowedOrigin;
  }

  let body: Uint8Array | null = null;
  if (request.method === "POST") {
    const read = await readBodyWithinLimit(request);
    if (!read.ok) {
      telemetry.annotate({ outcome: "body_too_large" });
      return route.tooLarge(allowedOrigin);
    }
    body = read.bytes;
  }

  const door: DoorRequest = { request, url, env, ctx: pending.ctx, role: pending.role, telemetry, body, allowedOrigin };
  const handler = route.methods[request.method];
  if (handler) return handler(door);
  telemetry.annotate({ outcome: "method_not_allowed" });
  return route.methodNotAllowed(door, allowHeader(route));
}
