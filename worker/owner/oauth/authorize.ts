/**
 * `GET /oauth/authorize` (validate, show consent) and `POST /oauth/authorize`
 * (the owner's decision), 06 §3.3.
 *
 * Threat model:
 * - open redirector: nothing redirects before the owner's own click; every
 *   problem up to and including the decision is a 400 HTML page that names it;
 * - codes for a stranger: the redirect URI must be registered (exact string),
 *   or listed in the client's metadata document (client-metadata.ts), and
 *   still allowed by `OWNER_REDIRECT_ORIGINS` or loopback;
 * - cross-site request forgery of the decision: the decision needs a nonce
 *   present both as a `__Host-` cookie and as a form field, hashing to the
 *   `nonce_hash` inside the signed, ten-minute consent request, plus an Origin
 *   that is absent or the owner origin;
 * - scope creep: `owner.write` and `owner.publish` only when named, and
 *   `owner.publish` on its own highlighted line;
 * - a page that lies: the client's name is cleaned of display controls and
 *   isolated, the redirect target is shown in full and in ASCII, and a hosted
 *   (non-loopback) target carries the warning of consent-page.ts.
 *
 * `decide*` return a Decision; `render*` turn it into a Response.
 */
import type { OwnerConfig, OwnerEnv } from "../config";
import { bodyText, gated, singleParams, type OwnerAnswer, type OwnerDeps, type OwnerInput } from "../http";
import { DOCUMENT_PROBLEM_TEXT, type DocumentProblem } from "./client-metadata";
import { resolveClient, type ClientIdentity } from "./clients";
import { clearCookie, CSRF_COOKIE, LINK_COOKIE, readCookie, setCookie } from "./cookies";
import { consentPageHtml } from "./consent-page";
import { constantTimeEqual } from "../../lib/constant-time";
import { clientIdHash, randomToken, sha256Base64url } from "./encoding";
import { contentSecurityPolicy, errorPage, htmlHeaders } from "./html";
import type { OwnerKeys } from "./keys";
import { CLIENT_ID_MAX, issueConsentRequest, issueLinkRequest, verifyConsentRequest, type GrantRequest } from "./objects";
import { isAllowedRedirectUri, redirectTarget, redirectWith } from "./redirect-uris";
import { formatScope, parseScope, scopesOf, type OwnerScope } from "./scopes";

/** PKCE code challenge: base64url, 43–128 characters (RFC 7636 §4.2). */
const CODE_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43,128}$/;
/** Longest client `state` echoed back (06 §3.3). */
export const STATE_MAX = 512;

/** Why an authorization was refused before the decision; each names its problem on the page. */
export type AuthorizeProblem =
  | "duplicate_parameter"
  | "invalid_client"
  | "invalid_client_metadata"
  | "invalid_redirect_uri"
  | "unsupported_response_type"
  | "invalid_pkce"
  | "invalid_state"
  | "invalid_scope"
  | "invalid_resource"
  | "invalid_origin"
  | "invalid_form"
  | "invalid_csrf"
  | "invalid_consent";

export const PROBLEM_TEXT: Readonly<Record<AuthorizeProblem, string>> = {
  duplicate_parameter: "A parameter was sent more than once.",
  invalid_client: "The client_id is missing, too long or not valid here.",
  invalid_client_metadata: "The client_id names a client metadata document that cannot be used.",
  invalid_redirect_uri: "The redirect_uri is missing, not registered for this client, or no longer allowed.",
  unsupported_response_type: "Only response_type=code is supported.",
  invalid_pkce: "PKCE is required: a code_challenge of 43–128 base64url characters with code_challenge_method=S256.",
  invalid_state: "The state parameter is longer than 512 characters.",
  invalid_scope: "The scope names something other than owner.read, owner.write and owner.publish.",
  invalid_resource: "The resource parameter does not name this server's MCP endpoint.",
  invalid_origin: "The decision came from another site.",
  invalid_form: "The decision form is incomplete or malformed.",
  invalid_csrf: "The consent form does not match this browser's session. Start the authorization again.",
  invalid_consent: "The consent request is invalid or expired. Start the authorization again.",
};

// ---------------------------------------------------------------- GET

export type AuthorizeDecision =
  | { readonly kind: "refused"; readonly problem: AuthorizeProblem; readonly detail?: DocumentProblem }
  | { readonly kind: "consent"; readonly grant: GrantRequest; readonly client: ClientIdentity; readonly redirectUri: string };

const refused = (problem: AuthorizeProblem) => ({ kind: "refused", problem }) as const;

/**
 * Validates an authorization request (06 §3.3). No side effects, but for one
 * read: a client metadata document is fetched (or taken from the cache) to
 * learn who a URL `client_id` is (06 §3.7).
 */
export async function decideAuthorize(url: URL, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<AuthorizeDecision> {
  const params = singleParams(url.searchParams);
  if (params === null) return refused("duplicate_parameter");

  const clientId = params.get("client_id") ?? "";
  if (clientId === "" || clientId.length > CLIENT_ID_MAX) return refused("invalid_client");
  const resolved = await resolveClient(clientId, config, keys, nowMs);
  if (!resolved.ok) {
    return resolved.problem === "invalid_client" ? refused("invalid_client") : { kind: "refused", problem: resolved.problem, detail: resolved.detail };
  }
  const client = resolved.client;

  const redirectUri = params.get("redirect_uri");
  if (redirectUri === undefined || !client.redirectUris.includes(redirectUri) || !isAllowedRedirectUri(redirectUri, config.redirectOrigins)) {
    return refused("invalid_redirect_uri");
  }
  if (params.get("response_type") !== "code") return refused("unsupported_response_type");

  const challenge = params.get("code_challenge");
  if (challenge === undefined || !CODE_CHALLENGE_PATTERN.test(challenge) || params.get("code_challenge_method") !== "S256") {
    return refused("invalid_pkce");
  }
  const state = params.get("state") ?? null;
  if (state !== null && state.length > STATE_MAX) return refused("invalid_state");

  const scopes = parseScope(params.get("scope"));
  if (scopes === null || scopes.length === 0) return refused("invalid_scope");

  const resource = params.get("resource") ?? null;
  if (resource !== null && resource !== config.audience) return refused("invalid_resource");

  const grant: GrantRequest = {
    cid: await clientIdHash(clientId),
    redirect_uri: redirectUri,
    code_challenge: challenge,
    scope: formatScope(scopes),
    resource,
    state,
  };
  return { kind: "consent", grant, client, redirectUri };
}

/** Renders the GET decision: the consent page with a fresh CSRF nonce, or the HTML error. */
export async function renderAuthorize(decision: AuthorizeDecision, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<Response> {
  const csp = baseCsp(config);
  if (decision.kind === "refused") return authorizeError(decision.problem, csp, decision.detail);

  const nonce = randomToken();
  const consent = await issueConsentRequest(keys, decision.grant, decision.client.clientName, await sha256Base64url(nonce), nowMs);
  const redirect = redirectTarget(decision.redirectUri);
  const headers = htmlHeaders(contentSecurityPolicy(githubOrigin(config), [redirect.origin]));
  // The form POST must carry a real Origin: under `no-referrer` browsers send `Origin: null` (Fetch §3.1).
  headers.set("Referrer-Policy", "same-origin");
  headers.append("Set-Cookie", setCookie(CSRF_COOKIE, nonce));
  const html = consentPageHtml({
    clientName: decision.client.clientName,
    verifiedHost: decision.client.verifiedHost,
    redirect,
    scopes: scopesOf(decision.grant.scope) as readonly OwnerScope[],
    consent,
    nonce,
  });
  return new Response(html, { status: 200, headers });
}

/** `GET /oauth/authorize`. */
export function serveAuthorize(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "authorize", deps, async ({ config, keys }) => {
    const nowMs = deps.now();
    const decision = await decideAuthorize(new URL(input.request.url), config, keys, nowMs);
    return {
      response: await renderAuthorize(decision, config, keys, nowMs),
      outcome: decision.kind === "refused" ? "oauth_error" : null,
      step: "authorize",
    };
  });
}

// ---------------------------------------------------------------- POST

export type ConsentDecision =
  | { readonly kind: "refused"; readonly problem: AuthorizeProblem }
  | { readonly kind: "denied"; readonly grant: GrantRequest }
  | { readonly kind: "approved"; readonly grant: GrantRequest };

/** Checks the decision form (06 §3.3); no side effects. */
export async function decideConsent(
  request: Request,
  form: string,
  config: OwnerConfig,
  keys: OwnerKeys,
  nowMs: number,
): Promise<ConsentDecision> {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== config.ownerOrigin) return refused("invalid_origin");
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (contentType !== "application/x-www-form-urlencoded") return refused("invalid_form");

  const fields = singleParams(new URLSearchParams(form));
  if (fields === null) return refused("duplicate_parameter");
  const consentValue = fields.get("consent");
  const formNonce = fields.get("csrf");
  const choice = fields.get("decision");
  if (!consentValue || !formNonce || (choice !== "approve" && choice !== "deny")) return refused("invalid_form");

  const cookieNonce = readCookie(request, CSRF_COOKIE);
  if (cookieNonce === null || !(await constantTimeEqual(cookieNonce, formNonce))) return refused("invalid_csrf");
  const consent = await verifyConsentRequest(keys, consentValue, nowMs);
  if (consent === null) return refused("invalid_consent");
  if (!(await constantTimeEqual(await sha256Base64url(formNonce), consent.nonce_hash))) return refused("invalid_csrf");

  const grant: GrantRequest = {
    cid: consent.cid,
    redirect_uri: consent.redirect_uri,
    code_challenge: consent.code_challenge,
    scope: consent.scope,
    resource: consent.resource,
    state: consent.state,
  };
  return choice === "approve" ? { kind: "approved", grant } : { kind: "denied", grant };
}

/**
 * Renders the decision. Deny: 302 to the validated redirect URI with
 * `error=access_denied`, `state`, `iss`. Approve: the signed link request as a
 * cookie and a 302 to GitHub whose `state` is only the hash of that cookie.
 */
export async function renderConsent(decision: ConsentDecision, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<Response> {
  if (decision.kind === "refused") return authorizeError(decision.problem, baseCsp(config));
  const headers = redirectHeaders();
  headers.append("Set-Cookie", clearCookie(CSRF_COOKIE));
  if (decision.kind === "denied") {
    headers.set(
      "Location",
      redirectWith(decision.grant.redirect_uri, { error: "access_denied", state: decision.grant.state, iss: config.ownerOrigin }),
    );
    return new Response(null, { status: 302, headers });
  }
  const github = config.github!;
  const link = await issueLinkRequest(keys, decision.grant, nowMs);
  const target = new URL(`${github.oauthOrigin}/login/oauth/authorize`);
  target.searchParams.set("client_id", github.clientId);
  target.searchParams.set("redirect_uri", githubCallbackUrl(config));
  target.searchParams.set("state", await sha256Base64url(link));
  target.searchParams.set("allow_signup", "false");
  headers.append("Set-Cookie", setCookie(LINK_COOKIE, link));
  headers.set("Location", target.href);
  return new Response(null, { status: 302, headers });
}

/** `POST /oauth/authorize`. */
export function serveConsent(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "consent", deps, async ({ config, keys }) => {
    const nowMs = deps.now();
    const decision = await decideConsent(input.request, bodyText(input), config, keys, nowMs);
    return {
      response: await renderConsent(decision, config, keys, nowMs),
      outcome: decision.kind === "refused" ? "oauth_error" : null,
      step: "consent",
    };
  });
}

// ---------------------------------------------------------------- shared

/** Where GitHub sends the owner back (06 §3.3). */
export function githubCallbackUrl(config: OwnerConfig): string {
  return `${config.ownerOrigin}/oauth/github/callback`;
}

export function githubOrigin(config: OwnerConfig): string {
  return config.github?.oauthOrigin ?? "";
}

export function baseCsp(config: OwnerConfig): string {
  return contentSecurityPolicy(githubOrigin(config));
}

/** Headers of every redirect the flow sends: never cached, never a referrer. */
export function redirectHeaders(): Headers {
  return new Headers({ "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
}

/** The 400 page naming `problem` (and, for a metadata document, what is wrong with it). */
export function authorizeError(problem: AuthorizeProblem, csp: string, detail?: DocumentProblem): Response {
  const text = detail === undefined ? PROBLEM_TEXT[problem] : `${PROBLEM_TEXT[problem]} ${DOCUMENT_PROBLEM_TEXT[detail]}`;
  return errorPage(400, "Authorization refused", text, csp);
}
