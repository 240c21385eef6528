/**
 * Fail-closed configuration (06 §1, 00 §6–§7): the owner function exists only
 * with `OWNER_MCP_ENABLED` exactly "true", and then only with every secret
 * well-formed; a GitHub origin override must be a loopback stand-in written
 * exactly as `new URL(value).origin` prints it. Plus the key derivation pin.
 */
import { describe, expect, it } from "vitest";
import {
  authenticateOwnerMcp,
  deriveOwnerKeys,
  serveAuthorizationServerMetadata,
  serveAuthorize,
  serveConsent,
  serveGithubCallback,
  serveOAuthPreflight,
  serveProtectedResourceMetadata,
  serveRegister,
  serveToken,
  type OwnerEnv,
  type OwnerHandler,
} from "../../worker/owner";
import { decodeSigningKey, parseOwnerConfig, resolveOwner } from "../../worker/owner/config";
import { DERIVED_KEY_BYTES, KEY_INFO } from "../../worker/owner/oauth/keys";
import {
  cookieValue,
  decide,
  consentForm,
  authorize,
  callback,
  exchange,
  harness,
  link,
  LOOPBACK_REDIRECT,
  OWNER,
  OWNER_ORIGIN,
  ownerEnv,
  pkce,
  registerClient,
} from "../helpers/owner";

const HANDLERS: Array<[string, OwnerHandler, () => Request]> = [
  ["resource metadata", serveProtectedResourceMetadata, () => new Request(`${OWNER_ORIGIN}/.well-known/oauth-protected-resource`)],
  ["server metadata", serveAuthorizationServerMetadata, () => new Request(`${OWNER_ORIGIN}/.well-known/oauth-authorization-server`)],
  ["preflight", serveOAuthPreflight, () => new Request(`${OWNER_ORIGIN}/oauth/token`, { method: "OPTIONS" })],
  [
    "register",
    serveRegister,
    () => new Request(`${OWNER_ORIGIN}/oauth/register`, { method: "POST", body: JSON.stringify({ redirect_uris: [LOOPBACK_REDIRECT] }) }),
  ],
  ["authorize", serveAuthorize, () => new Request(`${OWNER_ORIGIN}/oauth/authorize?client_id=x`)],
  [
    "consent",
    serveConsent,
    () =>
      new Request(`${OWNER_ORIGIN}/oauth/authorize`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "decision=approve",
      }),
  ],
  ["callback", serveGithubCallback, () => new Request(`${OWNER_ORIGIN}/oauth/github/callback?code=x&state=y`)],
  [
    "token",
    serveToken,
    () =>
      new Request(`${OWNER_ORIGIN}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "grant_type=refresh_token&refresh_token=x&client_id=y",
      }),
  ],
];

describe("the owner gate (06 §1)", () => {
  it.each([["absent", undefined], ["TRUE", "TRUE"], [" true", " true"], ["1", "1"], ["false", "false"]])(
    "OWNER_MCP_ENABLED %s → every owner path 404 owner_disabled",
    async (_label, value) => {
      const h = harness({ OWNER_MCP_ENABLED: value });
      for (const [name, handler, request] of HANDLERS) {
        const answer = await h.call(handler, request());
        expect(answer.response.status, name).toBe(404);
        expect(await answer.response.text(), name).toBe("Not found");
        expect(answer.outcome, name).toBe("owner_disabled");
      }
      const mcp = await authenticateOwnerMcp({ request: new Request(`${OWNER_ORIGIN}/mcp`), body: null }, h.env, h.deps);
      expect(mcp.ok).toBe(false);
      if (!mcp.ok) expect(mcp.answer.response.status).toBe(404);
    },
  );

  const MALFORMED: Array<[string, Partial<OwnerEnv>]> = [
    ["OWNER_GITHUB_ID missing", { OWNER_GITHUB_ID: undefined }],
    ["OWNER_GITHUB_ID empty", { OWNER_GITHUB_ID: "" }],
    ["OWNER_GITHUB_ID leading zero", { OWNER_GITHUB_ID: "0583231" }],
    ["OWNER_GITHUB_ID a login", { OWNER_GITHUB_ID: "octo-owner" }],
    ["OWNER_GITHUB_ID 21 digits", { OWNER_GITHUB_ID: "123456789012345678901" }],
    ["OWNER_GITHUB_ID with space", { OWNER_GITHUB_ID: "583231 " }],
    ["signing key missing", { OWNER_TOKEN_SIGNING_KEY: undefined }],
    ["signing key 31 bytes", { OWNER_TOKEN_SIGNING_KEY: "A".repeat(41) }],
    ["signing key standard base64", { OWNER_TOKEN_SIGNING_KEY: `${"A".repeat(42)}+/` }],
    ["signing key with spaces", { OWNER_TOKEN_SIGNING_KEY: ` ${"A".repeat(43)}` }],
    ["epoch 0", { OWNER_TOKEN_EPOCH: "0" }],
    ["epoch leading zero", { OWNER_TOKEN_EPOCH: "01" }],
    ["epoch empty", { OWNER_TOKEN_EPOCH: "" }],
    ["epoch ten digits", { OWNER_TOKEN_EPOCH: "1234567890" }],
    ["epoch negative", { OWNER_TOKEN_EPOCH: "-1" }],
    ["GITHUB_CLIENT_ID missing", { GITHUB_CLIENT_ID: undefined }],
    ["GITHUB_CLIENT_SECRET missing", { GITHUB_CLIENT_SECRET: undefined }],
    ["GITHUB_CLIENT_SECRET empty", { GITHUB_CLIENT_SECRET: "" }],
    ["GITHUB_OAUTH_ORIGIN public host", { GITHUB_OAUTH_ORIGIN: "https://evil.example" }],
    ["GITHUB_OAUTH_ORIGIN https loopback", { GITHUB_OAUTH_ORIGIN: "https://localhost:8443" }],
    ["GITHUB_OAUTH_ORIGIN trailing slash", { GITHUB_OAUTH_ORIGIN: "http://localhost:8790/" }],
    ["GITHUB_OAUTH_ORIGIN upper case", { GITHUB_OAUTH_ORIGIN: "http://LOCALHOST:8790" }],
    ["GITHUB_OAUTH_ORIGIN with path", { GITHUB_OAUTH_ORIGIN: "http://127.0.0.1:8790/github" }],
    ["GITHUB_OAUTH_ORIGIN default with slash", { GITHUB_OAUTH_ORIGIN: "https://github.com/" }],
    ["GITHUB_API_ORIGIN public host", { GITHUB_API_ORIGIN: "https://api.github.com.evil.example" }],
    ["GITHUB_API_ORIGIN user info", { GITHUB_API_ORIGIN: "http://user@localhost:8790" }],
    ["GITHUB_API_ORIGIN empty", { GITHUB_API_ORIGIN: "" }],
    ["OWNER_ORIGIN not a URL", { OWNER_ORIGIN: "owner.magnt.ru" }],
    ["OWNER_ORIGIN with path", { OWNER_ORIGIN: "https://owner.magnt.ru/x" }],
  ];

  it.each(MALFORMED)("%s → every owner path 503 owner_misconfigured, no token accepted", async (_label, overrides) => {
    // A token minted while the configuration was sound…
    const sound = harness();
    const tokens = await exchange(sound, await link(sound));
    // …is refused, like everything else, once a secret is missing or malformed.
    const env = { ...sound.env, ...overrides };
    for (const [name, handler, request] of HANDLERS) {
      const answer = await sound.call(handler, request(), env);
      expect(answer.response.status, name).toBe(503);
      expect(await answer.response.text(), name).toBe("Service temporarily unavailable");
      expect(answer.outcome, name).toBe("owner_misconfigured");
    }
    const request = new Request(`${OWNER_ORIGIN}/mcp`, { method: "POST", headers: { Authorization: `Bearer ${tokens.access_token}` } });
    const mcp = await authenticateOwnerMcp({ request, body: new Uint8Array(0) }, env, sound.deps);
    expect(mcp.ok).toBe(false);
    if (!mcp.ok) expect(mcp.answer.response.status).toBe(503);
  });

  it("core needs no GitHub secrets; the gateway does", () => {
    const env = ownerEnv({ GITHUB_CLIENT_ID: undefined, GITHUB_CLIENT_SECRET: undefined, GITHUB_OAUTH_ORIGIN: "https://evil.example" });
    expect(resolveOwner(env, "core").kind).toBe("ready");
    expect(resolveOwner(env, "gateway").kind).toBe("misconfigured");
  });

  it("accepts the defaults, the defaults written out, loopback stand-ins, an absent epoch (1) and a padded key", () => {
    const accepted: Array<Partial<OwnerEnv>> = [
      {},
      { GITHUB_OAUTH_ORIGIN: "https://github.com", GITHUB_API_ORIGIN: "https://api.github.com" },
      { GITHUB_OAUTH_ORIGIN: "http://localhost:8790", GITHUB_API_ORIGIN: "http://127.0.0.1:8790" },
      { GITHUB_OAUTH_ORIGIN: "http://[::1]:8790", GITHUB_API_ORIGIN: "http://localhost" },
      { OWNER_TOKEN_SIGNING_KEY: `${"A".repeat(43)}=` },
      { OWNER_TOKEN_EPOCH: "999999999" },
      { OWNER_ORIGIN: "http://localhost:8788" },
    ];
    for (const overrides of accepted) expect(parseOwnerConfig(ownerEnv(overrides), "gateway"), JSON.stringify(overrides)).not.toBeNull();
    expect(parseOwnerConfig(ownerEnv({ OWNER_TOKEN_EPOCH: undefined }), "gateway")!.epoch).toBe(1);
    expect(parseOwnerConfig(ownerEnv({ OWNER_ORIGIN: "https://owner.magnt.ru/" }), "gateway")!.audience).toBe("https://owner.magnt.ru/mcp");
  });

  it("OWNER_REDIRECT_ORIGINS ignores entries that are not bare https origins", () => {
    const config = parseOwnerConfig(
      ownerEnv({ OWNER_REDIRECT_ORIGINS: " https://claude.ai/ ,https://a.example/path,http://b.example,not a url,https://C.example:443,https://u@d.example" }),
      "gateway",
    )!;
    expect([...config.redirectOrigins]).toEqual(["https://claude.ai"]);
  });
});

describe("key derivation (06 §3.2)", () => {
  it("derives three distinct 32-byte HMAC keys with HKDF-SHA256 (empty salt) and the pinned info labels", async () => {
    const secret = decodeSigningKey(ownerEnv().OWNER_TOKEN_SIGNING_KEY)!;
    const keys = await deriveOwnerKeys(secret);
    expect(DERIVED_KEY_BYTES).toBe(32);
    for (const purpose of ["token", "client", "state"] as const) expect(keys[purpose].byteLength).toBe(32);
    expect(new Set([keys.token, keys.client, keys.state].map((key) => key.join(","))).size).toBe(3);
    expect(KEY_INFO).toEqual({ token: "magnt-owner/token/v1", client: "magnt-owner/client/v1", state: "magnt-owner/state/v1" });
    // Independent computation of the token key.
    const material = await crypto.subtle.importKey("raw", secret, "HKDF", false, ["deriveBits"]);
    const expected = await crypto.subtle.deriveBits(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("magnt-owner/token/v1") },
      material,
      256,
    );
    expect([...keys.token]).toEqual([...new Uint8Array(expected)]);
  });
});

describe("a loopback stand-in GitHub (00 §7)", () => {
  it("sends the owner to the stand-in, names it in the consent CSP, and links through it", async () => {
    const h = harness({ GITHUB_OAUTH_ORIGIN: "http://127.0.0.1:8790", GITHUB_API_ORIGIN: "http://127.0.0.1:8790" });
    const clientId = await registerClient(h);
    const { challenge, verifier } = await pkce();
    const page = await authorize(h, {
      client_id: clientId,
      redirect_uri: LOOPBACK_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    expect(page.response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:8790 http://127.0.0.1:33418; frame-ancestors 'none'",
    );
    const approved = await decide(h, await consentForm(page), "approve");
    const location = approved.response.headers.get("location")!;
    expect(location.startsWith("http://127.0.0.1:8790/login/oauth/authorize?")).toBe(true);
    const back = await callback(h, h.github.signIn(location, OWNER), cookieValue(approved.response, "__Host-magnt_owner_link"));
    expect(back.response.headers.get("location")).toContain("code=");
    const code = new URL(back.response.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchange(h, { clientId, redirectUri: LOOPBACK_REDIRECT, verifier, code, state: "" });
    expect(tokens.scope).toBe("owner.read");
    expect(h.github.requests.every((request) => new URL(request.url).host === "127.0.0.1:8790")).toBe(true);
  });
});
