/**
 * GitHub linking (06 §3.4): `GET /oauth/github/callback`. GitHub is used only
 * here, only to learn the numeric id of whoever just signed in.
 *
 * Threat model:
 * - a forged or replayed callback: the link request lives in a signed,
 *   ten-minute `__Host-` cookie, and GitHub's `state` must equal (in constant
 *   time) the hash of exactly that cookie, so a callback started in another
 *   browser, or for another consent, is refused with a 400 page;
 * - the wrong GitHub account: the owner check is `String(id) === OWNER_GITHUB_ID`,
 *   the numeric id only — a login name can be renamed and reused, so it is
 *   never compared, stored or logged;
 * - leaking GitHub credentials: the client secret and the user's GitHub token
 *   go only through `githubRequestCapped` (no redirects followed, 8 s limit,
 *   capped body), the token is dropped right after the lookup, and no GitHub
 *   body or error text is kept.
 */
import { githubRequestCapped } from "../../edge/outbound";
import type { OwnerConfig, OwnerEnv } from "../config";
import { gated, singleParams, type OwnerAnswer, type OwnerDeps, type OwnerInput } from "../http";
import { authorizeError, baseCsp, githubCallbackUrl, redirectHeaders } from "./authorize";
import { clearCookie, LINK_COOKIE, readCookie } from "./cookies";
import { constantTimeEqual } from "../../lib/constant-time";
import { sha256Base64url } from "./encoding";
import { errorPage } from "./html";
import type { OwnerKeys } from "./keys";
import { issueCode, verifyLinkRequest, type LinkRequest } from "./objects";
import { redirectWith } from "./redirect-uris";

export const GITHUB_USER_AGENT = "MAGNT-Owner-Gateway/1.0";

export type CallbackDecision =
  | { readonly kind: "refused" }
  | { readonly kind: "github_denied"; readonly link: LinkRequest }
  | { readonly kind: "github_unavailable"; readonly link: LinkRequest }
  | { readonly kind: "not_owner" }
  | { readonly kind: "linked"; readonly link: LinkRequest; readonly code: string };

/** Verifies the callback, asks GitHub who signed in, and decides. */
export async function decideCallback(request: Request, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<CallbackDecision> {
  const params = singleParams(new URL(request.url).searchParams);
  const cookie = readCookie(request, LINK_COOKIE);
  if (params === null || cookie === null) return { kind: "refused" };
  const link = await verifyLinkRequest(keys, cookie, nowMs);
  const state = params.get("state");
  if (link === null || state === undefined || !(await constantTimeEqual(state, await sha256Base64url(cookie)))) {
    return { kind: "refused" };
  }
  if (params.has("error")) return { kind: "github_denied", link };
  const githubCode = params.get("code");
  if (githubCode === undefined || githubCode === "") return { kind: "github_unavailable", link };

  const id = await lookUpGithubId(config, githubCode);
  if (id === null) return { kind: "github_unavailable", link };
  if (id !== config.githubId) return { kind: "not_owner" };
  return { kind: "linked", link, code: await issueCode(config, keys, link, nowMs) };
}

/**
 * Exchanges GitHub's code for a token and returns the numeric user id as a
 * string; null on any failure. The GitHub token never leaves this function.
 */
async function lookUpGithubId(config: OwnerConfig, githubCode: string): Promise<string | null> {
  const github = config.github!;
  const exchange = await githubRequestCapped(`${github.oauthOrigin}/login/oauth/access_token`, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded", "User-Agent": GITHUB_USER_AGENT },
    body: new URLSearchParams({
      client_id: github.clientId,
      client_secret: github.clientSecret,
      code: githubCode,
      redirect_uri: githubCallbackUrl(config),
    }),
  });
  const token = exchange.ok && isSuccess(exchange.status) ? readStringField(exchange.body, "access_token") : null;
  if (token === null) return null;

  const user = await githubRequestCapped(`${github.apiOrigin}/user`, {
    method: "GET",
    headers: { Accept: "application/vnd.github+json", Authorization: `Bearer ${token}`, "User-Agent": GITHUB_USER_AGENT },
  });
  if (!user.ok || !isSuccess(user.status)) return null;
  const id = readField(user.body, "id");
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? String(id) : null;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

function readField(body: string | null, name: string): unknown {
  if (body === null) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;
  } catch {
    return undefined;
  }
}

function readStringField(body: string | null, name: string): string | null {
  const value = readField(body, name);
  return typeof value === "string" && value !== "" ? value : null;
}

export function renderCallback(decision: CallbackDecision, config: OwnerConfig): Response {
  const clear = new Headers({ "Set-Cookie": clearCookie(LINK_COOKIE) });
  switch (decision.kind) {
    case "refused":
      return withCleared(authorizeError("invalid_consent", baseCsp(config)), clear);
    case "not_owner":
      return errorPage(403, "Not the owner", "This GitHub account is not the owner.", baseCsp(config), clear);
    case "github_denied":
      return redirectToClient(decision.link, { error: "access_denied" }, config);
    case "github_unavailable":
      return redirectToClient(decision.link, { error: "temporarily_unavailable" }, config);
    case "linked":
      return redirectToClient(decision.link, { code: decision.code }, config);
  }
}

/** 302 to the link request's redirect URI (approved by the owner) with `params`, `state` and `iss`. */
function redirectToClient(link: LinkRequest, params: Record<string, string>, config: OwnerConfig): Response {
  const headers = redirectHeaders();
  headers.append("Set-Cookie", clearCookie(LINK_COOKIE));
  headers.set("Location", redirectWith(link.redirect_uri, Object.assign({}, params, { state: link.state, iss: config.ownerOrigin })));
  return new Response(null, { status: 302, headers });
}

function withCleared(response: Response, headers: Headers): Response {
  headers.forEach((value, name) => response.headers.append(name, value));
  return response;
}

/** `GET /oauth/github/callback`. */
export function serveGithubCallback(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "github_callback", deps, async ({ config, keys }) => {
    const decision = await decideCallback(input.request, config, keys, deps.now());
    const outcome =
      decision.kind === "not_owner" ? "not_owner" : decision.kind === "refused" || decision.kind === "github_unavailable" ? "oauth_error" : null;
    return { response: renderCallback(decision, config), outcome, step: "github_callback" };
  });
}
