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
import { serviceUnavailable, textResponse, withHeaders, withoutBody } from "./responses";
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

export interface Route {
  readonly eventType: EventType;
  /** Browser Origin validation applies (the MCP endpoints only, 01 §4). */
  readonly checkOrigin: boolean;
  /** Handlers by HTTP method; any other method gets `methodNotAllowed`. */
  readonly methods: Readonly<Record<string, Handler>>;
  readonly methodNotAllowed: Handler;
  /** The 403 for a rejected Host or Origin; the MCP endpoint answers in JSON-RPC (01 §3, §4). */
  readonly forbidden: (message: "Host not allowed" | "Origin not allowed") => Response;
  /** The 413 for an oversized POST; the A2A bridge answers in JSON-RPC (04 §3). */
  readonly tooLarge: () => Response;
}

/** The plain-text rejections used everywhere except where a route words its own. */
export const textRejections = {
  forbidden: () => textResponse(403, "Forbidden"),
  tooLarge: () => textResponse(413, "Request body exceeds 24 KiB"),
} as const;


/** Finds the route for a raw (not percent-decoded) pathname. Total: unknown paths get a fallback route. */
export type RouteLookup = (path: string) => Route;

export interface DoorWorker {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

/** Builds the `fetch` handler of one deployable role from its route table. */
export function createDoor(role: Role, lookup: RouteLookup): DoorWorker {
  return {
    async fetch(request, env, ctx) {
      const url = new URL(request.url);
      const route = lookup(url.pathname);
      const telemetry = startRequestTelemetry(request, url, role, route.eventType);
      let response: Response | undefined;
      try {
        response = await handleRequest({ request, url, env, ctx, role, telemetry }, route);
      } catch {
        // The exception, its message and its stack are never logged (01 §1).
        telemetry.annotate({ outcome: "internal_error" });
        response = serviceUnavailable();
      } finally {
        emitRequestEvent(telemetry.finish(response?.status ?? 503), env);
      }
      // HEAD answers never carry a body, whichever handler produced them.
      const final = request.method === "HEAD" ? withoutBody(response) : response;
      return withHeaders(final, { "x-magnt-observer": "1" });
    },
  };
}

type PendingRequest = Omit<DoorRequest, "body" | "allowedOrigin">;

async function handleRequest(pending: PendingRequest, route: Route): Promise<Response> {
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
  }

  let body: Uint8Array | null = null;
  if (request.method === "POST") {
    const read = await readBodyWithinLimit(request);
    if (!read.ok) {
      telemetry.annotate({ outcome: "body_too_large" });
      return route.tooLarge();
    }
    body = read.bytes;
  }

  const door: DoorRequest = { ...pending, body, allowedOrigin };
  const handler = route.methods[request.method];
  if (handler) return handler(door);
  telemetry.annotate({ outcome: "method_not_allowed" });
  return route.methodNotAllowed(door);
}
