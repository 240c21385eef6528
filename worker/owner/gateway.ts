/**
 * The owner gateway's side of the owner capability (06 §2, §4, §5): owner
 * handlers as pipeline handlers, the gate on every answer no handler gives
 * (405, the `/mcp` preflight, paths that do not exist), the Origin check of
 * the consent form, the single-use ledger over `OWNER_CORE`, and owner `/mcp`
 * admitted here and handed to core. worker/entries/owner-routes.ts only
 * places these in the route table, with the MCP endpoint's wording.
 *
 * Threat model: this Worker faces the internet and holds the GitHub secret
 * and the signing key, but no data. So it hands core only the token it
 * verified, its verified claims and a request encoded by the one owner wire
 * (contracts/owner-wire.ts: no `x-magnt-*`, `cf-*`, `Authorization` or
 * `Cookie` crosses; core re-verifies the token itself, and identity never
 * travels in a header). With `OWNER_MCP_ENABLED` off every path — known or
 * not, every method — answers 404 `owner_disabled`; misconfigured, 503
 * `owner_misconfigured`. Nothing here bundles the MCP SDK or a tool.
 */
import type { Env } from "../config/env";
import { decodeOwnerMcpResponse, encodeOwnerMcpRequest, type OwnerCoreBinding } from "../contracts/owner-wire";
import { validateOrigin } from "../edge/origin";
import type { DoorRequest, Handler, RouteRejections } from "../edge/pipeline";
import { notFound, serviceUnavailable, textResponse, withHeaders } from "../edge/responses";
import { authenticateOwnerMcp } from "./bearer";
import type { OwnerEnv } from "./config";
import { closedGate, type OwnerAnswer, type OwnerDeps, type OwnerHandler, type OwnerInput, type OwnerStep, type SpentLedger } from "./http";
import { serveConsent } from "./oauth/authorize";

const NO_STORE = { "Cache-Control": "no-store" } as const;

/** Headers a route adds to every answer of a handler (the MCP endpoint's, 02 §1). */
export type AnswerHeaders = (req: DoorRequest) => Record<string, string>;

const noHeaders: AnswerHeaders = () => ({});

/** A fixed error for a missing binding; the token endpoint turns any ledger failure into 503 `core_unavailable`. */
class CoreUnavailable extends Error {
  constructor() {
    super("owner core unavailable");
    this.name = "CoreUnavailable";
  }
}

/** The single-use ledger is core's (06 §5): every call crosses `OWNER_CORE`. */
export function coreSpentLedger(core: OwnerCoreBinding | undefined): SpentLedger {
  return {
    spendOnce(id, kind, expiresAt) {
      return core === undefined ? Promise.reject(new CoreUnavailable()) : core.spendOnce(id, kind, expiresAt);
    },
    isSpent(id) {
      return core === undefined ? Promise.reject(new CoreUnavailable()) : core.isSpent(id);
    },
  };
}

/** The owner gateway's dependencies: the wall clock and core's ledger. */
export function gatewayDeps(env: Env): OwnerDeps {
  return { now: () => Date.now(), spent: coreSpentLedger(env.OWNER_CORE) };
}

/** Records the answer's telemetry facts and sends it `no-store` (06 §2), with `headers` added. */
export function sendOwnerAnswer(req: DoorRequest, answer: OwnerAnswer, headers: Record<string, string> = {}): Response {
  req.telemetry.annotate({
    owner_step: answer.step,
    ...(answer.outcome !== null ? { outcome: answer.outcome } : {}),
    ...(answer.forwardedToCore === true ? { forwarded_to_core: true } : {}),
  });
  return withHeaders(answer.response, Object.assign({}, NO_STORE, headers));
}

/** An owner handler as a pipeline handler on the owner gateway. */
export function ownerHandler(handler: OwnerHandler, headers: AnswerHeaders = noHeaders): Handler {
  return async (req) => sendOwnerAnswer(req, await handler({ request: req.request, body: req.body }, req.env, gatewayDeps(req.env)), headers(req));
}

/** 405 on a known owner path (`base` words it) — or, with the owner MCP off or misconfigured, the gate's 404 / 503. */
export function gatedMethodNotAllowed(step: OwnerStep, base: RouteRejections["methodNotAllowed"]): RouteRejections["methodNotAllowed"] {
  return (req, allow) => {
    const closed = closedGate(req.env, "gateway", step);
    if (closed !== null) return sendOwnerAnswer(req, closed);
    req.telemetry.annotate({ owner_step: step });
    return base(req, allow);
  };
}

/** Any method on a path the owner gateway does not have: 404, or the gate's 404 / 503. */
export const unknownOwnerPath: RouteRejections["methodNotAllowed"] = (req) =>
  sendOwnerAnswer(req, closedGate(req.env, "gateway", "other") ?? { response: notFound(), outcome: null, step: "other" });

/** `POST /oauth/authorize`: the Origin check of 01 §4 applies to this method only (the consent form's POST), before the gate. */
export const serveConsentForm: Handler = (req) => {
  if (!validateOrigin(req.request, req.env).ok) {
    req.telemetry.annotate({ owner_step: "consent", outcome: "origin_rejected" });
    return textResponse(403, "Forbidden");
  }
  return ownerHandler(serveConsent)(req);
};

/**
 * `OPTIONS /mcp` (01 §4): the MCP endpoint's preflight plus `Authorization`,
 * which only the owner gateway accepts; the gate's 404 / 503 first.
 */
export function ownerMcpPreflight(preflight: Handler, headers: AnswerHeaders): Handler {
  return async (req) => {
    const closed = closedGate(req.env, "gateway", "mcp");
    if (closed !== null) return sendOwnerAnswer(req, closed, headers(req));
    req.telemetry.annotate({ owner_step: "mcp" });
    const response = await preflight(req);
    const allowed = response.headers.get("Access-Control-Allow-Headers");
    return allowed === null ? response : withHeaders(response, { "Access-Control-Allow-Headers": `${allowed}, Authorization` });
  };
}

/**
 * `POST /mcp`: the gate and the bearer check here (06 §4), then core serves
 * it over `OWNER_CORE` (06 §5) and its answer is returned as is. A missing or
 * throwing binding, or an answer outside the contract, is 503
 * `core_unavailable`; the binding's error is not kept (it may describe core's
 * internals, 01 §1).
 */
export const forwardOwnerMcp: OwnerHandler = async (input: OwnerInput, env: OwnerEnv, deps: OwnerDeps) => {
  const admission = await authenticateOwnerMcp(input, env, deps, "gateway");
  if (!admission.ok) return admission.answer;
  let wire: unknown = null;
  if (env.OWNER_CORE !== undefined) {
    try {
      wire = await env.OWNER_CORE.handleOwnerMcp(encodeOwnerMcpRequest(input.request, input.body), {
        token: admission.token,
        claims: admission.claims,
      });
    } catch {
      wire = null;
    }
  }
  const answer = decodeOwnerMcpResponse(wire);
  return answer.ok
    ? { response: answer.response, outcome: answer.outcome, step: "mcp", forwardedToCore: true }
    : { response: serviceUnavailable(), outcome: "core_unavailable", step: "mcp", forwardedToCore: true };
};
