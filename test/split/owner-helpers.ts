/**
 * Driving the owner deployment in the split suites (06): the owner gateway
 * (auxiliary Worker magnt-owner, reached through the runner's `OWNER_GATEWAY`
 * binding) in front of core's real `OwnerEntrypoint`; core's entrypoint
 * straight (`TEST_OWNER_CORE`), as only the owner gateway may call it in
 * production; the owner gateway entry in-process with another env (flags off);
 * and a "browser + GitHub + MCP client" that walks the link flow.
 *
 * The stand-in GitHub (./owner-github-stand-in.ts) is the owner gateway's
 * outbound service; the test plays the person on GitHub's authorize page by
 * choosing the code (`githubCode`).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Env, OwnerCoreBinding } from "../../worker/config/env";
import type { RequestEvent } from "../../worker/contracts/events";
import ownerGateway from "../../worker/entries/owner-gateway";
import { cookieValue, hiddenInput, pkce } from "../helpers/owner";
import { coreDb, modernBody, modernHeaders, parseEvents } from "./helpers";
import { githubCode, GITHUB_STAND_IN_ORIGIN, OWNER_GATEWAY_VARS, OWNER_GITHUB_ID, OWNER_ORIGIN } from "./owner-fixture";

export const LOOPBACK_REDIRECT = "http://127.0.0.1:33418/callback";
export const OWNER_MCP_URL = `${OWNER_ORIGIN}/mcp`;
export const OWNER_USER = { id: Number(OWNER_GITHUB_ID), login: "octo-owner" } as const;

interface RunnerBindings {
  OWNER_GATEWAY?: Fetcher;
  TEST_OWNER_CORE?: OwnerCoreBinding;
}
const runner = env as unknown as RunnerBindings;

/** How a suite reaches one owner gateway: a `fetch` taking paths relative to OWNER_ORIGIN. */
export type GatewayFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A `GatewayFetch` for an owner gateway Worker bound to the runner. */
export function gatewayFetchOf(binding: () => Fetcher | undefined, label: string): GatewayFetch {
  return (input, init) => {
    const gateway = binding();
    if (!gateway) throw new Error(`${label} is bound only in the split project`);
    const request = input instanceof Request && !init ? input : new Request(new URL(String(input instanceof Request ? input.url : input), OWNER_ORIGIN), init);
    return gateway.fetch(request);
  };
}

/** The owner gateway as deployed: the magnt-owner auxiliary Worker (real `OWNER_CORE` binding, stand-in GitHub). */
export const ownerGatewayFetch: GatewayFetch = gatewayFetchOf(() => runner.OWNER_GATEWAY, "OWNER_GATEWAY");

/** Core's `OwnerEntrypoint`, called straight (core's flags and secrets are the topology's). */
export function ownerCore(): OwnerCoreBinding {
  const core = runner.TEST_OWNER_CORE;
  if (!core) throw new Error("TEST_OWNER_CORE is bound only in the split project");
  return core;
}

/** The owner gateway's test taps (its console lines). */
export function ownerTaps() {
  const taps = env.TEST_OWNER;
  if (!taps) throw new Error("TEST_OWNER is bound only in the split project");
  return taps;
}

export async function ownerGatewayEvents(): Promise<RequestEvent[]> {
  return parseEvents(await ownerTaps().lines());
}

/** The owner gateway entry in this isolate with the owner variables plus `overrides` (undefined removes one). */
export async function callOwnerInProcess(path: string, init: RequestInit = {}, overrides: Record<string, unknown> = {}): Promise<Response> {
  const merged: Record<string, unknown> = { ...(env as unknown as Record<string, unknown>), ...OWNER_GATEWAY_VARS, OWNER_CORE: runner.TEST_OWNER_CORE, ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete merged[key];
  const ctx = createExecutionContext();
  const response = await ownerGateway.fetch(new Request(new URL(path, OWNER_ORIGIN), init), merged as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

// ---------------------------------------------------------------- the link flow

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  scope: string;
  token_type: string;
  expires_in: number;
}

export interface LinkOptions {
  scope?: string;
  user?: { id: number; login: string };
  clientName?: string;
  state?: string;
  /** The owner gateway to link through (default: magnt-owner). */
  gateway?: GatewayFetch;
}

export interface Linked {
  /** The owner gateway the flow ran through (the code is exchanged there too). */
  gateway: GatewayFetch;
  clientId: string;
  verifier: string;
  state: string;
  /** Every answer of the flow, for the canary checks. */
  answers: Response[];
  /** The authorization code, or null when the callback did not redirect with one. */
  code: string | null;
  /** The last answer (the callback's). */
  last: Response;
}

export async function registerClient(clientName = "Split MCP client", gateway: GatewayFetch = ownerGatewayFetch): Promise<string> {
  const response = await gateway("/oauth/register", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ redirect_uris: [LOOPBACK_REDIRECT], client_name: clientName }),
  });
  if (response.status !== 201) throw new Error(`register: ${response.status}`);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** register → authorize → consent (approve) → GitHub as `user` → callback. */
export async function link(options: LinkOptions = {}): Promise<Linked> {
  const answers: Response[] = [];
  const gateway = options.gateway ?? ownerGatewayFetch;
  const clientId = await registerClient(options.clientName, gateway);
  const { verifier, challenge } = await pkce();
  const state = options.state ?? `state-${crypto.randomUUID()}`;
  const authorize = new URL(`${OWNER_ORIGIN}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: LOOPBACK_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
    resource: OWNER_MCP_URL,
  })) {
    authorize.searchParams.set(name, value);
  }
  const page = await gateway(authorize.href);
  answers.push(page.clone());
  if (page.status !== 200) throw new Error(`authorize: ${page.status}`);
  const html = await page.text();
  const csrfCookie = cookieValue(page, "__Host-magnt_owner_csrf");
  if (csrfCookie === null) throw new Error("no CSRF cookie");

  const approved = await gateway("/oauth/authorize", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: OWNER_ORIGIN, Cookie: `__Host-magnt_owner_csrf=${csrfCookie}` },
    body: new URLSearchParams({ consent: hiddenInput(html, "consent"), csrf: hiddenInput(html, "csrf"), decision: "approve" }),
    redirect: "manual",
  });
  answers.push(approved.clone());
  if (approved.status !== 302) throw new Error(`consent: ${approved.status}`);
  const toGithub = new URL(approved.headers.get("location")!);
  if (toGithub.origin !== GITHUB_STAND_IN_ORIGIN || toGithub.pathname !== "/login/oauth/authorize") throw new Error("not sent to GitHub");
  const linkCookie = cookieValue(approved, "__Host-magnt_owner_link")!;

  // The person approves on GitHub's page; GitHub sends the browser back with a code and the same state.
  const user = options.user ?? OWNER_USER;
  const back = new URL(toGithub.searchParams.get("redirect_uri")!);
  back.searchParams.set("code", githubCode(user.id, user.login));
  back.searchParams.set("state", toGithub.searchParams.get("state")!);
  const last = await gateway(back.href, { headers: { Cookie: `__Host-magnt_owner_link=${linkCookie}` }, redirect: "manual" });
  answers.push(last.clone());
  const location = last.headers.get("location");
  const code = last.status === 302 && location !== null ? new URL(location).searchParams.get("code") : null;
  return { gateway, clientId, verifier, state, answers, code, last };
}

export async function tokenRequest(form: Record<string, string>, gateway: GatewayFetch = ownerGatewayFetch): Promise<Response> {
  return gateway("/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
}

export async function exchange(linked: Linked): Promise<TokenSet> {
  if (linked.code === null) throw new Error("no code");
  const response = await tokenRequest({
    grant_type: "authorization_code",
    code: linked.code,
    redirect_uri: LOOPBACK_REDIRECT,
    client_id: linked.clientId,
    code_verifier: linked.verifier,
  }, linked.gateway);
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return (await response.json()) as TokenSet;
}

/** Register, link as the owner and exchange the code: a fresh token set with `scope`. */
export async function ownerTokens(scope = "owner.read owner.write", gateway: GatewayFetch = ownerGatewayFetch): Promise<TokenSet & { clientId: string }> {
  const linked = await link({ scope, gateway });
  return { ...(await exchange(linked)), clientId: linked.clientId };
}

export async function refresh(clientId: string, refreshToken: string): Promise<Response> {
  return tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
}

// ---------------------------------------------------------------- MCP

/** A `fetch` for MCP clients: the owner gateway with `Authorization: Bearer <token>`. */
export function bearerFetch(token: string, gateway: GatewayFetch = ownerGatewayFetch) {
  return (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    return gateway(new Request(request, { headers }));
  };
}

/** The official v2 MCP client connected to owner `/mcp` with a bearer token. */
export async function connectOwner(token: string, gateway: GatewayFetch = ownerGatewayFetch): Promise<Client> {
  const client = new Client({ name: "owner-client-v2", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(OWNER_MCP_URL), { fetch: bearerFetch(token, gateway) }));
  return client;
}

/** A raw modern `tools/call` to owner `/mcp`. */
export function ownerToolCall(
  token: string | null,
  name: string,
  args: unknown,
  extraHeaders: Record<string, string> = {},
  gateway: GatewayFetch = ownerGatewayFetch,
): Promise<Response> {
  const headers: Record<string, string> = { ...modernHeaders("tools/call", name), ...extraHeaders };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return gateway("/mcp", { method: "POST", headers, body: modernBody("tools/call", { name, arguments: args }) });
}

/** A snapshot of every owner-relevant table, to prove an attack changed nothing. */
export async function ownerTablesSnapshot(): Promise<string> {
  const db = coreDb();
  const tables = ["contacts", "contact_owner_state", "owner_drafts", "observed_task_signals"];
  const parts: unknown[] = [];
  for (const table of tables) parts.push((await db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).results);
  return JSON.stringify(parts);
}
