/**
 * Property tests for the owner gateway (issue 14, 10 §5): its real route table
 * (`createDoor("owner_gateway", ownerRoutes())`) in front of core's real
 * owner entrypoint functions on the test D1 (test/worker/owner-stack.ts).
 * Inputs: random and mutated client registrations, authorize queries, consent
 * posts (mutated forms, cookies, origins), token requests (mutated codes,
 * refresh tokens, verifiers, client ids, duplicated parameters), bearer
 * tokens (random, mutated valid ones), JSON-RPC envelopes on owner `/mcp`
 * with a valid token (owner tools with random arguments), and random paths
 * and methods.
 *
 * Properties: zero 5xx (this configuration has no designed 503: core is
 * reachable and the owner MCP is configured); zero uncaught exceptions (no
 * `internal_error` event); every request logs its gateway event; and no
 * generated text — a canary inside every generated string — in any log line
 * or Analytics Engine point.
 */
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { MCP_METHOD_ALLOWLIST, OWNER_TOOL_NAMES, PUBLIC_TOOL_NAMES } from "../../worker/contracts/index";
import { fakeAnalytics, type FakeAnalytics } from "../fakes/analytics";
import { captureConsole } from "../helpers/door";
import { modernMeta } from "../helpers/mcp";
import { Canaries } from "../helpers/privacy";
import { cookieValue, exchange, harness, hiddenInput, link, LOOPBACK_REDIRECT, OWNER_ORIGIN, pkce, type Harness } from "../helpers/owner";
import { ownerMcpHeaders, ownerStack, type OwnerFetch } from "../worker/owner-stack";
import { FUZZ_TIMEOUT_MS, fuzzParameters } from "./knobs";

const canaries = new Canaries();
const marker = canaries.make("ownerfuzz");

/** Hostile text, always carrying the canary. */
const nasty = fc.constantFrom("\u0000", "\u202e", "\ud800", "'", '"', "\\", "&", "=", "%", "+", "#", "<script>", "😀", "\r\n", " ");
const text = fc.tuple(fc.string({ maxLength: 20 }), fc.array(nasty, { maxLength: 3 })).map(([value, extras]) => `${extras.join("")}${value}${marker}`);
/** Text that is legal inside an HTTP header value (printable ASCII), with the canary. */
const headerText = fc.string({ unit: "grapheme-ascii", maxLength: 30 }).map((value) => `${value.trim()}${marker}`);
/** `value` with every character a header cannot carry replaced (the canary survives: it is plain ASCII). */
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e]/g, "?");
const anyJson = fc.jsonValue({ maxDepth: 3 }).map((value) => [value, marker]);

/** A string with one character replaced, one removed, or cut short (a plausible tampering). */
function tampered(valid: string) {
  return fc.oneof(
    fc.tuple(fc.nat(), fc.constantFrom("A", "_", "-", ".", "0", "z", "%")).map(([at, char]) => {
      const index = at % Math.max(1, valid.length);
      return valid.slice(0, index) + char + valid.slice(index + 1);
    }),
    fc.nat().map((at) => {
      const index = at % Math.max(1, valid.length);
      return valid.slice(0, index) + valid.slice(index + 1);
    }),
    fc.nat().map((at) => valid.slice(0, at % Math.max(1, valid.length))),
    fc.constant(valid.toUpperCase()),
    fc.constant(`${valid}${marker}`),
  );
}

/** A value drawn from the valid one, a tampered copy, random text, empty, or absent. */
const around = (valid: string) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(valid) }, { weight: 2, arbitrary: tampered(valid) }, { weight: 1, arbitrary: text }, { weight: 1, arbitrary: fc.constant("") }, { weight: 1, arbitrary: fc.constant(undefined) });

const method = fc.constantFrom("GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS");
const contentType = fc.constantFrom("application/x-www-form-urlencoded", "application/json", "text/plain", "multipart/form-data", "", "application/x-www-form-urlencoded; charset=utf-8");

interface World {
  readonly h: Harness;
  readonly analytics: FakeAnalytics;
  readonly stack: OwnerFetch;
}

let world: World;

beforeEach(() => {
  const h = harness();
  h.time.now = Date.now();
  const analytics = fakeAnalytics();
  world = { h, analytics, stack: ownerStack(h.env, { analytics }) };
});

/** One request through the gateway with the generic checks of every property. */
async function send(request: Request): Promise<Response> {
  const logs = captureConsole();
  const pointsBefore = world.analytics.points.length;
  const response = await world.stack(request);
  await response.arrayBuffer();
  expect(response.status, `${request.method} ${new URL(request.url).pathname}`).toBeLessThan(500);
  const events = logs.events() as unknown as Record<string, unknown>[];
  expect(events.length).toBeGreaterThanOrEqual(1);
  expect(events.filter((event) => event.role === "owner_gateway")).toHaveLength(1);
  for (const event of events) expect(event.outcome).not.toBe("internal_error");
  await canaries.assertAbsentFrom(logs.lines());
  await canaries.assertAbsentFrom(world.analytics.lines().slice(pointsBefore), "an Analytics Engine point");
  return response;
}

const url = (path: string) => `${OWNER_ORIGIN}${path}`;

/** A registered client id, through the gateway. */
async function registeredClient(): Promise<string> {
  const response = await world.stack("/oauth/register", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ redirect_uris: [LOOPBACK_REDIRECT], client_name: "fuzz client" }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

function form(fields: Record<string, string | undefined>, duplicate: string | undefined): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) params.append(name, value);
  if (duplicate !== undefined && fields[duplicate] !== undefined) params.append(duplicate, fields[duplicate]!);
  return params;
}

describe("owner gateway fuzzing (10 §5)", () => {
  it("registrations: random and mutated metadata", async () => {
    const valid = { redirect_uris: [LOOPBACK_REDIRECT, "https://claude.ai/api/mcp/auth_callback"], client_name: "Client", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] };
    const metadata = fc.oneof(
      fc.record(
        {
          redirect_uris: fc.oneof(fc.constant(valid.redirect_uris), fc.array(fc.oneof(text, fc.webUrl(), fc.constant(LOOPBACK_REDIRECT), fc.constant(`http://127.0.0.1:1/${marker}`)), { maxLength: 12 }), text, anyJson),
          client_name: fc.oneof(text, fc.constant("x".repeat(101)), anyJson),
          token_endpoint_auth_method: fc.oneof(fc.constantFrom("none", "client_secret_basic"), text),
          grant_types: fc.oneof(fc.constant(valid.grant_types), fc.array(text, { maxLength: 3 })),
          [marker]: text,
        },
        { requiredKeys: [] },
      ).map((value) => JSON.stringify(value)),
      anyJson.map((value) => JSON.stringify(value)),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => `${new TextDecoder().decode(bytes)}${marker}`),
      fc.integer({ min: -8, max: 8 }).map((delta) => JSON.stringify({ ...valid, client_name: marker }).padEnd(24_576 + delta, " ")),
    );
    await fc.assert(
      fc.asyncProperty(metadata, fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", ""), method, async (body, type, verb) => {
        const withBody = verb !== "GET" && verb !== "HEAD";
        await send(new Request(url("/oauth/register"), { method: verb, headers: { "Content-Type": type }, ...(withBody ? { body } : {}) }));
      }),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);

  it("authorize queries: mutated parameters of a valid request, duplicates and strangers", async () => {
    const clientId = await registeredClient();
    const { challenge } = await pkce();
    const query = fc.record({
      response_type: around("code"),
      client_id: around(clientId),
      redirect_uri: fc.oneof(around(LOOPBACK_REDIRECT), fc.constant("https://claude.ai/api/mcp/auth_callback"), fc.webUrl()),
      code_challenge: around(challenge),
      code_challenge_method: around("S256"),
      state: fc.option(text, { nil: undefined }),
      scope: fc.oneof(around("owner.read owner.write owner.publish"), fc.constant("owner.read")),
      resource: around(`${OWNER_ORIGIN}/mcp`),
      duplicate: fc.option(fc.constantFrom("client_id", "redirect_uri", "scope", "state"), { nil: undefined }),
      stranger: fc.option(fc.tuple(text, text), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(query, fc.constantFrom("GET", "GET", "GET", "HEAD", "PUT", "OPTIONS"), async ({ duplicate, stranger, ...fields }, verb) => {
        const params = form(fields, duplicate);
        if (stranger !== undefined) params.append(stranger[0], stranger[1]);
        await send(new Request(`${url("/oauth/authorize")}?${params}`, { method: verb }));
      }),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);

  it("consent posts: mutated consent, CSRF nonce, cookie, decision and Origin", async () => {
    const clientId = await registeredClient();
    const { challenge } = await pkce();
    const page = await world.stack(
      `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: LOOPBACK_REDIRECT, code_challenge: challenge, code_challenge_method: "S256", state: "s", scope: "owner.read owner.write" })}`,
    );
    expect(page.status).toBe(200);
    const html = await page.clone().text();
    const consent = hiddenInput(html, "consent");
    const csrf = hiddenInput(html, "csrf");
    const cookie = cookieValue(page, "__Host-magnt_owner_csrf")!;
    const post = fc.record({
      consent: around(consent),
      csrf: around(csrf),
      decision: fc.oneof(fc.constantFrom("approve", "deny", "APPROVE"), text, fc.constant(undefined)),
      cookie: fc.oneof(around(cookie).map((value) => (value === undefined ? undefined : `__Host-magnt_owner_csrf=${headerSafe(value)}`)), headerText, fc.constant(`__Host-magnt_owner_csrf=${cookie}; __Host-magnt_owner_csrf=${marker}`)),
      origin: fc.constantFrom(OWNER_ORIGIN, "https://evil.example", "null", undefined, "https://owner.magnt.ru:443"),
      type: contentType,
      duplicate: fc.option(fc.constantFrom("consent", "csrf", "decision"), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(post, async ({ consent: consentValue, csrf: csrfValue, decision, cookie: cookieHeader, origin, type, duplicate }) => {
        const headers: Record<string, string> = { "Content-Type": type };
        if (cookieHeader !== undefined) headers.Cookie = cookieHeader;
        if (origin !== undefined) headers.Origin = origin;
        const body = form({ consent: consentValue, csrf: csrfValue, decision }, duplicate);
        const response = await send(new Request(url("/oauth/authorize"), { method: "POST", headers, body: body.toString(), redirect: "manual" }));
        if (response.status === 302) expect(new URL(response.headers.get("location")!).host).toBe("github.com");
      }),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);

  it("token requests: mutated codes, verifiers, refresh tokens and client ids; duplicated parameters", async () => {
    const linked = await link(world.h, { scope: "owner.read owner.write" });
    const tokens = await exchange(world.h, await link(world.h, { scope: "owner.read owner.write" }));
    const request = fc.record({
      grant_type: fc.oneof(fc.constantFrom("authorization_code", "refresh_token", "client_credentials"), text, fc.constant(undefined)),
      code: around(linked.code),
      redirect_uri: around(linked.redirectUri),
      client_id: around(linked.clientId),
      code_verifier: around(linked.verifier),
      refresh_token: around(tokens.refresh_token),
      scope: fc.oneof(fc.constantFrom("owner.read", "owner.read owner.write owner.publish", ""), text, fc.constant(undefined)),
      resource: fc.oneof(fc.constant(`${OWNER_ORIGIN}/mcp`), text, fc.constant(undefined)),
      duplicate: fc.option(fc.constantFrom("grant_type", "code", "refresh_token", "client_id"), { nil: undefined }),
      type: contentType,
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ duplicate, type, ...fields }) => {
        const response = await send(new Request(url("/oauth/token"), { method: "POST", headers: { "Content-Type": type }, body: form(fields, duplicate).toString() }));
        if (response.status === 200) {
          // Tokens only for a well-formed grant naming the client it was issued to.
          expect(fields.client_id).toBe(linked.clientId);
        }
      }),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);

  it("bearer tokens on /mcp: random and tampered; only the exact header part of a valid token is admitted", async () => {
    const tokens = await exchange(world.h, await link(world.h, { scope: "owner.read owner.write" }));
    const valid = tokens.access_token;
    const authorization = fc.oneof(
      tampered(valid).map((token) => ({ header: `Bearer ${token}`, token })),
      headerText.map((token) => ({ header: `Bearer ${token}`, token })),
      fc.constantFrom("Basic", "bearer", "Bearer", "BEARER", "Token", "").map((scheme) => ({ header: `${scheme} ${valid}`.trim(), token: scheme.toLowerCase() === "bearer" ? valid : null })),
      // RFC 6750 §2.1: one or more spaces after the scheme.
      fc.constant({ header: `Bearer  ${valid}`, token: valid }),
      fc.constant({ header: `Bearer ${valid}, Bearer ${marker}`, token: null }),
      fc.constant({ header: undefined, token: null }),
    );
    let admitted = 0;
    await fc.assert(
      fc.asyncProperty(authorization, async ({ header, token }) => {
        const headers = ownerMcpHeaders(valid, "tools/list");
        if (header === undefined) delete headers.authorization;
        else headers.authorization = header;
        const response = await send(
          new Request(url("/mcp"), { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: modernMeta() } }) }),
        );
        if (response.status === 200) {
          admitted += 1;
          // Signature, header and claims are bound to the exact text of the first two segments.
          expect(token).not.toBeNull();
          expect(token!.split(".").slice(0, 2)).toEqual(valid.split(".").slice(0, 2));
        }
      }),
      fuzzParameters(),
    );
    expect(admitted, "the valid token was never admitted: the property checked nothing").toBeGreaterThan(0);
  }, FUZZ_TIMEOUT_MS);

  it("owner /mcp with a valid token: random envelopes, owner tools with random arguments, random transport headers", async () => {
    const tokens = await exchange(world.h, await link(world.h, { scope: "owner.read owner.write owner.publish" }));
    const contactId = fc.oneof(fc.uuid().map((id) => `mc_${id}`), text);
    const toolArgs = fc.record(
      {
        contact_id: contactId,
        draft_id: fc.oneof(fc.uuid().map((id) => `dr_${id}`), text),
        expected_revision: fc.oneof(fc.integer({ min: -2, max: 5 }), text),
        text: fc.oneof(text, fc.constant(""), fc.constant(`${marker}${"y".repeat(8000)}`)),
        state: fc.oneof(fc.constantFrom("pending", "acknowledged", "archived"), text),
        limit: fc.oneof(fc.integer({ min: -1, max: 101 }), text),
        cursor: text,
        since: fc.oneof(fc.constantFrom("2026-01-01", "2026-01-01T00:00:00+02:00"), text),
        detail: fc.oneof(fc.constantFrom("preview", "full"), text),
        include_tests: fc.oneof(fc.boolean(), text),
        [marker]: text,
      },
      { requiredKeys: [] },
    );
    const envelope = fc.oneof(
      fc.record({ method: fc.constant("tools/call"), name: fc.oneof(fc.constantFrom(...OWNER_TOOL_NAMES, ...PUBLIC_TOOL_NAMES), text), args: fc.oneof(toolArgs, anyJson) }),
      fc.record({ method: fc.oneof(fc.constantFrom(...MCP_METHOD_ALLOWLIST), text), name: fc.constant(undefined), args: fc.constant(undefined) }),
    );
    const transport = fc.record({
      version: fc.constantFrom("2026-07-28", "2025-11-25", "2025-06-18", "1999-01-01", undefined),
      mcpMethod: fc.oneof(fc.constant("match" as const), text, fc.constant(undefined)),
      accept: fc.constantFrom("application/json, text/event-stream", "application/json", "*/*", ""),
      type: fc.constantFrom("application/json", "text/plain"),
      meta: fc.boolean(),
    });
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(envelope, transport, async (call, headerSet) => {
        const headers = ownerMcpHeaders(tokens.access_token, headerSafe(call.method), typeof call.name === "string" ? headerSafe(call.name) : undefined);
        if (headerSet.version === undefined) delete headers["mcp-protocol-version"];
        else headers["mcp-protocol-version"] = headerSet.version;
        if (headerSet.mcpMethod === undefined) delete headers["mcp-method"];
        else if (headerSet.mcpMethod !== "match") headers["mcp-method"] = headerSafe(headerSet.mcpMethod);
        headers.accept = headerSet.accept;
        headers["content-type"] = headerSet.type;
        const params: Record<string, unknown> = call.method === "tools/call" ? { name: call.name, arguments: call.args } : {};
        if (headerSet.meta) params._meta = modernMeta();
        const response = await send(new Request(url("/mcp"), { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: call.method, params }) }));
        if (response.status === 200) answered += 1;
      }),
      fuzzParameters(),
    );
    expect(answered, "no envelope ever reached the owner MCP server").toBeGreaterThan(0);
  }, FUZZ_TIMEOUT_MS);

  it("every path and method of the owner host", async () => {
    const known = ["/", "/mcp", "/oauth/register", "/oauth/authorize", "/oauth/token", "/oauth/github/callback", "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/MCP", "/mcp/", "/oauth//token", "/.well-known/mcp/server-card.json"];
    const path = fc.oneof(
      fc.constantFrom(...known),
      fc.tuple(fc.constantFrom(...known), fc.webSegment()).map(([base, segment]) => `${base}/${segment}`),
      fc.webSegment().map((segment) => `/${segment}`),
    );
    const query = fc.option(fc.tuple(text, text).map(([name, value]) => `?${new URLSearchParams({ [name]: value })}`), { nil: "" });
    await fc.assert(
      fc.asyncProperty(path, query, method, fc.option(text, { nil: undefined }), async (route, search, verb, cookie) => {
        const headers: Record<string, string> = { Referer: `https://elsewhere.example/${encodeURIComponent(marker)}` };
        if (cookie !== undefined) headers.Cookie = `__Host-magnt_owner_link=${headerSafe(cookie)}`;
        const withBody = verb !== "GET" && verb !== "HEAD";
        await send(new Request(`${OWNER_ORIGIN}${route}${search}`, { method: verb, headers, ...(withBody ? { body: marker } : {}), redirect: "manual" }));
      }),
      fuzzParameters(),
    );
  }, FUZZ_TIMEOUT_MS);
});
