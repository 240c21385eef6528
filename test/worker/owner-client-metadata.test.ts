/**
 * Client ID Metadata Documents (issue 19 item 6, 06 §3.7): an `https`
 * `client_id` on an origin listed in `OWNER_CLIENT_METADATA_ORIGINS` is
 * fetched through edge/outbound.ts — here from a loopback stand-in
 * (`OWNER_CLIENT_METADATA_FETCH_ORIGIN`, loopback only, like the GitHub and
 * Telegram overrides) or from the client's own host — checked, cached, and
 * shown on the consent page as a verified host apart from the self-chosen
 * name; the flow then runs without `/oauth/register`.
 *
 * Refused, each with a 400 page naming the problem and nothing else fetched:
 * a document whose `client_id` differs, one over 5 KiB, one that never
 * answers (the 3 s limit ends it), one that redirects (never followed), a
 * confidential client, an unlisted origin, a URL not in canonical form. The
 * network seam fails any test that reaches a host it did not expect, so "not
 * fetched" and "redirect not followed" are checked on every test.
 */
import { describe, expect, it } from "vitest";
import { resolveOwner, serveAuthorizationServerMetadata, serveAuthorize } from "../../worker/owner";
import { cacheSeconds, DOCUMENT_CACHE_MAX_SECONDS } from "../../worker/owner/oauth/client-metadata";
import { clientDocument, useDocumentHost, type DocumentHost } from "../fakes/client-metadata";
import {
  authorize,
  CLAUDE_REDIRECT,
  exchange,
  harness,
  link,
  LOOPBACK_REDIRECT,
  OWNER_ORIGIN,
  ownerEnv,
  pkce,
  refresh,
  token,
  type Harness,
} from "../helpers/owner";

const CLIENT_ORIGIN = "https://client.example";
const STAND_IN = "http://127.0.0.1:9797";
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/;

let documentCounter = 0;
/** A fresh document URL (the cache is per isolate, so no two tests share one). */
function documentUrl(name = "client"): string {
  documentCounter += 1;
  return `${CLIENT_ORIGIN}/oauth/${name}-${documentCounter}.json`;
}

function cimdHarness(overrides: Record<string, string> = {}): { h: Harness; host: DocumentHost } {
  const h = harness({ OWNER_CLIENT_METADATA_ORIGINS: CLIENT_ORIGIN, OWNER_CLIENT_METADATA_FETCH_ORIGIN: STAND_IN, ...overrides });
  return { h, host: useDocumentHost("127.0.0.1:9797") };
}

const pathOf = (url: string) => new URL(url).pathname;

async function authorizeWith(h: Harness, clientId: string, redirectUri = LOOPBACK_REDIRECT) {
  const { challenge } = await pkce();
  return authorize(h, {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "owner.read",
  });
}

async function refusedPage(h: Harness, clientId: string, redirectUri = LOOPBACK_REDIRECT): Promise<string> {
  const answer = await authorizeWith(h, clientId, redirectUri);
  expect(answer.response.status).toBe(400);
  expect(answer.response.headers.get("location")).toBeNull();
  expect(answer.outcome).toBe("oauth_error");
  return answer.response.text();
}

describe("advertised only while an origin is listed (06 §3.1)", () => {
  it("client_id_metadata_document_supported: true with the setting, absent without", async () => {
    const metadata = async (env: Record<string, string>) => {
      const h = harness(env);
      const answer = await h.call(serveAuthorizationServerMetadata, new Request(`${OWNER_ORIGIN}/.well-known/oauth-authorization-server`));
      return (await answer.response.json()) as Record<string, unknown>;
    };
    expect(await metadata({ OWNER_CLIENT_METADATA_ORIGINS: CLIENT_ORIGIN })).toMatchObject({
      client_id_metadata_document_supported: true,
      registration_endpoint: `${OWNER_ORIGIN}/oauth/register`,
    });
    const offs: Array<Record<string, string>> = [{}, { OWNER_CLIENT_METADATA_ORIGINS: "" }, { OWNER_CLIENT_METADATA_ORIGINS: "http://client.example, https://client.example/path" }];
    for (const off of offs) {
      expect(await metadata(off)).not.toHaveProperty("client_id_metadata_document_supported");
    }
  });

  it("the fetch stand-in may only be a loopback http origin: anything else is owner_misconfigured", () => {
    for (const standIn of ["http://127.0.0.1:9797", "http://localhost:9797", "http://[::1]:9797"]) {
      expect(resolveOwner(ownerEnv({ OWNER_CLIENT_METADATA_FETCH_ORIGIN: standIn }), "gateway").kind, standIn).toBe("ready");
    }
    for (const standIn of ["https://client.example", "http://10.0.0.1:9797", "http://127.0.0.1:9797/", "http://evil.example", "127.0.0.1:9797"]) {
      expect(resolveOwner(ownerEnv({ OWNER_CLIENT_METADATA_FETCH_ORIGIN: standIn }), "gateway").kind, standIn).toBe("misconfigured");
    }
    // Core never fetches a document: the setting is the gateway's.
    expect(resolveOwner(ownerEnv({ OWNER_CLIENT_METADATA_FETCH_ORIGIN: "https://client.example" }), "core").kind).toBe("ready");
  });
});

describe("a listed document client completes the flow without registering (06 §3.7)", () => {
  it("fetched from the loopback stand-in, shown as verified, then code → tokens → refresh with the URL as client_id", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), { json: clientDocument(clientId, { client_name: "Claude \u202Eetirw.renwo daer\u202C" }) });

    const page = await authorizeWith(h, clientId);
    const html = await page.response.clone().text();
    expect(page.response.status, html).toBe(200);
    expect(html).toContain('<p class="verified">Verified: <strong class="client-host">client.example</strong> serves this client');
    expect(html).toContain('The client calls itself <strong><bdi class="client-name">Claude etirw.renwo daer</bdi></strong>.');
    expect(html).toContain("It chose that name for itself; only the host above is checked.");
    expect(html).not.toMatch(ANY_CONTROL);
    // A loopback redirect: any program on this machine can present a public document's identity.
    expect(html).toContain("any program can present the identity of client.example.");
    expect(host.requests.map((request) => request.url)).toEqual([`${STAND_IN}${pathOf(clientId)}`]);
    expect(host.requests[0]!.method).toBe("GET");
    expect(host.requests[0]!.headers.get("accept")).toBe("application/json");

    const linked = await link(h, { clientId });
    const tokens = await exchange(h, linked);
    expect(tokens.scope).toBe("owner.read");
    const refreshed = await refresh(h, clientId, tokens.refresh_token);
    expect(refreshed.response.status).toBe(200);
  });

  it("without a stand-in the document is fetched from the client_id URL itself", async () => {
    const h = harness({ OWNER_CLIENT_METADATA_ORIGINS: CLIENT_ORIGIN });
    const own = useDocumentHost("client.example");
    const clientId = documentUrl();
    own.documents.set(pathOf(clientId), { json: clientDocument(clientId) });
    expect((await authorizeWith(h, clientId)).response.status).toBe(200);
    expect(own.requests.map((request) => request.url)).toEqual([clientId]);
  });

  it("a hosted redirect URI listed in the document gets the hosted warning, not the loopback one", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), { json: clientDocument(clientId, { redirect_uris: [CLAUDE_REDIRECT] }) });
    const page = await authorizeWith(h, clientId, CLAUDE_REDIRECT);
    const html = await page.response.text();
    expect(page.response.status, html).toBe(200);
    expect(html).toContain("Approve only if you started this connection yourself, just now, from https://claude.ai:");
    expect(html).not.toContain("any program can present");
    expect(html.match(/Approve only if/g)).toHaveLength(1);
  });

  it("the token endpoint refuses a document client whose origin the owner has since removed (nothing is fetched there)", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), { json: clientDocument(clientId) });
    const linked = await link(h, { clientId });
    const fetches = host.requests.length;
    const removed = { ...h.env, OWNER_CLIENT_METADATA_ORIGINS: "https://other.example" };
    const narrowed: Harness = { ...h, env: removed, call: (handler, request, override) => h.call(handler, request, override ?? removed) };
    const refused = await token(narrowed, {
      grant_type: "authorization_code",
      code: linked.code,
      redirect_uri: linked.redirectUri,
      client_id: clientId,
      code_verifier: linked.verifier,
    });
    expect(refused.response.status).toBe(401);
    expect(await refused.response.json()).toMatchObject({ error: "invalid_client" });
    expect((await exchange(h, linked)).access_token).toEqual(expect.any(String));
    expect(host.requests.length).toBe(fetches);
  });
});

describe("documents that are refused (06 §3.7)", () => {
  it("a document whose client_id differs from its URL", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), { json: clientDocument("https://client.example/oauth/someone-else.json") });
    const html = await refusedPage(h, clientId);
    expect(html).toContain("The client_id names a client metadata document that cannot be used.");
    expect(html).toContain("Its client_id is not exactly the URL it was fetched from.");
    // A trailing slash, a different case or a query are other strings.
    for (const near of [`${clientId}/`, clientId.toUpperCase(), `${clientId}?v=1`]) {
      host.documents.set(pathOf(clientId), { json: clientDocument(near) });
      expect(await refusedPage(h, clientId)).toContain("Its client_id is not exactly the URL");
    }
  });

  it("a document over 5 KiB, by its body (whatever Content-Length says)", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    const padded = clientDocument(clientId, { padding: "x".repeat(5 * 1024) });
    host.documents.set(pathOf(clientId), { json: padded });
    expect(await refusedPage(h, clientId)).toContain("It is larger than 5 KiB.");
    // Just under the limit is fine.
    const fits = clientDocument(clientId);
    const room = 5 * 1024 - JSON.stringify({ ...fits, padding: "" }).length;
    host.documents.set(pathOf(clientId), { json: { ...fits, padding: "x".repeat(room) } });
    expect((await authorizeWith(h, clientId)).response.status).toBe(200);
  });

  it("a document that never answers: the 3 s limit ends the wait", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), "never");
    expect(await refusedPage(h, clientId)).toContain("It could not be fetched within 3 seconds.");
  }, 15_000);

  it("a document that redirects: refused, and the redirect is never followed", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    // Neither target is a host the test serves: following the redirect would fail the network guard.
    for (const target of ["https://evil.example/doc.json", `${STAND_IN}/elsewhere.json`]) {
      host.documents.set(pathOf(clientId), { redirect: target });
      expect(await refusedPage(h, clientId)).toContain("Its URL answered with a redirect; redirects are not followed.");
    }
    expect(host.requests.map((request) => new URL(request.url).pathname)).toEqual([pathOf(clientId), pathOf(clientId)]);
  });

  it("anything but 200 OK, and anything but a JSON object", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), { json: clientDocument(clientId), status: 203 });
    expect(await refusedPage(h, clientId)).toContain("Its URL did not answer 200 OK.");
    expect(await refusedPage(h, documentUrl("missing"))).toContain("Its URL did not answer 200 OK.");
    for (const text of ["not json", "[]", "null", JSON.stringify(clientId)]) {
      host.documents.set(pathOf(clientId), { text });
      expect(await refusedPage(h, clientId), text).toContain("It is not a JSON object.");
    }
  });

  it("a confidential client, unsupported types, bad redirect_uris or client_name", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ token_endpoint_auth_method: undefined }, "It must describe a public client"],
      [{ token_endpoint_auth_method: "client_secret_basic" }, "It must describe a public client"],
      [{ client_secret: "s3cret" }, "It must describe a public client"],
      [{ client_secret_expires_at: 0 }, "It must describe a public client"],
      [{ grant_types: ["authorization_code", "client_credentials"] }, "Its grant_types or response_types"],
      [{ response_types: ["token"] }, "Its grant_types or response_types"],
      [{ redirect_uris: [] }, "Its redirect_uris are missing"],
      [{ redirect_uris: "http://127.0.0.1:33418/callback" }, "Its redirect_uris are missing"],
      [{ redirect_uris: [LOOPBACK_REDIRECT, 7] }, "Its redirect_uris are missing"],
      [{ client_name: 7 }, "Its client_name is not a string"],
      [{ client_name: "n".repeat(101) }, "Its client_name is not a string of at most 100 characters."],
    ];
    for (const [fields, problem] of cases) {
      const document = clientDocument(clientId, fields);
      for (const [name, value] of Object.entries(fields)) if (value === undefined) delete document[name];
      host.documents.set(pathOf(clientId), { json: document });
      expect(await refusedPage(h, clientId), JSON.stringify(fields)).toContain(problem);
    }
  });

  it("a redirect_uri the document does not list, or one the registration rules refuse", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), {
      json: clientDocument(clientId, { redirect_uris: [LOOPBACK_REDIRECT, "https://stranger.example/cb", "http://evil.example/cb"] }),
    });
    const unlisted = "http://127.0.0.1:40000/callback";
    for (const uri of [unlisted, "https://stranger.example/cb", "http://evil.example/cb"]) {
      expect(await refusedPage(h, clientId, uri), uri).toContain("The redirect_uri is missing, not registered for this client, or no longer allowed.");
    }
    expect((await authorizeWith(h, clientId)).response.status).toBe(200);
  });

  it("an https client_id on an unlisted origin, or not in canonical form, is an unknown client: nothing is fetched", async () => {
    const { h, host } = cimdHarness();
    const ids = [
      "https://other.example/oauth/client.json",
      "https://client.example",
      "https://client.example/",
      "http://client.example/oauth/client.json",
      "https://CLIENT.example/oauth/client.json",
      "https://client.example:443/oauth/client.json",
      "https://client.example/oauth/../client.json",
      "https://client.example/oauth/%2e%2e/client.json",
      "https://client.example/oauth/client.json#frag",
      "https://user@client.example/oauth/client.json",
      `https://client.example/${"a".repeat(2048)}`,
    ];
    for (const clientId of ids) {
      expect(await refusedPage(h, clientId), clientId).toContain("The client_id is missing, too long or not valid here.");
    }
    const off = harness({ OWNER_CLIENT_METADATA_FETCH_ORIGIN: STAND_IN });
    expect(await refusedPage(off, documentUrl())).toContain("The client_id is missing, too long or not valid here.");
    expect(host.requests).toEqual([]);
  });
});

describe("the document cache (per isolate, bounded, 06 §3.7)", () => {
  it("max-age keeps a document that long, at most 10 minutes; no-store and no max-age are fetched every time", async () => {
    const { h, host } = cimdHarness();
    const count = (url: string) => host.requests.filter((request) => new URL(request.url).pathname === pathOf(url)).length;

    const kept = documentUrl("kept");
    host.documents.set(pathOf(kept), { json: clientDocument(kept), headers: { "Cache-Control": "public, max-age=60" } });
    await authorizeWith(h, kept);
    await authorizeWith(h, kept);
    expect(count(kept)).toBe(1);
    h.time.advance(61);
    await authorizeWith(h, kept);
    expect(count(kept)).toBe(2);

    const capped = documentUrl("capped");
    host.documents.set(pathOf(capped), { json: clientDocument(capped), headers: { "Cache-Control": "max-age=31536000" } });
    await authorizeWith(h, capped);
    h.time.advance(DOCUMENT_CACHE_MAX_SECONDS - 1);
    await authorizeWith(h, capped);
    expect(count(capped)).toBe(1);
    h.time.advance(2);
    await authorizeWith(h, capped);
    expect(count(capped)).toBe(2);

    for (const cacheControl of [undefined, "no-store, max-age=60", "no-cache, max-age=60", "max-age=0"]) {
      const fresh = documentUrl("fresh");
      host.documents.set(pathOf(fresh), { json: clientDocument(fresh), headers: cacheControl === undefined ? {} : { "Cache-Control": cacheControl } });
      await authorizeWith(h, fresh);
      await authorizeWith(h, fresh);
      expect(count(fresh), String(cacheControl)).toBe(2);
    }
  });

  it("a refused document is never kept: fixing it takes effect at once", async () => {
    const { h, host } = cimdHarness();
    const clientId = documentUrl();
    host.documents.set(pathOf(clientId), { json: clientDocument(`${clientId}x`), headers: { "Cache-Control": "max-age=600" } });
    await refusedPage(h, clientId);
    host.documents.set(pathOf(clientId), { json: clientDocument(clientId), headers: { "Cache-Control": "max-age=600" } });
    expect((await authorizeWith(h, clientId)).response.status).toBe(200);
  });

  it("cacheSeconds reads max-age within the bound", () => {
    expect(cacheSeconds(null)).toBe(0);
    expect(cacheSeconds("public")).toBe(0);
    expect(cacheSeconds("max-age=120")).toBe(120);
    expect(cacheSeconds("public, MAX-AGE=30")).toBe(30);
    expect(cacheSeconds('max-age="45"')).toBe(45);
    expect(cacheSeconds("s-maxage=300")).toBe(0);
    expect(cacheSeconds("max-age=999999")).toBe(DOCUMENT_CACHE_MAX_SECONDS);
    expect(cacheSeconds("no-store")).toBe(0);
    expect(cacheSeconds("max-age=60, no-cache")).toBe(0);
  });
});

describe("with the setting empty nothing changes (06 §3.7)", () => {
  it("an https client_id is an unknown client at authorize and at the token endpoint", async () => {
    const h = harness();
    expect(await refusedPage(h, "https://client.example/oauth/client.json")).toContain("The client_id is missing, too long or not valid here.");
    const refused = await token(h, {
      grant_type: "refresh_token",
      refresh_token: "x",
      client_id: "https://client.example/oauth/client.json",
    });
    expect(refused.response.status).toBe(401);
    const authorizeDirect = await h.call(serveAuthorize, new Request(`${OWNER_ORIGIN}/oauth/authorize?client_id=${encodeURIComponent(documentUrl())}`));
    expect(authorizeDirect.response.status).toBe(400);
  });
});
