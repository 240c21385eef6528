/**
 * The bearer check at owner `/mcp` (06 §4), shared by the owner gateway and
 * core (which re-verifies every token with its own secrets, 06 §5).
 *
 * Threat model: identity comes only from a token this code verifies — never
 * from a header such as `x-magnt-*` or anything claims-like, which are not even
 * read. A token is valid only with our MAC (token key), `alg` HS256, `typ`
 * `magnt-at`, our issuer and audience, the pinned GitHub id, the current epoch,
 * `exp` > now and `iat` ≤ now + 60 s. The challenges follow RFC 6750 §3 and the
 * MCP authorization spec so a standard client can discover the server and step
 * up its scope.
 */
import type { Outcome } from "../contracts/events";
import type { OwnerConfig, OwnerEnv, OwnerRole } from "./config";
import { openGate, type OwnerAnswer, type OwnerDeps, type OwnerInput } from "./http";
import type { OwnerKeys } from "./oauth/keys";
import { verifyAccessToken, type AccessClaims } from "./oauth/objects";
import { formatScope, scopesOf, type OwnerScope } from "./oauth/scopes";

export type BearerDecision =
  | { readonly kind: "missing" }
  | { readonly kind: "invalid" }
  | { readonly kind: "insufficient_scope" }
  | { readonly kind: "valid"; readonly token: string; readonly claims: AccessClaims; readonly scopes: readonly OwnerScope[] };

/** The token of an `Authorization: Bearer …` header, or null. */
export function readBearer(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header === null) return null;
  const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
  return match ? match[1]! : null;
}

/** Decides the bearer check of 06 §4 (read scope; write scopes are the tools' per-tool challenge). */
export async function decideBearer(request: Request, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<BearerDecision> {
  const token = readBearer(request);
  if (token === null) return { kind: "missing" };
  const claims = await verifyAccessToken(config, keys, token, nowMs);
  if (claims === null) return { kind: "invalid" };
  const scopes = scopesOf(claims.scope);
  if (!scopes.includes("owner.read")) return { kind: "insufficient_scope" };
  return { kind: "valid", token, claims, scopes };
}

/** `{OWNER_ORIGIN}/.well-known/oauth-protected-resource`. */
export function resourceMetadataUrl(config: OwnerConfig): string {
  return `${config.ownerOrigin}/.well-known/oauth-protected-resource`;
}

/** Scopes advertised by the 401 challenge: `owner.publish` never; `owner.write` only with the write flag on. */
export function advertisedScope(config: OwnerConfig): string {
  return config.writeEnabled ? "owner.read owner.write" : "owner.read";
}

/** The `WWW-Authenticate` value of a 401 (06 §4), with `error="invalid_token"` when a token was sent. */
export function unauthorizedChallenge(config: OwnerConfig, invalidToken: boolean): string {
  const error = invalidToken ? `error="invalid_token", ` : "";
  return `Bearer ${error}resource_metadata="${resourceMetadataUrl(config)}", scope="${advertisedScope(config)}"`;
}

/** The `WWW-Authenticate` value of a 403 `insufficient_scope` naming the scopes needed (06 §4). */
export function insufficientScopeChallenge(config: OwnerConfig, needed: readonly OwnerScope[]): string {
  return `Bearer error="insufficient_scope", scope="${formatScope(needed)}", resource_metadata="${resourceMetadataUrl(config)}"`;
}

export interface BearerRejection {
  readonly response: Response;
  readonly outcome: Outcome;
}

/** The 401/403 answer of a rejected bearer check; null for a valid one. */
export function renderBearerRejection(decision: BearerDecision, config: OwnerConfig): BearerRejection | null {
  switch (decision.kind) {
    case "valid":
      return null;
    case "missing":
      return { response: challenge(401, "unauthorized", unauthorizedChallenge(config, false)), outcome: "token_rejected" };
    case "invalid":
      return { response: challenge(401, "invalid_token", unauthorizedChallenge(config, true)), outcome: "token_rejected" };
    case "insufficient_scope":
      return {
        response: challenge(403, "insufficient_scope", insufficientScopeChallenge(config, ["owner.read"])),
        outcome: "scope_rejected",
      };
  }
}

/** The write tools' step-up answer (06 §4 last row): 403 naming every scope the tool needs. */
export function insufficientScopeResponse(config: OwnerConfig, needed: readonly OwnerScope[]): BearerRejection {
  return { response: challenge(403, "insufficient_scope", insufficientScopeChallenge(config, needed)), outcome: "scope_rejected" };
}

function challenge(status: number, error: string, wwwAuthenticate: string): Response {
  return new Response(JSON.stringify({ error }), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", "WWW-Authenticate": wwwAuthenticate },
  });
}

export type OwnerAuthentication =
  | { readonly ok: true; readonly token: string; readonly claims: AccessClaims; readonly scopes: readonly OwnerScope[]; readonly config: OwnerConfig }
  | { readonly ok: false; readonly answer: OwnerAnswer };

/**
 * The whole `/mcp` admission of one Worker: gate (404 off, 503 misconfigured),
 * then the bearer check. `ok` carries what the caller forwards (the raw token
 * and its verified claims); otherwise the answer to send as is.
 */
export async function authenticateOwnerMcp(
  input: OwnerInput,
  env: OwnerEnv,
  deps: OwnerDeps,
  role: OwnerRole = "gateway",
): Promise<OwnerAuthentication> {
  const gate = await openGate(env, role, "mcp", input.request.url);
  if (!gate.open) return { ok: false, answer: gate.answer };
  const decision = await decideBearer(input.request, gate.config, gate.keys, deps.now());
  if (decision.kind === "valid") {
    return { ok: true, token: decision.token, claims: decision.claims, scopes: decision.scopes, config: gate.config };
  }
  const rejection = renderBearerRejection(decision, gate.config)!;
  return { ok: false, answer: { response: rejection.response, outcome: rejection.outcome, step: "mcp" } };
}
