/**
 * Drives the owner OAuth handlers directly (the owner gateway is wired by the
 * entries): a constructed env, an injectable clock, core's D1 ledger, the fake
 * GitHub, and a small "browser + MCP client" that walks the link flow step by
 * step so each attack test can stop or tamper at the step it targets.
 */
import { env } from "cloudflare:workers";
import {
  d1SpentLedger,
  ownerInput,
  serveAuthorize,
  serveConsent,
  serveGithubCallback,
  serveRegister,
  serveToken,
  type OwnerAnswer,
  type OwnerDeps,
  type OwnerEnv,
  type OwnerHandler,
} from "../../worker/owner";
import { useGithub, type GithubFake, type GithubUser } from "../fakes/github";

export const OWNER_ORIGIN = "https://owner.magnt.ru";
export const AUDIENCE = `${OWNER_ORIGIN}/mcp`;
export const OWNER_GITHUB_ID = "583231";
export const OWNER: GithubUser = { id: 583231, login: "octo-owner" };
export const STRANGER: GithubUser = { id: 9_000_001, login: "octo-owner" };
export const LOOPBACK_REDIRECT = "http://127.0.0.1:33418/callback";
export const CLAUDE_REDIRECT = "https://claude.ai/api/mcp/auth_callback";
export const GITHUB_CLIENT_ID = "Iv1.fakeclientid";
export const GITHUB_CLIENT_SECRET = "CANARYgithubclientsecret0123456789";

/** Base64url of `bytes` random bytes: a fresh signing key. */
export function randomKey(bytes = 32): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function ownerEnv(overrides: Partial<OwnerEnv> = {}): OwnerEnv {
  return {
    ...env,
    OWNER_MCP_ENABLED: "true",
    OWNER_ORIGIN,
    ALLOWED_HOSTS: "owner.magnt.ru",
    OWNER_REDIRECT_ORIGINS: "https://claude.ai, https://chatgpt.com",
    OWNER_GITHUB_ID,
    OWNER_TOKEN_SIGNING_KEY: randomKey(),
    GITHUB_CLIENT_ID,
    GITHUB_CLIENT_SECRET,
    ...overrides,
  };
}

function hostOf(origin: string | undefined): string | undefined {
  return origin === undefined ? undefined : new URL(origin).host;
}

export interface Clock {
  now: number;
  advance(seconds: number): void;
}

export function clock(start = Date.UTC(2026, 4, 1, 10, 0, 0)): Clock {
  return {
    now: start,
    advance(seconds) {
      this.now += seconds * 1000;
    },
  };
}

export function ownerDeps(time: Clock): OwnerDeps {
  return { now: () => time.now, spent: d1SpentLedger(env.CONTACTS!) };
}

/** PKCE pair (RFC 7636, S256). */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomKey(48);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const challenge = btoa(String.fromCharCode(...new Uint8Array(digest))).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return { verifier, challenge };
}

/** Hidden input `name` of an HTML page. */
export function hiddenInput(html: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  if (!match) throw new Error(`no hidden input ${name}`);
  return match[1]!.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

/** Every `Set-Cookie` line of a response (workerd implements `getSetCookie`; the merged type lists do not). */
export function setCookies(response: Response): string[] {
  return (response.headers as unknown as { getSetCookie(): string[] }).getSetCookie();
}

/** `name=value` of a `Set-Cookie` header list, or null. */
export function cookieValue(response: Response, name: string): string | null {
  for (const line of setCookies(response)) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    if (pair!.slice(0, eq) === name) return pair!.slice(eq + 1);
  }
  return null;
}

export interface Harness {
  readonly env: OwnerEnv;
  readonly deps: OwnerDeps;
  readonly time: Clock;
  readonly github: GithubFake;
  /** Every answer any handler gave in this test, for the canary checks. */
  readonly answers: OwnerAnswer[];
  call(handler: OwnerHandler, request: Request, envOverride?: OwnerEnv): Promise<OwnerAnswer>;
}

export function harness(overrides: Partial<OwnerEnv> = {}): Harness {
  const time = clock();
  const ownerEnvironment = ownerEnv(overrides);
  const deps = ownerDeps(time);
  const answers: OwnerAnswer[] = [];
  return {
    env: ownerEnvironment,
    deps,
    time,
    github: useGithub({
      clientId: ownerEnvironment.GITHUB_CLIENT_ID ?? GITHUB_CLIENT_ID,
      clientSecret: ownerEnvironment.GITHUB_CLIENT_SECRET ?? GITHUB_CLIENT_SECRET,
      oauthHost: hostOf(ownerEnvironment.GITHUB_OAUTH_ORIGIN),
      apiHost: hostOf(ownerEnvironment.GITHUB_API_ORIGIN),
    }),
    answers,
    async call(handler, request, envOverride) {
      const input = await ownerInput(request);
      if (input === null) throw new Error("body too large");
      const answer = await handler(input, envOverride ?? ownerEnvironment, deps);
      answers.push({ ...answer, response: answer.response.clone() });
      return answer;
    },
  };
}

// ---------------------------------------------------------------- flow steps

export async function register(h: Harness, metadata: unknown): Promise<OwnerAnswer> {
  return h.call(
    serveRegister,
    new Request(`${OWNER_ORIGIN}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(metadata),
    }),
  );
}

export async function registerClient(h: Harness, redirectUris: string[] = [LOOPBACK_REDIRECT], clientName = "Test MCP client"): Promise<string> {
  const answer = await register(h, { redirect_uris: redirectUris, client_name: clientName });
  if (answer.response.status !== 201) throw new Error(`registration failed: ${await answer.response.text()}`);
  return ((await answer.response.json()) as { client_id: string }).client_id;
}

export interface AuthorizeParams {
  client_id: string;
  redirect_uri?: string;
  response_type?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export function authorizeUrl(params: AuthorizeParams | Record<string, string>): string {
  const url = new URL(`${OWNER_ORIGIN}/oauth/authorize`);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

export async function authorize(h: Harness, params: AuthorizeParams | Record<string, string>): Promise<OwnerAnswer> {
  return h.call(serveAuthorize, new Request(authorizeUrl(params)));
}

export interface ConsentForm {
  consent: string;
  csrf: string;
  cookie: string;
}

export async function consentForm(answer: OwnerAnswer): Promise<ConsentForm> {
  const html = await answer.response.clone().text();
  const cookie = cookieValue(answer.response, "__Host-magnt_owner_csrf");
  if (cookie === null) throw new Error("no CSRF cookie");
  return { consent: hiddenInput(html, "consent"), csrf: hiddenInput(html, "csrf"), cookie };
}

export async function decide(
  h: Harness,
  form: ConsentForm,
  decision: string,
  options: { origin?: string | null; formOverride?: Record<string, string>; cookieHeader?: string | null } = {},
): Promise<OwnerAnswer> {
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  const origin = options.origin === undefined ? OWNER_ORIGIN : options.origin;
  if (origin !== null) headers.Origin = origin;
  const cookieHeader = options.cookieHeader === undefined ? `__Host-magnt_owner_csrf=${form.cookie}` : options.cookieHeader;
  if (cookieHeader !== null) headers.Cookie = cookieHeader;
  const body = new URLSearchParams({ consent: form.consent, csrf: form.csrf, decision, ...options.formOverride });
  return h.call(serveConsent, new Request(`${OWNER_ORIGIN}/oauth/authorize`, { method: "POST", headers, body }));
}

export async function callback(h: Harness, callbackUrl: string, linkCookie: string | null): Promise<OwnerAnswer> {
  const headers: Record<string, string> = {};
  if (linkCookie !== null) headers.Cookie = `__Host-magnt_owner_link=${linkCookie}`;
  return h.call(serveGithubCallback, new Request(callbackUrl, { headers }));
}

export async function token(h: Harness, form: Record<string, string>, contentType = "application/x-www-form-urlencoded"): Promise<OwnerAnswer> {
  return h.call(
    serveToken,
    new Request(`${OWNER_ORIGIN}/oauth/token`, { method: "POST", headers: { "Content-Type": contentType }, body: new URLSearchParams(form) }),
  );
}

export interface Linked {
  clientId: string;
  redirectUri: string;
  verifier: string;
  code: string;
  state: string;
}

/** register → authorize → approve → GitHub as `user` → callback; returns the code (or throws). */
export async function link(
  h: Harness,
  options: { user?: GithubUser; scope?: string; redirectUri?: string; resource?: string; clientId?: string } = {},
): Promise<Linked> {
  const redirectUri = options.redirectUri ?? LOOPBACK_REDIRECT;
  const clientId = options.clientId ?? (await registerClient(h, [redirectUri]));
  const { verifier, challenge } = await pkce();
  const state = `state-${crypto.randomUUID()}`;
  const params: AuthorizeParams = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
  };
  if (options.scope !== undefined) params.scope = options.scope;
  if (options.resource !== undefined) params.resource = options.resource;
  const page = await authorize(h, params);
  if (page.response.status !== 200) throw new Error(`authorize: ${page.response.status}`);
  const approved = await decide(h, await consentForm(page), "approve");
  if (approved.response.status !== 302) throw new Error(`consent: ${approved.response.status}`);
  const linkCookie = cookieValue(approved.response, "__Host-magnt_owner_link")!;
  const back = await callback(h, h.github.signIn(approved.response.headers.get("location")!, options.user ?? OWNER), linkCookie);
  const location = back.response.headers.get("location");
  if (back.response.status !== 302 || location === null) throw new Error(`callback: ${back.response.status}`);
  const code = new URL(location).searchParams.get("code");
  if (code === null) throw new Error(`callback without code: ${location}`);
  return { clientId, redirectUri, verifier, code, state };
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  scope: string;
  token_type: string;
  expires_in: number;
}

export async function exchange(h: Harness, linked: Linked): Promise<TokenSet> {
  const answer = await token(h, {
    grant_type: "authorization_code",
    code: linked.code,
    redirect_uri: linked.redirectUri,
    client_id: linked.clientId,
    code_verifier: linked.verifier,
  });
  if (answer.response.status !== 200) throw new Error(`token: ${await answer.response.text()}`);
  return (await answer.response.json()) as TokenSet;
}

export async function refresh(h: Harness, clientId: string, refreshToken: string, scope?: string): Promise<OwnerAnswer> {
  const form: Record<string, string> = { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId };
  if (scope !== undefined) form.scope = scope;
  return token(h, form);
}
