/**
 * The owner gateway's route table (06 §2): the OAuth server's endpoints and
 * owner `/mcp`, which is admitted here (gate + bearer check, 06 §4) and then
 * served by core over the `OWNER_CORE` Service Binding (06 §5). Path matching
 * is exact and case-sensitive on the raw pathname; every event is `http` with
 * its `owner_step` (06 §9), and every path is sensitive (query and referrer
 * blanked, 01 §9.1).
 *
 * Threat model: this Worker faces the internet and holds the GitHub secret
 * and the signing key, but no data. So it forwards to core only the token it
 * verified, its verified claims and a cleaned request: incoming `x-magnt-*`,
 * `cf-*`, `Authorization` and `Cookie` headers never cross the binding (core
 * re-verifies the token itself, and identity never travels in a header).
 * With `OWNER_MCP_ENABLED` off every path — known or not, every method —
 * answers 404 `owner_disabled`; misconfigured, 503 `owner_misconfigured`.
 * Nothing here bundles the MCP SDK or a tool (`mcp/http.ts` only).
 */
import type { Env, OwnerMcpRpcRequest, OwnerMcpRpcResponse } from "../config/env";
import { textRejections, type DoorRequest, type Handler, type Route, type RouteLookup, type RouteRejections } from "../edge/pipeline";
import { notFound, serviceUnavailable, textResponse, withHeaders } from "../edge/responses";
import { validateOrigin } from "../edge/origin";
import { mcpAnswerHeaders, mcpRejections, serveMcpPreflight } from "../mcp/http";
import {
  authenticateOwnerMcp,
  resolveOwner,
  serveAuthorizationServerMetadata,
  serveAuthorize,
  serveConsent,
  serveGithubCallback,
  serveOAuthPreflight,
  serveProtectedResourceMetadata,
  serveRegister,
  serveToken,
  type OwnerAnswer,
  type OwnerDeps,
  type OwnerHandler,
  type OwnerStep,
  type SpentLedger,
} from "../owner/index";

const NO_STORE = { "Cache-Control": "no-store" } as const;

/** A fixed error for a missing binding; the token endpoint turns any ledger failure into 503 `core_unavailable`. */
class CoreUnavailable extends Error {
  constructor() {
    super("owner core unavailable");
    this.name = "CoreUnavailable";
  }
}

/** The single-use ledger is core's (06 §5): every call crosses `OWNER_CORE`. */
function coreLedger(env: Env): SpentLedger {
  return {
    spendOnce(id, kind, expiresAt) {
      if (env.OWNER_CORE === undefined) return Promise.reject(new CoreUnavailable());
      return env.OWNER_CORE.spendOnce(id, kind, expiresAt);
    },
    isSpent(id) {
      if (env.OWNER_CORE === undefined) return Promise.reject(new CoreUnavailable());
      return env.OWNER_CORE.isSpent(id);
    },
  };
}

function ownerDeps(env: Env): OwnerDeps {
  return { now: () => Date.now(), spent: coreLedger(env) };
}

/** Records the answer's telemetry facts and sends it `no-store` (06 §2). */
function send(req: DoorRequest, answer: OwnerAnswer, headers: Record<string, string> = {}): Response {
  req.telemetry.annotate({ owner_step: answer.step, ...(answer.outcome !== null ? { outcome: answer.outcome } : {}) });
  return withHeaders(answer.response, { ...NO_STORE, ...headers });
}

/** An owner handler as a pipeline handler. */
function owner(handler: OwnerHandler): Handler {
  return async (req) => send(req, await handler({ request: req.request, body: req.body }, req.env, ownerDeps(req.env)));
}

/** The gate's answer when the owner MCP is off or misconfigured here; null when it is ready (synchronous: no keys needed). */
function closedAnswer(env: Env, step: OwnerStep): OwnerAnswer | null {
  const state = resolveOwner(env, "gateway");
  if (state.kind === "disabled") return { response: notFound(), outcome: "owner_disabled", step };
  if (state.kind === "misconfigured") return { response: serviceUnavailable(), outcome: "owner_misconfigured", step };
  return null;
}

/** 405 on a known path — or, with the owner MCP off or misconfigured, the gate's 404 / 503. */
function ownerMethodNotAllowed(step: OwnerStep, base: RouteRejections = textRejections) {
  return (req: DoorRequest, allow: string): Response => {
    const closed = closedAnswer(req.env, step);
    if (closed !== null) return send(req, closed);
    req.telemetry.annotate({ owner_step: step });
    return base.methodNotAllowed(req, allow);
  };
}

function route(step: OwnerStep, methods: Record<string, Handler>): Route {
  return { eventType: "http", checkOrigin: false, methods, ...textRejections, methodNotAllowed: ownerMethodNotAllowed(step) };
}

/** `POST /oauth/authorize`: the Origin check of 01 §4 applies to this method only (the consent form's POST). */
const consent: Handler = async (req) => {
  if (!validateOrigin(req.request, req.env).ok) {
    req.telemetry.annotate({ owner_step: "consent", outcome: "origin_rejected" });
    return textResponse(403, "Forbidden");
  }
  return owner(serveConsent)(req);
};

// ---------------------------------------------------------------- /mcp

/** `OPTIONS /mcp` (01 §4): the public preflight plus `Authorization`, which only the owner gateway accepts. */
const mcpPreflight: Handler = (req) => {
  const closed = closedAnswer(req.env, "mcp");
  if (closed !== null) return send(req, closed, mcpAnswerHeaders(req.allowedOrigin));
  req.telemetry.annotate({ owner_step: "mcp" });
  const response = serveMcpPreflight(req);
  return req.allowedOrigin === null
    ? response
    : withHeaders(response, {
        "Access-Control-Allow-Headers": "Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Authorization",
      });
};

/** Headers that never cross the binding: identity, cookies and anything core might honour as an edge fact. */
function crossesBinding(name: string): boolean {
  const lower = name.toLowerCase();
  return !(lower === "authorization" || lower === "cookie" || lower.startsWith("x-magnt-") || lower.startsWith("cf-"));
}

/** The structured-clone request of 06 §5, with this edge's facts for core's event (01 §2.3). */
function rpcRequest(req: DoorRequest): OwnerMcpRpcRequest {
  const headers: [string, string][] = [...req.request.headers].filter(([name]) => crossesBinding(name));
  const cf = (req.request as { cf?: Record<string, unknown> }).cf ?? {};
  const fact = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");
  headers.push(
    ["x-magnt-edge-country", fact(cf.country)],
    ["x-magnt-edge-city", fact(cf.city)],
    ["x-magnt-edge-colo", fact(cf.colo)],
    ["x-magnt-edge-asn", fact(cf.asn)],
  );
  const body = req.body === null ? null : (req.body.buffer.slice(req.body.byteOffset, req.body.byteOffset + req.body.byteLength) as ArrayBuffer);
  return { method: "POST", url: req.request.url, headers, body };
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** `POST /mcp`: gate and bearer check here (06 §4), then core serves it (06 §5); core's answer is returned as is. */
const mcpPost: Handler = async (req) => {
  const headers = mcpAnswerHeaders(req.allowedOrigin);
  const admission = await authenticateOwnerMcp({ request: req.request, body: req.body }, req.env, ownerDeps(req.env), "gateway");
  if (!admission.ok) return send(req, admission.answer, headers);

  req.telemetry.annotate({ owner_step: "mcp", forwarded_to_core: true });
  const core = req.env.OWNER_CORE;
  let answer: OwnerMcpRpcResponse | null = null;
  if (core !== undefined) {
    try {
      answer = await core.handleOwnerMcp(rpcRequest(req), { token: admission.token, claims: admission.claims });
    } catch {
      // The binding's error may describe core's internals; it is not kept (01 §1).
    }
  }
  if (answer === null || !Number.isInteger(answer.status) || answer.status < 200 || answer.status > 599) {
    req.telemetry.annotate({ outcome: "core_unavailable" });
    return mcpRejections.unavailable(req.allowedOrigin);
  }
  if (answer.status === 401) req.telemetry.annotate({ outcome: "token_rejected" });
  else if (answer.status === 403) req.telemetry.annotate({ outcome: "scope_rejected" });
  else if (answer.status === 404) req.telemetry.annotate({ outcome: "owner_disabled" });
  const response = new Response(NULL_BODY_STATUSES.has(answer.status) ? null : answer.body, {
    status: answer.status,
    headers: answer.headers,
  });
  return withHeaders(response, headers);
};

// ---------------------------------------------------------------- the table

export function ownerRoutes(): RouteLookup {
  const protectedResource = route("metadata", { GET: owner(serveProtectedResourceMetadata) });
  const exact = new Map<string, Route>([
    ["/.well-known/oauth-protected-resource", protectedResource],
    ["/.well-known/oauth-protected-resource/mcp", protectedResource],
    ["/.well-known/oauth-authorization-server", route("metadata", { GET: owner(serveAuthorizationServerMetadata) })],
    ["/oauth/register", route("register", { POST: owner(serveRegister), OPTIONS: owner(serveOAuthPreflight) })],
    ["/oauth/authorize", route("authorize", { GET: owner(serveAuthorize), POST: consent })],
    ["/oauth/github/callback", route("github_callback", { GET: owner(serveGithubCallback) })],
    ["/oauth/token", route("other", { POST: owner(serveToken), OPTIONS: owner(serveOAuthPreflight) })],
    [
      "/mcp",
      {
        eventType: "http",
        checkOrigin: true,
        methods: { POST: mcpPost, OPTIONS: mcpPreflight },
        ...mcpRejections,
        methodNotAllowed: ownerMethodNotAllowed("mcp", mcpRejections),
      },
    ],
  ]);
  const elsewhere: Route = {
    eventType: "http",
    checkOrigin: false,
    methods: {},
    ...textRejections,
    methodNotAllowed: (req) => send(req, closedAnswer(req.env, "other") ?? { response: notFound(), outcome: null, step: "other" }),
  };
  return (path) => exact.get(path) ?? elsewhere;
}
