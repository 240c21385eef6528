/**
 * The owner link flow end to end at the handler level (06 §3, DoD "full happy
 * path"): register → authorize → consent approve → GitHub (fake) → callback →
 * code → token → bearer accepted → refresh → refresh again, plus the metadata
 * documents and the shapes every step answers with.
 */
import { describe, expect, it } from "vitest";
import {
  authenticateOwnerMcp,
  serveAuthorizationServerMetadata,
  serveOAuthPreflight,
  serveProtectedResourceMetadata,
  type OwnerAnswer,
} from "../../worker/owner";
import { countRows } from "../helpers/db";
import {
  AUDIENCE,
  authorize,
  CLAUDE_REDIRECT,
  consentForm,
  cookieValue,
  decide,
  exchange,
  GITHUB_CLIENT_ID,
  GITHUB_CLIENT_SECRET,
  harness,
  link,
  LOOPBACK_REDIRECT,
  OWNER_GITHUB_ID,
  OWNER_ORIGIN,
  pkce,
  refresh,
  registerClient,
  setCookies,
  token,
  callback,
  OWNER,
  type Harness,
  type TokenSet,
} from "../helpers/owner";

async function mcpAuth(h: Harness, accessToken: string | null) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (accessToken !== null) headers.Authorization = `Bearer ${accessToken}`;
  const request = new Request(`${OWNER_ORIGIN}/mcp`, { method: "POST", headers, body: "{}" });
  return authenticateOwnerMcp({ request, body: new Uint8Array(0) }, h.env, h.deps);
}

function decodePayload(jws: string): Record<string, unknown> {
  const part = jws.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4))) as Record<string, unknown>;
}

function decodeHeader(jws: string): Record<string, unknown> {
  const part = jws.split(".")[0]!.replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4))) as Record<string, unknown>;
}

describe("owner OAuth: metadata (06 §3.1)", () => {
  it("serves protected-resource and authorization-server metadata with CORS *", async () => {
    const h = harness();
    const resource = await h.call(serveProtectedResourceMetadata, new Request(`${OWNER_ORIGIN}/.well-known/oauth-protected-resource`));
    expect(resource.response.status).toBe(200);
    expect(resource.response.headers.get("access-control-allow-origin")).toBe("*");
    expect(resource.response.headers.get("cache-control")).toBe("no-store");
    expect(await resource.response.json()).toEqual({
      resource: AUDIENCE,
      authorization_servers: [OWNER_ORIGIN],
      scopes_supported: ["owner.read", "owner.write", "owner.publish"],
      bearer_methods_supported: ["header"],
      resource_name: "MAGNT owner",
    });
    const server = await h.call(serveAuthorizationServerMetadata, new Request(`${OWNER_ORIGIN}/.well-known/oauth-authorization-server`));
    expect(await server.response.json()).toEqual({
      issuer: OWNER_ORIGIN,
      authorization_endpoint: `${OWNER_ORIGIN}/oauth/authorize`,
      token_endpoint: `${OWNER_ORIGIN}/oauth/token`,
      registration_endpoint: `${OWNER_ORIGIN}/oauth/register`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      scopes_supported: ["owner.read", "owner.write", "owner.publish"],
      authorization_response_iss_parameter_supported: true,
    });
    expect(server.step).toBe("metadata");
  });

  it("answers the OAuth preflight with 204 and the CORS headers of 06 §2", async () => {
    const h = harness();
    const answer = await h.call(serveOAuthPreflight, new Request(`${OWNER_ORIGIN}/oauth/token`, { method: "OPTIONS" }));
    expect(answer.response.status).toBe(204);
    expect(Object.fromEntries(answer.response.headers)).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-allow-headers": "Content-Type, Authorization",
      "access-control-max-age": "600",
    });
  });
});

describe("owner OAuth: the full link flow (06 DoD happy path)", () => {
  it("register → authorize → approve → GitHub → callback → code → token → bearer → refresh → refresh again", async () => {
    const h = harness({ OWNER_MCP_WRITE_ENABLED: "true" });

    // 1. Registration: stateless, the client id is a signed object.
    const clientId = await registerClient(h, [LOOPBACK_REDIRECT, CLAUDE_REDIRECT], "  Claude Desktop  ");
    expect(clientId.startsWith("oc_")).toBe(true);
    expect(clientId.length).toBeLessThanOrEqual(2048);
    expect(decodeHeader(clientId.slice(3))).toEqual({ alg: "HS256", typ: "magnt-client" });

    // 2. Authorization request → consent page.
    const { verifier, challenge } = await pkce();
    const page = await authorize(h, {
      client_id: clientId,
      redirect_uri: CLAUDE_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "client-state-1",
      scope: "owner.read owner.write",
      resource: AUDIENCE,
    });
    expect(page.response.status).toBe(200);
    expect(page.outcome).toBeNull();
    const html = await page.response.clone().text();
    expect(html).toContain("Claude Desktop");
    expect(html).toContain("claude.ai");
    expect(html).toContain('<button type="submit" name="decision" value="approve">');
    expect(html).toContain('<button type="submit" name="decision" value="deny">');
    expect(html).not.toContain("owner.publish");
    expect(page.response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://github.com https://claude.ai; frame-ancestors 'none'",
    );
    expect(page.response.headers.get("x-frame-options")).toBe("DENY");
    expect(page.response.headers.get("cache-control")).toBe("no-store");
    const csrfCookie = setCookies(page.response).find((line: string) => line.startsWith("__Host-magnt_owner_csrf="))!;
    expect(csrfCookie).toMatch(/^__Host-magnt_owner_csrf=[A-Za-z0-9_-]{43}; Secure; HttpOnly; SameSite=Lax; Path=\/; Max-Age=600$/);

    // 3. Approve → link cookie + redirect to GitHub with only a hash as state.
    const form = await consentForm(page);
    const approved = await decide(h, form, "approve");
    expect(approved.response.status).toBe(302);
    const github = new URL(approved.response.headers.get("location")!);
    expect(github.origin + github.pathname).toBe("https://github.com/login/oauth/authorize");
    expect(Object.fromEntries(github.searchParams)).toEqual({
      client_id: GITHUB_CLIENT_ID,
      redirect_uri: `${OWNER_ORIGIN}/oauth/github/callback`,
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      allow_signup: "false",
    });
    const linkCookie = cookieValue(approved.response, "__Host-magnt_owner_link")!;
    expect(decodeHeader(linkCookie)).toEqual({ alg: "HS256", typ: "magnt-link" });
    expect(setCookies(approved.response)).toContain("__Host-magnt_owner_csrf=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0");

    // 4. GitHub (fake) → callback → code to the client.
    const back = await callback(h, h.github.signIn(github.href, OWNER), linkCookie);
    expect(back.response.status).toBe(302);
    const redirect = new URL(back.response.headers.get("location")!);
    expect(redirect.origin + redirect.pathname).toBe(CLAUDE_REDIRECT);
    expect(redirect.searchParams.get("state")).toBe("client-state-1");
    expect(redirect.searchParams.get("iss")).toBe(OWNER_ORIGIN);
    const code = redirect.searchParams.get("code")!;
    expect(decodeHeader(code)).toEqual({ alg: "HS256", typ: "magnt-code" });
    expect(setCookies(back.response)).toContain("__Host-magnt_owner_link=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0");
    // GitHub got the secret in the form body, the right redirect URI, and the lookup used the token.
    const exchangeForm = new URLSearchParams(h.github.exchangeBodies[0]);
    expect(exchangeForm.get("client_secret")).toBe(GITHUB_CLIENT_SECRET);
    expect(exchangeForm.get("redirect_uri")).toBe(`${OWNER_ORIGIN}/oauth/github/callback`);
    const userRequest = h.github.requests.find((request) => new URL(request.url).pathname === "/user")!;
    expect(userRequest.headers.get("user-agent")).toBe("MAGNT-Owner-Gateway/1.0");
    expect(userRequest.headers.get("accept")).toBe("application/vnd.github+json");

    // 5. Code → tokens.
    const first = await exchange(h, { clientId, redirectUri: CLAUDE_REDIRECT, verifier, code, state: "client-state-1" });
    expect(first.token_type).toBe("Bearer");
    expect(first.expires_in).toBe(3600);
    expect(first.scope).toBe("owner.read owner.write");
    const claims = decodePayload(first.access_token);
    expect(decodeHeader(first.access_token)).toEqual({ alg: "HS256", typ: "magnt-at" });
    expect(Object.keys(claims).sort()).toEqual(["aud", "cid", "epoch", "exp", "iat", "iss", "jti", "scope", "sub"]);
    expect(claims).toMatchObject({ iss: OWNER_ORIGIN, aud: AUDIENCE, sub: OWNER_GITHUB_ID, epoch: 1, scope: "owner.read owner.write" });
    expect(claims.cid).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(claims.exp).toBe((claims.iat as number) + 3600);
    const refreshClaims = decodePayload(first.refresh_token);
    expect(refreshClaims.fam_iat).toBe(claims.iat);
    expect(refreshClaims.exp).toBe((claims.iat as number) + 30 * 24 * 3600);

    // 6. The bearer check admits it.
    const admitted = await mcpAuth(h, first.access_token);
    expect(admitted.ok).toBe(true);
    if (admitted.ok) expect(admitted.claims.sub).toBe(OWNER_GITHUB_ID);

    // 7. Refresh, then refresh again with the rotated token; the family and fam_iat carry over.
    h.time.advance(7200);
    const second = await refresh(h, clientId, first.refresh_token);
    expect(second.response.status).toBe(200);
    expect(second.step).toBe("token_refresh");
    const secondTokens = (await second.response.json()) as TokenSet;
    expect(decodePayload(secondTokens.refresh_token)).toMatchObject({ fam: refreshClaims.fam, fam_iat: refreshClaims.fam_iat });
    expect((await mcpAuth(h, secondTokens.access_token)).ok).toBe(true);

    h.time.advance(7200);
    const third = await refresh(h, clientId, secondTokens.refresh_token, "owner.read");
    expect(third.response.status).toBe(200);
    const thirdTokens = (await third.response.json()) as TokenSet;
    expect(thirdTokens.scope).toBe("owner.read");
    // RFC 6749 §6: the rotated refresh token keeps the original scope; only the access token narrowed.
    expect(decodePayload(thirdTokens.refresh_token).scope).toBe("owner.read owner.write");
    expect(decodePayload(thirdTokens.access_token).scope).toBe("owner.read");
    expect((await mcpAuth(h, thirdTokens.access_token)).ok).toBe(true);
  });

  it("a request without scope gets owner.read only; owner.publish appears on its own highlighted line when asked", async () => {
    const h = harness();
    const plain = await exchange(h, await link(h));
    expect(plain.scope).toBe("owner.read");

    const clientId = await registerClient(h);
    const { challenge } = await pkce();
    const page = await authorize(h, {
      client_id: clientId,
      redirect_uri: LOOPBACK_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      scope: "owner.publish owner.read",
    });
    const html = await page.response.text();
    expect(html).toMatch(/<p class="publish"><strong>Also requested: <code>owner\.publish<\/code><\/strong> — lets this client publish replies that visitors can read\.<\/p>/);
    expect(html).not.toMatch(/<li><code>owner\.publish/);
  });

  it("the code exchange answers no-store JSON and the code is recorded as spent", async () => {
    const h = harness();
    const linked = await link(h);
    const answer = await token(h, {
      grant_type: "authorization_code",
      code: linked.code,
      redirect_uri: linked.redirectUri,
      client_id: linked.clientId,
      code_verifier: linked.verifier,
    });
    expect(answer.response.headers.get("cache-control")).toBe("no-store");
    expect(answer.step).toBe("token_code");
    expect(answer.outcome).toBeNull();
    const spent = await countRows("owner_oauth_spent", "kind = 'code'");
    expect(spent).toBeGreaterThanOrEqual(1);
  });

  it("Deny redirects only to the validated redirect URI with error=access_denied, state and iss", async () => {
    const h = harness();
    const clientId = await registerClient(h);
    const { challenge } = await pkce();
    const page = await authorize(h, {
      client_id: clientId,
      redirect_uri: LOOPBACK_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s-deny",
    });
    const denied: OwnerAnswer = await decide(h, await consentForm(page), "deny");
    expect(denied.response.status).toBe(302);
    expect(denied.response.headers.get("location")).toBe(
      `${LOOPBACK_REDIRECT}?error=access_denied&state=s-deny&iss=${encodeURIComponent(OWNER_ORIGIN)}`,
    );
    expect(cookieValue(denied.response, "__Host-magnt_owner_link")).toBeNull();
    expect(h.github.requests).toEqual([]);
  });
});
