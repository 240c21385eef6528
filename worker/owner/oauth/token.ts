/**
 * `POST /oauth/token` (06 §3.5): the authorization-code grant with PKCE S256,
 * and rotating refresh tokens with reuse detection and an absolute family
 * lifetime. There is no revocation endpoint: bumping `OWNER_TOKEN_EPOCH`
 * (or rotating the signing key) revokes everything.
 *
 * Threat model:
 * - a stolen code: useless without the PKCE verifier, bound to one client and
 *   one redirect URI, valid 60 s and spendable once (core's `spendOnce`);
 * - a stolen refresh token: each one is spendable once; presenting a spent one
 *   revokes its whole family, so either the thief or the owner's client loses,
 *   and the loss is noticed; a family ends 90 days after it began whatever
 *   happens, so GitHub is asked again at least that often;
 * - scope creep on refresh: a refresh may narrow the scope, never widen it.
 *
 * RFC 6749 §5.2 errors are pinned in 06 §3.5: a PKCE mismatch, a
 * `redirect_uri` mismatch and a code issued to another client are all
 * `invalid_grant`; a wider refresh scope is `invalid_scope`.
 */
import { jsonResponse } from "../../edge/responses";
import type { OwnerEnv } from "../config";
import { ANY_ORIGIN, bodyText, gated, oauthJsonError, singleParams, type OwnerAnswer, type OwnerContext, type OwnerDeps, type OwnerInput, type OwnerStep } from "../http";
import { constantTimeEqual } from "../../lib/constant-time";
import { clientIdHash, sha256Base64url } from "./encoding";
import { isKnownClient } from "./clients";
import { CLIENT_ID_MAX, issueTokens, LIFETIME, verifyCode, verifyRefreshToken, type IssuedTokens } from "./objects";
import { formatScope, isSubset, parseScope, scopesOf } from "./scopes";
import { seconds } from "./signed";

/** RFC 7636 §4.1: the verifier is 43–128 unreserved characters. */
const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

export type TokenError =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "invalid_scope"
  | "invalid_target"
  | "unsupported_grant_type";

export type TokenDecision =
  | { readonly kind: "issued"; readonly step: OwnerStep; readonly tokens: IssuedTokens; readonly scope: string }
  | { readonly kind: "refused"; readonly step: OwnerStep; readonly error: TokenError; readonly description: string }
  /** Core (the single-use ledger) could not be reached: nothing was issued. */
  | { readonly kind: "unavailable"; readonly step: OwnerStep };

const refuse = (step: OwnerStep, error: TokenError, description: string): TokenDecision => ({ kind: "refused", step, error, description });

/** Decides a token request from its headers and form body. */
export async function decideToken(request: Request, form: string, context: OwnerContext): Promise<TokenDecision> {
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (contentType !== "application/x-www-form-urlencoded") {
    return refuse("other", "invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  const params = singleParams(new URLSearchParams(form));
  if (params === null) return refuse("other", "invalid_request", "A parameter was sent more than once.");
  const grantType = params.get("grant_type");
  if (grantType === "authorization_code") return decideCodeGrant(params, context);
  if (grantType === "refresh_token") return decideRefreshGrant(params, context);
  return refuse("other", "unsupported_grant_type", "Only authorization_code and refresh_token are supported.");
}

async function decideCodeGrant(params: ReadonlyMap<string, string>, { config, keys, deps }: OwnerContext): Promise<TokenDecision> {
  const step = "token_code";
  const nowMs = deps.now();
  const code = params.get("code");
  const redirectUri = params.get("redirect_uri");
  const clientId = params.get("client_id");
  const verifier = params.get("code_verifier");
  if (!code || !redirectUri || !clientId || !verifier) {
    return refuse(step, "invalid_request", "code, redirect_uri, client_id and code_verifier are required.");
  }
  if (clientId.length > CLIENT_ID_MAX || !(await isKnownClient(clientId, config, keys, nowMs))) {
    return refuse(step, "invalid_client", "The client_id is not valid here.");
  }
  const claims = await verifyCode(config, keys, code, nowMs);
  if (claims === null) return refuse(step, "invalid_grant", "The code is invalid or expired.");
  if (claims.cid !== (await clientIdHash(clientId))) return refuse(step, "invalid_grant", "The code was issued to another client.");
  if (claims.redirect_uri !== redirectUri) return refuse(step, "invalid_grant", "The redirect_uri does not match the authorization request.");
  if (!CODE_VERIFIER_PATTERN.test(verifier) || !(await constantTimeEqual(await sha256Base64url(verifier), claims.code_challenge))) {
    return refuse(step, "invalid_grant", "The code_verifier does not match the code_challenge.");
  }
  if (claims.epoch !== config.epoch || claims.sub !== config.githubId) return refuse(step, "invalid_grant", "The code is no longer valid.");
  const resource = params.get("resource");
  if (resource !== undefined && resource !== config.audience) return refuse(step, "invalid_target", "The resource is not this server's MCP endpoint.");

  const spent = await ledger(() => deps.spent.spendOnce(claims.jti, "code", new Date(claims.exp * 1000).toISOString()));
  if (spent === "unavailable") return { kind: "unavailable", step };
  if (!spent) return refuse(step, "invalid_grant", "The code has already been used.");

  const tokens = await issueTokens(config, keys, { cid: claims.cid, scope: claims.scope, refreshScope: claims.scope, family: null }, nowMs);
  return { kind: "issued", step, tokens, scope: claims.scope };
}

async function decideRefreshGrant(params: ReadonlyMap<string, string>, { config, keys, deps }: OwnerContext): Promise<TokenDecision> {
  const step = "token_refresh";
  const nowMs = deps.now();
  const refreshToken = params.get("refresh_token");
  const clientId = params.get("client_id");
  if (!refreshToken || !clientId) return refuse(step, "invalid_request", "refresh_token and client_id are required.");
  if (clientId.length > CLIENT_ID_MAX || !(await isKnownClient(clientId, config, keys, nowMs))) {
    return refuse(step, "invalid_client", "The client_id is not valid here.");
  }
  const claims = await verifyRefreshToken(config, keys, refreshToken, nowMs);
  if (claims === null || claims.cid !== (await clientIdHash(clientId))) {
    return refuse(step, "invalid_grant", "The refresh token is invalid, expired or issued to another client.");
  }
  if (seconds(nowMs) >= claims.fam_iat + LIFETIME.family) {
    return refuse(step, "invalid_grant", "The refresh token's family has reached its 90-day limit; authorize again.");
  }

  const held = scopesOf(claims.scope);
  const requested = params.has("scope") ? parseScope(params.get("scope")) : held;
  if (requested === null || requested.length === 0 || !isSubset(requested, held)) {
    return refuse(step, "invalid_scope", "A refresh may only keep or narrow the granted scope.");
  }

  const family = `family:${claims.fam}`;
  const revoked = await ledger(() => deps.spent.isSpent(family));
  if (revoked === "unavailable") return { kind: "unavailable", step };
  if (revoked) return refuse(step, "invalid_grant", "The refresh token has been revoked.");
  const spent = await ledger(() => deps.spent.spendOnce(claims.jti, "refresh", new Date(claims.exp * 1000).toISOString()));
  if (spent === "unavailable") return { kind: "unavailable", step };
  if (!spent) {
    // Reuse: someone holds a copy. Revoke the family for as long as any of its refresh tokens can live.
    const until = new Date(nowMs + LIFETIME.refresh * 1000).toISOString();
    const revokedNow = await ledger(() => deps.spent.spendOnce(family, "family", until));
    if (revokedNow === "unavailable") return { kind: "unavailable", step };
    return refuse(step, "invalid_grant", "The refresh token has already been used; its family is revoked.");
  }

  // RFC 6749 §6: the new refresh token keeps the original scope; only the access token is narrowed.
  const scope = formatScope(requested);
  const tokens = await issueTokens(
    config,
    keys,
    { cid: claims.cid, scope, refreshScope: claims.scope, family: { fam: claims.fam, fam_iat: claims.fam_iat } },
    nowMs,
  );
  return { kind: "issued", step, tokens, scope };
}

/** Runs a ledger call; a thrown error (core unreachable) becomes `unavailable`, never a guess. */
async function ledger<T>(call: () => Promise<T>): Promise<T | "unavailable"> {
  try {
    return await call();
  } catch {
    return "unavailable";
  }
}

export function renderToken(decision: TokenDecision): Response {
  switch (decision.kind) {
    case "issued":
      return jsonResponse(
        200,
        {
          access_token: decision.tokens.accessToken,
          token_type: "Bearer",
          expires_in: LIFETIME.access,
          refresh_token: decision.tokens.refreshToken,
          scope: decision.scope,
        },
        Object.assign({}, ANY_ORIGIN, { Pragma: "no-cache" }),
      );
    case "refused":
      return oauthJsonError(decision.error === "invalid_client" ? 401 : 400, decision.error, decision.description);
    case "unavailable":
      return oauthJsonError(503, "temporarily_unavailable", "The authorization server is temporarily unavailable.");
  }
}

/** `POST /oauth/token`. */
export function serveToken(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "other", deps, async (context) => {
    const decision = await decideToken(input.request, bodyText(input), context);
    const outcome = decision.kind === "refused" ? "oauth_error" : decision.kind === "unavailable" ? "core_unavailable" : null;
    return { response: renderToken(decision), outcome, step: decision.step };
  });
}

