/**
 * The attack matrix of 06 DoD at the OAuth level: every attempt is refused
 * with the specified status and error, no redirect happens before the owner's
 * click, and the bearer check rejects every token it must.
 */
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  authenticateOwnerMcp,
  deriveOwnerKeys,
  insufficientScopeResponse,
  ownerInput,
  serveAuthorize,
  serveToken,
  type OwnerAnswer,
  type OwnerEnv,
} from "../../worker/owner";
import { decodeSigningKey, parseOwnerConfig } from "../../worker/owner/config";
import { countRows } from "../helpers/db";
import {
  AUDIENCE,
  authorize,
  callback,
  CLAUDE_REDIRECT,
  consentForm,
  cookieValue,
  decide,
  exchange,
  harness,
  link,
  LOOPBACK_REDIRECT,
  OWNER,
  OWNER_GITHUB_ID,
  OWNER_ORIGIN,
  pkce,
  refresh,
  register,
  registerClient,
  setCookies,
  STRANGER,
  token,
  type Harness,
  type TokenSet,
} from "../helpers/owner";

const CHALLENGE_401 = `Bearer resource_metadata="${OWNER_ORIGIN}/.well-known/oauth-protected-resource", scope="owner.read"`;
const CHALLENGE_401_INVALID = `Bearer error="invalid_token", resource_metadata="${OWNER_ORIGIN}/.well-known/oauth-protected-resource", scope="owner.read"`;

async function mcp(h: Harness, accessToken: string | null, env?: OwnerEnv) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (accessToken !== null) headers.Authorization = `Bearer ${accessToken}`;
  const request = new Request(`${OWNER_ORIGIN}/mcp`, { method: "POST", headers, body: "{}" });
  return authenticateOwnerMcp({ request, body: new Uint8Array(0) }, env ?? h.env, h.deps);
}

async function expectRejected(h: Harness, accessToken: string | null, status: number, challenge: string, env?: OwnerEnv) {
  const result = await mcp(h, accessToken, env);
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.answer.response.status).toBe(status);
  expect(result.answer.response.headers.get("www-authenticate")).toBe(challenge);
  expect(result.answer.outcome).toBe(status === 401 ? "token_rejected" : "scope_rejected");
}

/** Asserts an HTML 400 that redirects nowhere (no open redirector, 06 §3.3). */
async function expectHtmlRefusal(answer: OwnerAnswer, status = 400): Promise<string> {
  expect(answer.response.status).toBe(status);
  expect(answer.response.headers.get("location")).toBeNull();
  expect(answer.response.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(answer.response.headers.get("content-security-policy")).toBe(
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://github.com; frame-ancestors 'none'",
  );
  expect(answer.response.headers.get("referrer-policy")).toBe("no-referrer");
  expect(answer.response.headers.get("x-frame-options")).toBe("DENY");
  expect(answer.outcome).toBe(status === 403 ? "not_owner" : "oauth_error");
  return answer.response.clone().text();
}

async function tokenError(answer: OwnerAnswer): Promise<{ status: number; error: string }> {
  const body = (await answer.response.clone().json()) as { error: string; error_description: string };
  if (body.error === undefined) throw new Error(`not an error: ${answer.response.status} ${JSON.stringify(Object.keys(body))}`);
  expect(typeof body.error_description).toBe("string");
  expect(answer.response.headers.get("cache-control")).toBe("no-store");
  return { status: answer.response.status, error: body.error };
}

/** Signs a token with the harness's real token key (or `key`) and arbitrary header/claims. */
async function forge(h: Harness, claims: Record<string, unknown>, options: { alg?: string; typ?: string; key?: Uint8Array } = {}) {
  const keys = await deriveOwnerKeys(decodeSigningKey(h.env.OWNER_TOKEN_SIGNING_KEY)!);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: options.typ ?? "magnt-at" })
    .sign(options.key ?? keys.token);
}

function validClaims(h: Harness, overrides: Record<string, unknown> = {}) {
  const iat = Math.floor(h.time.now / 1000);
  return {
    iss: OWNER_ORIGIN,
    aud: AUDIENCE,
    sub: OWNER_GITHUB_ID,
    scope: "owner.read",
    epoch: 1,
    cid: "AAAAAAAAAAAAAAAAAAAAAA",
    iat,
    exp: iat + 3600,
    jti: "jti-forged",
    ...overrides,
  };
}

async function startConsent(h: Harness, clientId?: string) {
  const id = clientId ?? (await registerClient(h));
  const { challenge } = await pkce();
  const page = await authorize(h, {
    client_id: id,
    redirect_uri: LOOPBACK_REDIRECT,
    response_type: "code",
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
  });
  expect(page.response.status).toBe(200);
  return consentForm(page);
}

describe("bearer check at /mcp (06 §4)", () => {
  it("no token → 401 with the resource_metadata challenge; write flag adds owner.write, never owner.publish", async () => {
    const h = harness();
    await expectRejected(h, null, 401, CHALLENGE_401);
    const writable = harness({ OWNER_MCP_WRITE_ENABLED: "true" });
    await expectRejected(
      writable,
      null,
      401,
      `Bearer resource_metadata="${OWNER_ORIGIN}/.well-known/oauth-protected-resource", scope="owner.read owner.write"`,
    );
    const result = await mcp(h, null);
    if (!result.ok) expect(await result.answer.response.json()).toEqual({ error: "unauthorized" });
  });

  it("a forged token with valid claims is accepted (control), and each single deviation is rejected", async () => {
    const h = harness();
    expect((await mcp(h, await forge(h, validClaims(h)))).ok).toBe(true);

    const deviations: Array<[string, Promise<string>]> = [
      ["wrong audience", forge(h, validClaims(h, { aud: "https://magnt.ru/mcp" }))],
      ["audience array", forge(h, validClaims(h, { aud: [AUDIENCE, "https://evil.example"] }))],
      ["wrong issuer", forge(h, validClaims(h, { iss: "https://evil.example" }))],
      ["wrong subject", forge(h, validClaims(h, { sub: "1" }))],
      ["old epoch", forge(h, validClaims(h, { epoch: 0 }))],
      ["expired", forge(h, validClaims(h, { exp: Math.floor(h.time.now / 1000) }))],
      ["iat more than 60 s ahead", forge(h, validClaims(h, { iat: Math.floor(h.time.now / 1000) + 61 }))],
      ["extra claim", forge(h, validClaims(h, { admin: true }))],
      ["missing jti", forge(h, { ...validClaims(h), jti: undefined })],
      ["refresh typ", forge(h, validClaims(h), { typ: "magnt-rt" })],
      ["code typ", forge(h, validClaims(h), { typ: "magnt-code" })],
      ["alg HS512", forge(h, validClaims(h), { alg: "HS512" })],
      ["another key", forge(h, validClaims(h), { key: crypto.getRandomValues(new Uint8Array(32)) })],
    ];
    for (const [label, pending] of deviations) {
      const forged = await pending;
      const result = await mcp(h, forged);
      expect(result.ok, label).toBe(false);
      if (!result.ok) {
        expect(result.answer.response.status, label).toBe(401);
        expect(result.answer.response.headers.get("www-authenticate"), label).toBe(CHALLENGE_401_INVALID);
      }
    }
    // Tampered MAC and alg "none".
    const good = await forge(h, validClaims(h));
    const [header, payload, mac] = good.split(".");
    const flipped = mac!.startsWith("A") ? `B${mac!.slice(1)}` : `A${mac!.slice(1)}`;
    await expectRejected(h, `${header}.${payload}.${flipped}`, 401, CHALLENGE_401_INVALID);
    const none = `${btoa(JSON.stringify({ alg: "none", typ: "magnt-at" })).replace(/=+$/, "")}.${payload}.`;
    await expectRejected(h, none, 401, CHALLENGE_401_INVALID);
    // A token signed with the client key (anyone can obtain client-key signatures by registering).
    const keys = await deriveOwnerKeys(decodeSigningKey(h.env.OWNER_TOKEN_SIGNING_KEY)!);
    await expectRejected(h, await forge(h, validClaims(h), { key: keys.client }), 401, CHALLENGE_401_INVALID);
  });

  it("a token without owner.read → 403 insufficient_scope naming owner.read", async () => {
    const h = harness();
    await expectRejected(
      h,
      await forge(h, validClaims(h, { scope: "owner.write" })),
      403,
      `Bearer error="insufficient_scope", scope="owner.read", resource_metadata="${OWNER_ORIGIN}/.well-known/oauth-protected-resource"`,
    );
    // Through the real flow too: a client that asked for owner.write alone.
    const tokens = await exchange(h, await link(h, { scope: "owner.write" }));
    expect(tokens.scope).toBe("owner.write");
    const result = await mcp(h, tokens.access_token);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.answer.response.status).toBe(403);
  });

  it("the write tools' step-up answer is 403 naming owner.read owner.write (publish: all three)", async () => {
    const config = parseOwnerConfig(harness().env, "gateway")!;
    const write = insufficientScopeResponse(config, ["owner.read", "owner.write"]);
    expect(write.response.status).toBe(403);
    expect(write.outcome).toBe("scope_rejected");
    expect(write.response.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="owner.read owner.write", resource_metadata="${OWNER_ORIGIN}/.well-known/oauth-protected-resource"`,
    );
    const publish = insufficientScopeResponse(config, ["owner.read", "owner.write", "owner.publish"]);
    expect(publish.response.headers.get("www-authenticate")).toContain(`scope="owner.read owner.write owner.publish"`);
  });

  it("a real token expires at exp (not a second later), and dies at once when the epoch is bumped", async () => {
    const h = harness();
    const tokens = await exchange(h, await link(h));
    h.time.advance(3599);
    expect((await mcp(h, tokens.access_token)).ok).toBe(true);
    h.time.advance(1);
    await expectRejected(h, tokens.access_token, 401, CHALLENGE_401_INVALID);

    const fresh = await exchange(h, await link(h));
    await expectRejected(h, fresh.access_token, 401, CHALLENGE_401_INVALID, { ...h.env, OWNER_TOKEN_EPOCH: "2" });
  });

  it("ignores x-magnt-* and claims-looking headers: identity comes only from the token", async () => {
    const h = harness();
    const request = new Request(`${OWNER_ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        "x-magnt-owner": OWNER_GITHUB_ID,
        "x-magnt-claims": JSON.stringify(validClaims(h)),
        "x-magnt-scope": "owner.read owner.write",
        "x-forwarded-user": OWNER.login,
      },
      body: "{}",
    });
    const result = await authenticateOwnerMcp({ request, body: new Uint8Array(0) }, h.env, h.deps);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.answer.response.status).toBe(401);
  });
});

describe("GitHub linking (06 §3.4)", () => {
  it("a different numeric id with the owner's login → 403 HTML not_owner, no code, no redirect", async () => {
    const h = harness();
    const form = await startConsent(h);
    const approved = await decide(h, form, "approve");
    const linkCookie = cookieValue(approved.response, "__Host-magnt_owner_link")!;
    const answer = await callback(h, h.github.signIn(approved.response.headers.get("location")!, STRANGER), linkCookie);
    const html = await expectHtmlRefusal(answer, 403);
    expect(html).toContain("This GitHub account is not the owner");
    expect(html).not.toContain(STRANGER.login);
    expect(setCookies(answer.response)).toContain("__Host-magnt_owner_link=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0");
  });

  it("a state that does not match the link cookie, a missing cookie, or a forged cookie → 400 HTML", async () => {
    const h = harness();
    const form = await startConsent(h);
    const approved = await decide(h, form, "approve");
    const linkCookie = cookieValue(approved.response, "__Host-magnt_owner_link")!;
    const callbackUrl = h.github.signIn(approved.response.headers.get("location")!, OWNER);

    const wrongState = new URL(callbackUrl);
    wrongState.searchParams.set("state", "A".repeat(43));
    await expectHtmlRefusal(await callback(h, wrongState.href, linkCookie));
    await expectHtmlRefusal(await callback(h, callbackUrl, null));
    // Another consent's link cookie (a second browser session) does not match this state.
    const other = await decide(h, await startConsent(h), "approve");
    await expectHtmlRefusal(await callback(h, callbackUrl, cookieValue(other.response, "__Host-magnt_owner_link")));
    // Expired link request (600 s).
    h.time.advance(600);
    await expectHtmlRefusal(await callback(h, callbackUrl, linkCookie));
    expect(h.github.exchangeBodies).toEqual([]);
  });

  it("GitHub's error → access_denied to the client; GitHub failures → temporarily_unavailable", async () => {
    for (const mode of ["exchange_500", "exchange_error_body", "exchange_redirect", "user_500", "network_error"] as const) {
      const h = harness();
      const approved = await decide(h, await startConsent(h), "approve");
      const linkCookie = cookieValue(approved.response, "__Host-magnt_owner_link")!;
      const location = approved.response.headers.get("location")!;
      const callbackUrl = h.github.signIn(location, OWNER);
      h.github.mode = mode;
      const answer = await callback(h, callbackUrl, linkCookie);
      expect(answer.response.status, mode).toBe(302);
      const target = new URL(answer.response.headers.get("location")!);
      expect(target.origin + target.pathname, mode).toBe(LOOPBACK_REDIRECT);
      expect(target.searchParams.get("error"), mode).toBe("temporarily_unavailable");
      expect(target.searchParams.get("code"), mode).toBeNull();
      expect(answer.outcome).toBe("oauth_error");

      if (mode === "network_error") {
        h.github.mode = "ok";
        const refused = await callback(h, h.github.refuse(location), linkCookie);
        const denied = new URL(refused.response.headers.get("location")!);
        expect(denied.searchParams.get("error")).toBe("access_denied");
        expect(denied.searchParams.get("state")).toBe("s1");
      }
    }
  });
});

describe("token endpoint (06 §3.5)", () => {
  async function codeForm(h: Harness, overrides: Record<string, string> = {}) {
    const linked = await link(h);
    return {
      linked,
      form: {
        grant_type: "authorization_code",
        code: linked.code,
        redirect_uri: linked.redirectUri,
        client_id: linked.clientId,
        code_verifier: linked.verifier,
        ...overrides,
      },
    };
  }

  it("PKCE mismatch, redirect_uri mismatch and a code presented by another client are invalid_grant", async () => {
    const h = harness();
    const other = await registerClient(h);
    const wrongVerifier = (await pkce()).verifier;
    const spentBefore = await countRows("owner_oauth_spent", "kind = 'code'");
    const cases: Array<[string, Record<string, string>]> = [
      ["pkce", { code_verifier: wrongVerifier }],
      ["redirect", { redirect_uri: "http://127.0.0.1:33418/other" }],
      ["client", { client_id: other }],
    ];
    for (const [label, overrides] of cases) {
      const { form } = await codeForm(h, overrides);
      expect(await tokenError(await token(h, form)), label).toEqual({ status: 400, error: "invalid_grant" });
    }
    // None of those spent a code: the ledger is consulted only after every check passed.
    expect(await countRows("owner_oauth_spent", "kind = 'code'")).toBe(spentBefore);
  });

  it("a reused code is invalid_grant; an expired code (60 s) is invalid_grant", async () => {
    const h = harness();
    const { form } = await codeForm(h);
    expect((await token(h, form)).response.status).toBe(200);
    expect(await tokenError(await token(h, form))).toEqual({ status: 400, error: "invalid_grant" });

    const late = await codeForm(h);
    h.time.advance(60);
    expect(await tokenError(await token(h, late.form))).toEqual({ status: 400, error: "invalid_grant" });
  });

  it("a code from an older epoch is invalid_grant; resource mismatch is invalid_target", async () => {
    const h = harness();
    const { form } = await codeForm(h);
    expect(await tokenError(await h.call(serveToken, tokenRequest(form), { ...h.env, OWNER_TOKEN_EPOCH: "2" }))).toEqual({
      status: 400,
      error: "invalid_grant",
    });
    const second = await codeForm(h, { resource: "https://magnt.ru/mcp" });
    expect(await tokenError(await token(h, second.form))).toEqual({ status: 400, error: "invalid_target" });
    const third = await codeForm(h, { resource: AUDIENCE });
    expect((await token(h, third.form)).response.status).toBe(200);
  });

  it("client id problems are invalid_client (401); missing fields invalid_request; other grants unsupported", async () => {
    const h = harness();
    const { form } = await codeForm(h);
    expect(await tokenError(await token(h, { ...form, client_id: "oc_forged" }))).toEqual({ status: 401, error: "invalid_client" });
    expect(await tokenError(await token(h, { ...form, client_id: `oc_${"a".repeat(2046)}` }))).toEqual({ status: 401, error: "invalid_client" });
    expect(await tokenError(await token(h, { grant_type: "authorization_code", code: form.code }))).toEqual({ status: 400, error: "invalid_request" });
    expect(await tokenError(await token(h, { grant_type: "client_credentials" }))).toEqual({ status: 400, error: "unsupported_grant_type" });
    expect(await tokenError(await token(h, form, "application/json"))).toEqual({ status: 400, error: "invalid_request" });
  });

  it("refresh reuse → invalid_grant and the whole family is revoked", async () => {
    const h = harness();
    const linked = await link(h);
    const first = await exchange(h, linked);
    const rotated = (await (await refresh(h, linked.clientId, first.refresh_token)).response.json()) as TokenSet;
    const familiesBefore = await countRows("owner_oauth_spent", "kind = 'family'");
    // The old one again: reuse detected.
    expect(await tokenError(await refresh(h, linked.clientId, first.refresh_token))).toEqual({ status: 400, error: "invalid_grant" });
    expect(await countRows("owner_oauth_spent", "kind = 'family'")).toBe(familiesBefore + 1);
    // The legitimate rotated token now fails too.
    expect(await tokenError(await refresh(h, linked.clientId, rotated.refresh_token))).toEqual({ status: 400, error: "invalid_grant" });
    // Residual validity (06 §3.5): the access token already issued stays valid until it expires.
    expect((await mcp(h, rotated.access_token)).ok).toBe(true);
  });

  it("a refresh after an epoch bump, with another client, or widening the scope is refused", async () => {
    const h = harness();
    const linked = await link(h);
    const first = await exchange(h, linked);
    const bumped = await h.call(serveToken, tokenRequest({
      grant_type: "refresh_token",
      refresh_token: first.refresh_token,
      client_id: linked.clientId,
    }), { ...h.env, OWNER_TOKEN_EPOCH: "2" });
    expect(await tokenError(bumped)).toEqual({ status: 400, error: "invalid_grant" });
    const other = await registerClient(h);
    expect(await tokenError(await refresh(h, other, first.refresh_token))).toEqual({ status: 400, error: "invalid_grant" });
    expect(await tokenError(await refresh(h, linked.clientId, first.refresh_token, "owner.read owner.write"))).toEqual({
      status: 400,
      error: "invalid_scope",
    });
    expect(await tokenError(await refresh(h, linked.clientId, first.refresh_token, "owner.admin"))).toEqual({ status: 400, error: "invalid_scope" });
    // None of the refusals spent the token: it still works once.
    expect((await refresh(h, linked.clientId, first.refresh_token)).response.status).toBe(200);
  });

  it("a family ends at fam_iat + 90 days however often it is rotated", async () => {
    const h = harness();
    const linked = await link(h);
    let current = (await exchange(h, linked)).refresh_token;
    const famIat = Math.floor(h.time.now / 1000);
    for (let day = 29; day <= 87; day += 29) {
      h.time.advance(29 * 24 * 3600);
      const answer = await refresh(h, linked.clientId, current);
      expect(answer.response.status, `day ${day}`).toBe(200);
      current = ((await answer.response.json()) as TokenSet).refresh_token;
    }
    // Issued on day 87: its exp is capped at the family's end, not 30 days later.
    const payload = JSON.parse(atob(current.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/"))) as { exp: number };
    expect(payload.exp).toBe(famIat + 90 * 24 * 3600);
    h.time.advance(3 * 24 * 3600);
    expect(await tokenError(await refresh(h, linked.clientId, current))).toEqual({ status: 400, error: "invalid_grant" });
  });

  it("core unreachable (ledger throws) → 503 temporarily_unavailable, nothing issued", async () => {
    const h = harness();
    const { form } = await codeForm(h);
    const broken = { now: h.deps.now, spent: { spendOnce: () => Promise.reject(new Error("rpc down")), isSpent: () => Promise.reject(new Error("rpc down")) } };
    const answer = await serveToken((await ownerInput(tokenRequest(form)))!, h.env, broken);
    expect(answer.response.status).toBe(503);
    expect(answer.outcome).toBe("core_unavailable");
    expect(((await answer.response.json()) as { access_token?: string }).access_token).toBeUndefined();
  });
});

function tokenRequest(form: Record<string, string>): Request {
  return new Request(`${OWNER_ORIGIN}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
}

describe("registration (06 §3.2)", () => {
  it("pins client_name ≤ 100 after trimming, 1–5 redirect URIs, auth method none, and client_id ≤ 2048", async () => {
    const h = harness();
    const status = async (metadata: unknown) => {
      const answer = await register(h, metadata);
      if (answer.response.status === 201) return "ok";
      const body = (await answer.response.json()) as { error: string };
      expect(answer.response.status).toBe(400);
      expect(answer.outcome).toBe("oauth_error");
      return body.error;
    };
    expect(await status({ redirect_uris: [LOOPBACK_REDIRECT], client_name: `  ${"n".repeat(100)}  ` })).toBe("ok");
    expect(await status({ redirect_uris: [LOOPBACK_REDIRECT], client_name: "n".repeat(101) })).toBe("invalid_client_metadata");
    expect(await status({ redirect_uris: [] })).toBe("invalid_redirect_uri");
    expect(await status({})).toBe("invalid_redirect_uri");
    expect(await status({ redirect_uris: Array.from({ length: 6 }, (_, i) => `http://localhost:${3000 + i}/cb`) })).toBe("invalid_redirect_uri");
    expect(await status({ redirect_uris: Array.from({ length: 5 }, (_, i) => `http://localhost:${3000 + i}/cb`) })).toBe("ok");
    expect(await status({ redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: "client_secret_basic" })).toBe("invalid_client_metadata");
    expect(await status({ redirect_uris: [LOOPBACK_REDIRECT], grant_types: ["implicit"] })).toBe("invalid_client_metadata");
    expect(await status({ redirect_uris: [LOOPBACK_REDIRECT], response_types: ["token"] })).toBe("invalid_client_metadata");
    expect(await status({ redirect_uris: [LOOPBACK_REDIRECT], client_name: 7 })).toBe("invalid_client_metadata");
    expect(await status("not an object")).toBe("invalid_client_metadata");
    const long = Array.from({ length: 5 }, (_, i) => `https://claude.ai/${String(i).repeat(480)}`);
    expect(await status({ redirect_uris: long })).toBe("invalid_client_metadata");
    const answer = await register(h, { redirect_uris: [LOOPBACK_REDIRECT] });
    expect(await answer.response.json()).toMatchObject({
      client_name: "MCP client",
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      redirect_uris: [LOOPBACK_REDIRECT],
    });
  });

  it("accepts listed https origins and loopback http; refuses everything else", async () => {
    const h = harness();
    const status = async (uri: string) => {
      const answer = await register(h, { redirect_uris: [uri] });
      return answer.response.status === 201 ? "ok" : ((await answer.response.json()) as { error: string }).error;
    };
    for (const uri of [CLAUDE_REDIRECT, "https://chatgpt.com/connector/oauth/x", "http://localhost/cb", "http://[::1]:9/cb", "http://127.0.0.1:65535/"]) {
      expect(await status(uri), uri).toBe("ok");
    }
    for (const uri of [
      "https://evil.example/cb",
      "http://claude.ai/cb",
      "https://claude.ai.evil.example/cb",
      "https://claude.ai:8443/cb",
      "https://localhost/cb",
      "http://localhost.evil.example/cb",
      "http://127.0.0.2/cb",
      "https://claude.ai/cb#frag",
      "https://user@claude.ai/cb",
      "/relative",
      "javascript:alert(1)",
      `https://claude.ai/${"x".repeat(512)}`,
    ]) {
      expect(await status(uri), uri).toBe("invalid_redirect_uri");
    }
    // An empty list means loopback only.
    const local = harness({ OWNER_REDIRECT_ORIGINS: "" });
    expect((await register(local, { redirect_uris: [CLAUDE_REDIRECT] })).response.status).toBe(400);
  });
});

describe("authorization before the owner's click: HTML 400, never a redirect (06 §3.3)", () => {
  it("every malformed request is an HTML page naming the problem", async () => {
    const h = harness();
    const clientId = await registerClient(h, [LOOPBACK_REDIRECT, CLAUDE_REDIRECT]);
    const { challenge } = await pkce();
    const good = {
      client_id: clientId,
      redirect_uri: LOOPBACK_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
    };
    expect((await authorize(h, good)).response.status).toBe(200);
    const cases: Array<[string, Record<string, string>, string]> = [
      ["unregistered redirect", { ...good, redirect_uri: "http://127.0.0.1:33418/other" }, "redirect_uri"],
      ["foreign redirect", { ...good, redirect_uri: "https://evil.example/cb" }, "redirect_uri"],
      ["no redirect", { ...good, redirect_uri: "" }, "redirect_uri"],
      ["wrong response_type", { ...good, response_type: "token" }, "response_type"],
      ["no PKCE", { ...good, code_challenge: "" }, "PKCE"],
      ["plain PKCE", { ...good, code_challenge_method: "plain" }, "PKCE"],
      ["short challenge", { ...good, code_challenge: "abc" }, "PKCE"],
      ["unknown scope", { ...good, scope: "owner.read admin" }, "scope"],
      ["wrong resource", { ...good, resource: "https://magnt.ru/mcp" }, "resource"],
      ["forged client", { ...good, client_id: "oc_eyJhbGciOiJIUzI1NiJ9.e30.AAAA" }, "client_id"],
      ["over-long client", { ...good, client_id: `oc_${"a".repeat(2046)}` }, "client_id"],
      ["long state", { ...good, state: "s".repeat(513) }, "state"],
    ];
    for (const [label, params, named] of cases) {
      const html = await expectHtmlRefusal(await authorize(h, params));
      expect(html, label).toContain(named);
    }
    const duplicated = new URL(`${OWNER_ORIGIN}/oauth/authorize`);
    for (const [name, value] of Object.entries(good)) duplicated.searchParams.append(name, value);
    duplicated.searchParams.append("redirect_uri", "https://evil.example/cb");
    await expectHtmlRefusal(await h.call(serveAuthorize, new Request(duplicated)));
  });

  it("a redirect origin removed from OWNER_REDIRECT_ORIGINS after registration is refused at authorize", async () => {
    const h = harness();
    const clientId = await registerClient(h, [CLAUDE_REDIRECT]);
    const { challenge } = await pkce();
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: CLAUDE_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const request = new Request(`${OWNER_ORIGIN}/oauth/authorize?${params}`);
    expect((await h.call(serveAuthorize, request)).response.status).toBe(200);
    await expectHtmlRefusal(await h.call(serveAuthorize, request, { ...h.env, OWNER_REDIRECT_ORIGINS: "https://chatgpt.com" }));
  });

  it("the consent POST needs matching cookie, form nonce, signed nonce hash and a same-origin Origin", async () => {
    const h = harness();
    const form = await startConsent(h);
    const other = await startConsent(h);
    const attempts: Array<[string, Promise<OwnerAnswer>]> = [
      ["no cookie", decide(h, form, "approve", { cookieHeader: null })],
      ["cookie ≠ form", decide(h, form, "approve", { cookieHeader: `__Host-magnt_owner_csrf=${other.cookie}` })],
      ["both from another session", decide(h, form, "approve", { cookieHeader: `__Host-magnt_owner_csrf=${other.cookie}`, formOverride: { csrf: other.csrf } })],
      ["duplicated cookie", decide(h, form, "approve", { cookieHeader: `__Host-magnt_owner_csrf=${form.cookie}; __Host-magnt_owner_csrf=${form.cookie}` })],
      ["foreign Origin", decide(h, form, "approve", { origin: "https://evil.example" })],
      ["null Origin", decide(h, form, "approve", { origin: "null" })],
      ["tampered consent", decide(h, form, "approve", { formOverride: { consent: `${form.consent.slice(0, -2)}AA` } })],
      ["unknown decision", decide(h, form, "maybe")],
    ];
    for (const [label, pending] of attempts) {
      const answer = await pending;
      expect(answer.response.status, label).toBe(400);
      expect(answer.response.headers.get("location"), label).toBeNull();
      expect(cookieValue(answer.response, "__Host-magnt_owner_link"), label).toBeNull();
    }
    // The control: without Origin (some browsers omit it) and with matching values, Deny works.
    expect((await decide(h, form, "deny", { origin: null })).response.status).toBe(302);
    // Expired consent request (600 s).
    const late = await startConsent(h);
    h.time.advance(600);
    expect((await decide(h, late, "approve")).response.status).toBe(400);
    expect(h.github.requests).toEqual([]);
  });
});
