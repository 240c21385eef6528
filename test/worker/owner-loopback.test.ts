/**
 * The owner gateway reached under either loopback name (issue 19 item 3, 06
 * §3.1, §3.6): with a loopback `OWNER_ORIGIN` (`http://localhost:8789`, as
 * `npm start -- --owner` sets it) a client that uses `http://127.0.0.1:8789`
 * (Wrangler prints that address) is answered under that name — the
 * protected-resource `resource`, the issuer, every endpoint, the 401 and 403
 * challenges, `iss`, the GitHub callback and the tokens' `iss`/`aud` — so a
 * client comparing them with the address it used (mcp-remote does) completes
 * the flow. Only the same port under another loopback name counts; every
 * other address, and every address in production (an `https` `OWNER_ORIGIN`),
 * is answered under `OWNER_ORIGIN` whatever the Host header says.
 *
 * A token minted under one name is accepted under the other (one process on
 * the owner's machine, one key, one owner), by the gateway and by core, and
 * never by a production configuration. Driven through the owner gateway's real
 * route table in front of core's real `handleOwnerMcp` (owner-stack.ts).
 */
import { describe, expect, it } from "vitest";
import { addressedBy, parseOwnerConfig } from "../../worker/owner/config";
import { useGithub } from "../fakes/github";
import { cookieValue, GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, hiddenInput, OWNER, ownerEnv, pkce } from "../helpers/owner";
import { modernMeta } from "../helpers/mcp";
import { ownerMcpHeaders, ownerStack, ownerTool, type OwnerFetch } from "./owner-stack";

const PORT = 8789;
const LOCALHOST = `http://localhost:${PORT}`;
const IPV4 = `http://127.0.0.1:${PORT}`;
const IPV6 = `http://[::1]:${PORT}`;
const REDIRECT = "http://127.0.0.1:33418/callback";

/** A loopback owner deployment (gateway + core) configured as `magnt dev --owner` configures it. */
function loopbackStack(overrides: Record<string, string> = {}) {
  const env = ownerEnv({ OWNER_ORIGIN: LOCALHOST, ALLOWED_HOSTS: "", OWNER_REDIRECT_ORIGINS: "", OWNER_MCP_WRITE_ENABLED: "true", ...overrides });
  return { env, stack: ownerStack(env) };
}

/** The stack addressed at `origin`: relative paths resolve against it. */
function at(stack: OwnerFetch, origin: string): OwnerFetch {
  return (input, init) => stack(typeof input === "string" ? new URL(input, origin).href : input, init);
}

async function json(response: Response): Promise<Record<string, any>> {
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Record<string, any>;
}

interface Flow {
  clientId: string;
  verifier: string;
  code: string;
  /** The client's redirect as the browser delivered it. */
  landed: URL;
  /** Where the gateway sent the browser to GitHub. */
  githubRedirect: URL;
}

interface ConsentPage {
  clientId: string;
  verifier: string;
  html: string;
  csrf: string;
}

/** register → authorize: the consent page served at `origin`. */
async function consentPageAt(fetcher: OwnerFetch, origin: string, scope: string): Promise<ConsentPage> {
  const registered = await fetcher("/oauth/register", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: "Loopback client" }),
  });
  expect(registered.status).toBe(201);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = await pkce();
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s-1",
    scope,
    resource: `${origin}/mcp`,
  });
  const page = await fetcher(`/oauth/authorize?${query}`);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  return { clientId, verifier, html, csrf: cookieValue(page, "__Host-magnt_owner_csrf")! };
}

/** The owner's Approve click on `page`, posted with `Origin: origin`. */
function approve(fetcher: OwnerFetch, page: ConsentPage, origin: string): Promise<Response> {
  return fetcher("/oauth/authorize", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin, Cookie: `__Host-magnt_owner_csrf=${page.csrf}` },
    body: new URLSearchParams({ consent: hiddenInput(page.html, "consent"), csrf: hiddenInput(page.html, "csrf"), decision: "approve" }),
  });
}

/** register → authorize → approve → (fake) GitHub → callback, every step at `origin`. */
async function linkAt(fetcher: OwnerFetch, origin: string, scope = "owner.read"): Promise<Flow> {
  const github = useGithub({ clientId: GITHUB_CLIENT_ID, clientSecret: GITHUB_CLIENT_SECRET });
  const page = await consentPageAt(fetcher, origin, scope);
  const approved = await approve(fetcher, page, origin);
  expect(approved.status).toBe(302);
  const githubRedirect = new URL(approved.headers.get("location")!);
  const link = cookieValue(approved, "__Host-magnt_owner_link")!;
  const back = await fetcher(github.signIn(githubRedirect.href, OWNER), { headers: { Cookie: `__Host-magnt_owner_link=${link}` } });
  expect(back.status).toBe(302);
  const landed = new URL(back.headers.get("location")!);
  return { clientId: page.clientId, verifier: page.verifier, code: landed.searchParams.get("code")!, landed, githubRedirect };
}

async function exchangeAt(fetcher: OwnerFetch, origin: string, flow: Flow): Promise<Response> {
  return fetcher("/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: flow.code,
      redirect_uri: REDIRECT,
      client_id: flow.clientId,
      code_verifier: flow.verifier,
      resource: `${origin}/mcp`,
    }),
  });
}

function payload(jws: string): Record<string, unknown> {
  const part = jws.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4))) as Record<string, unknown>;
}

describe("the origins a configuration answers as (config.ts)", () => {
  it("a loopback OWNER_ORIGIN is its port under every loopback name; anything else is itself alone", () => {
    const origins = (origin: string) => [...parseOwnerConfig(ownerEnv({ OWNER_ORIGIN: origin }), "gateway")!.origins];
    expect(origins(LOCALHOST)).toEqual([LOCALHOST, IPV4, IPV6]);
    expect(origins(IPV4)).toEqual([LOCALHOST, IPV4, IPV6]);
    expect(origins("http://[::1]:9001")).toEqual(["http://localhost:9001", "http://127.0.0.1:9001", "http://[::1]:9001"]);
    expect(origins("http://localhost")).toEqual(["http://localhost", "http://127.0.0.1", "http://[::1]"]);
    expect(origins("https://owner.magnt.ru")).toEqual(["https://owner.magnt.ru"]);
    expect(origins("https://localhost:8789")).toEqual(["https://localhost:8789"]);
    expect(origins("http://owner.example:8789")).toEqual(["http://owner.example:8789"]);
  });

  it("addressedBy switches the issuer and audience only to another name of the same server", () => {
    const local = parseOwnerConfig(ownerEnv({ OWNER_ORIGIN: LOCALHOST }), "gateway")!;
    expect(addressedBy(local, `${IPV4}/mcp`)).toMatchObject({ ownerOrigin: IPV4, audience: `${IPV4}/mcp` });
    expect(addressedBy(local, `${IPV6}/oauth/token`)).toMatchObject({ ownerOrigin: IPV6, audience: `${IPV6}/mcp` });
    for (const other of [`http://127.0.0.1:${PORT + 1}/mcp`, `https://127.0.0.1:${PORT}/mcp`, "http://evil.example:8789/mcp", "not a url"]) {
      expect(addressedBy(local, other), other).toBe(local);
    }
    const production = parseOwnerConfig(ownerEnv(), "gateway")!;
    for (const loopback of [`${LOCALHOST}/mcp`, `${IPV4}/mcp`, "http://localhost/mcp"]) expect(addressedBy(production, loopback)).toBe(production);
  });
});

describe("a loopback owner gateway answers under the loopback name the client used (06 §3.1)", () => {
  it.each([LOCALHOST, IPV4, IPV6])("metadata and the 401 challenge at %s name that address", async (origin) => {
    const { stack } = loopbackStack();
    const fetcher = at(stack, origin);
    expect(await json(await fetcher("/.well-known/oauth-protected-resource"))).toMatchObject({
      resource: `${origin}/mcp`,
      authorization_servers: [origin],
    });
    expect(await json(await fetcher("/.well-known/oauth-protected-resource/mcp"))).toMatchObject({ resource: `${origin}/mcp` });
    expect(await json(await fetcher("/.well-known/oauth-authorization-server"))).toMatchObject({
      issuer: origin,
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
    });
    const challenge = await fetcher("/mcp", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource", scope="owner.read owner.write"`,
    );
  });

  it("another port, or an https OWNER_ORIGIN with a loopback Host, is answered under OWNER_ORIGIN", async () => {
    const { stack } = loopbackStack();
    const otherPort = `http://127.0.0.1:${PORT + 1}`;
    expect(await json(await at(stack, otherPort)("/.well-known/oauth-authorization-server"))).toMatchObject({ issuer: LOCALHOST });
    const production = ownerStack(ownerEnv());
    for (const origin of [LOCALHOST, IPV4]) {
      expect(await json(await at(production, origin)("/.well-known/oauth-protected-resource"))).toMatchObject({
        resource: "https://owner.magnt.ru/mcp",
        authorization_servers: ["https://owner.magnt.ru"],
      });
      const challenge = await at(production, origin)("/mcp", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      expect(challenge.headers.get("www-authenticate")).toContain(`resource_metadata="https://owner.magnt.ru/.well-known/oauth-protected-resource"`);
    }
  });

  it("the whole flow through 127.0.0.1 names 127.0.0.1: GitHub callback, iss, resource, token iss/aud", async () => {
    const { stack } = loopbackStack();
    const fetcher = at(stack, IPV4);
    const flow = await linkAt(fetcher, IPV4);
    // The __Host- cookies were set on 127.0.0.1: GitHub must send the browser back there.
    expect(flow.githubRedirect.searchParams.get("redirect_uri")).toBe(`${IPV4}/oauth/github/callback`);
    expect(flow.landed.origin + flow.landed.pathname).toBe(REDIRECT);
    expect(flow.landed.searchParams.get("iss")).toBe(IPV4);
    expect(payload(flow.code)).toMatchObject({ iss: IPV4, resource: `${IPV4}/mcp` });
    const tokens = await json(await exchangeAt(fetcher, IPV4, flow));
    expect(payload(tokens.access_token as string)).toMatchObject({ iss: IPV4, aud: `${IPV4}/mcp` });
    const listed = await ownerTool(fetcher, tokens.access_token as string, "owner_list_contacts", {});
    expect(listed.status).toBe(200);
    expect(listed.isError).toBe(false);
    expect(listed.structured).toMatchObject({ status: "ok" });
  });

  it("the consent decision must come from the name the page was served under", async () => {
    const { stack } = loopbackStack();
    const fetcher = at(stack, IPV4);
    const page = await consentPageAt(fetcher, IPV4, "owner.read");
    const refused = await approve(fetcher, page, LOCALHOST);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("The decision came from another site.");
    expect((await approve(fetcher, page, IPV4)).status).toBe(302);
  });

  it("the token endpoint refuses a resource named under another loopback name than its own address", async () => {
    const { stack } = loopbackStack();
    const fetcher = at(stack, IPV4);
    const flow = await linkAt(fetcher, IPV4);
    const refused = await exchangeAt(fetcher, LOCALHOST, flow);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_target" });
    // The refusal did not spend the code.
    expect((await exchangeAt(fetcher, IPV4, flow)).status).toBe(200);
  });
});

describe("tokens under the other loopback name (06 §3.6)", () => {
  it("a token minted through 127.0.0.1 works through localhost and [::1], at the gateway and at core; refresh too", async () => {
    const { stack } = loopbackStack();
    const flow = await linkAt(at(stack, IPV4), IPV4, "owner.read owner.write");
    const tokens = await json(await exchangeAt(at(stack, IPV4), IPV4, flow));
    for (const origin of [LOCALHOST, IPV6]) {
      const listed = await ownerTool(at(stack, origin), tokens.access_token as string, "owner_list_contacts", {});
      expect(listed.status, origin).toBe(200);
      expect(listed.structured).toMatchObject({ status: "ok" });
    }
    const refreshed = await json(
      await at(stack, LOCALHOST)("/oauth/token", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token as string, client_id: flow.clientId }),
      }),
    );
    // Minted where it was asked for: the refresh went through localhost.
    expect(payload(refreshed.access_token as string)).toMatchObject({ iss: LOCALHOST, aud: `${LOCALHOST}/mcp` });
    expect((await ownerTool(at(stack, IPV4), refreshed.access_token as string, "owner_list_contacts", {})).status).toBe(200);
  });

  it("core's scope challenge names the address the client used", async () => {
    const { stack } = loopbackStack();
    const flow = await linkAt(at(stack, IPV4), IPV4, "owner.read");
    const tokens = await json(await exchangeAt(at(stack, IPV4), IPV4, flow));
    for (const origin of [IPV4, LOCALHOST]) {
      const stepUp = await at(stack, origin)("/mcp", {
        method: "POST",
        headers: ownerMcpHeaders(tokens.access_token as string, "tools/call", "owner_set_contact_state"),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "owner_set_contact_state", arguments: { contact_id: `mc_${crypto.randomUUID()}`, state: "archived" }, _meta: modernMeta() },
        }),
      });
      expect(stepUp.status, origin).toBe(403);
      expect(stepUp.headers.get("www-authenticate")).toBe(
        `Bearer error="insufficient_scope", scope="owner.read owner.write", resource_metadata="${origin}/.well-known/oauth-protected-resource"`,
      );
    }
  });

  it("a production configuration with the same key refuses a loopback token", async () => {
    const { env, stack } = loopbackStack();
    const flow = await linkAt(at(stack, IPV4), IPV4);
    const tokens = await json(await exchangeAt(at(stack, IPV4), IPV4, flow));
    const production = ownerStack(ownerEnv({ OWNER_TOKEN_SIGNING_KEY: env.OWNER_TOKEN_SIGNING_KEY }));
    for (const origin of ["https://owner.magnt.ru", IPV4]) {
      const answer = await ownerTool(at(production, origin), tokens.access_token as string, "owner_list_contacts", {});
      expect(answer.status, origin).toBe(401);
    }
  });
});
