/**
 * The owner MCP end to end, offline (issue 12 items 4 and 6, 06, 08 §13):
 * `npm start -- --owner` runs the split deployment locally (gateway + core +
 * owner gateway on one local D1) on a fresh local config: its generated
 * local-only `.dev.vars` holds the owner secrets with both owner flags on —
 * the dialogue switched off with `magnt flags disable DIALOGUE_ENABLED
 * --owner`, so exactly the four owner tools exist — and GitHub is replaced by
 * the loopback stand-in magnt dev runs (scripts/github-stand-in.mjs, signing
 * in as the generated owner id).
 *
 * An official MCP client (v2) leaves a contact at the local door. The owner's
 * client is the official MCP client with its own OAuth flow (oauth-client.ts,
 * issue 19 item 5b): its first request gets the 401, the SDK's `auth()`
 * discovers the gateway, registers, starts an authorization with PKCE, and
 * the consent page is driven in a real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) clicking Approve as the owner
 * would, so the consent page's CSP (form-action through GitHub back to the
 * client), the `__Host-` cookies on http://localhost and the redirect chain
 * are enforced by a browser, not by us. The final redirect lands on the
 * client's loopback redirect URI (a tiny HTTP server here); `finishAuth`
 * exchanges the code, and the client lists the four owner tools and reads
 * the contact left at the door. A stored access token the gateway refuses is
 * refreshed by the client itself. A second run clicks Deny and the client's
 * `finishAuth` fails with `access_denied`. A client whose name holds a
 * right-to-left override (issue 17) is shown by Chromium cleaned, inside a
 * `<bdi>` (computed `unicode-bidi: isolate`), in the order it was written. A
 * client that asked `auth()` for `owner.read` only, calling a write tool,
 * gets the 403 `insufficient_scope` challenge and changes nothing.
 *
 * Chromium is required, never skipped: .ci/run installs it when absent.
 */
import { Client, InsufficientScopeError, OAuthError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "./helpers";
import { authorizeWithScope, type ClientExchange, type OAuthSession } from "./oauth-client";
import { startOwnerStack, type OwnerStack } from "./owner-helpers";

const OWNER_TOOLS = ["owner_list_contacts", "owner_list_observed_goals", "owner_save_draft", "owner_set_contact_state"];

let stack: OwnerStack;
let contactId: string;
const CONTACT_SUMMARY = `e2e owner contact ${randomBytes(6).toString("hex")}`;

interface ContactItem {
  contact_id: string;
  self_reported_test: boolean;
  state: string;
  drafts: unknown[];
  visitor_content: { content_label: string; summary: string };
}

async function listContact(session: OAuthSession): Promise<ContactItem[]> {
  const result = await session.callTool("owner_list_contacts", { contact_id: contactId, include_tests: true, detail: "full" });
  expect(result.isError ?? false).toBe(false);
  return (result.structuredContent as { items: ContactItem[] }).items;
}

/** The client's requests as "METHOD /path status[ grant_type]". */
const steps = (exchanges: readonly ClientExchange[]) => exchanges.map((step) => `${step.method} ${step.path} ${step.status}${step.grantType === null ? "" : ` ${step.grantType}`}`);

/** The owner's client, approved in the first run (the later tests use it). */
let approved: OAuthSession;

beforeAll(async () => {
  stack = await startOwnerStack({ disable: ["DIALOGUE_ENABLED"] });
}, 180_000);

afterAll(async () => {
  await approved?.close();
  await stack?.stop();
  removeTempDirs();
});

describe("npm start -- --owner", () => {
  it("prints the door's and the owner gateway's URLs and the cron pass on core's port", () => {
    expect(stack.door.output()).toContain(`MAGNT door: http://localhost:${stack.door.port}/ (MCP: http://localhost:${stack.door.port}/mcp)`);
    expect(stack.door.output()).toContain(`MAGNT owner: ${stack.ownerOrigin}/ (owner MCP: ${stack.ownerOrigin}/mcp`);
    expect(stack.door.output()).toMatch(/one cron pass \(Telegram outbox; the cron runs on core, port (\d+)\): curl http:\/\/127\.0\.0\.1:\1\/cdn-cgi\/handler\/scheduled/);
  });

  it("an official MCP client leaves a contact at the local door", async () => {
    const client = new Client({ name: "e2e-visitor", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(stack.door.mcp)));
    const result = await client.callTool({
      name: "propose_contact",
      arguments: {
        submission_id: crypto.randomUUID(),
        summary: CONTACT_SUMMARY,
        intent: "e2e: reach the owner through the local door",
        what_you_need_from_human: "read this in the owner MCP",
        agent_identity: "e2e visitor agent",
        reply_to: "e2e@example.invalid",
        is_test: true,
      },
    });
    await client.close();
    expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
    const receipt = result.structuredContent as { status: string; contact_id: string };
    expect(receipt.status).toBe("accepted_for_human_review");
    contactId = receipt.contact_id;
  });

  it("the official client's own OAuth: 401 → registration and PKCE by auth() → Approve in Chromium → GitHub stand-in → finishAuth → the four tools and the contact", async () => {
    const landed: URL[] = [];
    approved = stack.oauthSession({
      consent: async (url) => {
        landed.push(await stack.consent("approve", { publishLine: false })(url));
        return landed.at(-1)!;
      },
    });
    const mcp = await approved.connect();
    // The SDK asked for one authorization: the scope of the gateway's 401 challenge, PKCE S256, the resource, a registered client.
    expect(approved.provider.authorizationUrls).toHaveLength(1);
    const asked = approved.provider.authorizationUrls[0]!;
    expect(`${asked.origin}${asked.pathname}`).toBe(`${stack.ownerOrigin}/oauth/authorize`);
    expect(Object.fromEntries(asked.searchParams)).toMatchObject({
      response_type: "code",
      client_id: expect.stringMatching(/^oc_/),
      redirect_uri: stack.redirectUri,
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: "S256",
      scope: "owner.read owner.write",
      resource: `${stack.ownerOrigin}/mcp`,
    });
    const recorded = steps(approved.exchanges);
    expect(recorded[0]).toMatch(/^POST \/mcp 401$/);
    expect(recorded).toEqual(expect.arrayContaining(["POST /oauth/register 201", "POST /oauth/token 200 authorization_code"]));
    expect(recorded.filter((step) => step.startsWith("POST /oauth/token"))).toEqual(["POST /oauth/token 200 authorization_code"]);
    expect(recorded.at(-1)).toMatch(/^POST \/mcp 200$/);
    // The browser went through the stand-in GitHub: authorize, then the gateway's code exchange and /user lookup.
    expect(stack.standInRequests).toEqual(expect.arrayContaining(["GET /login/oauth/authorize", "POST /login/oauth/access_token", "GET /user"]));
    expect(landed).toHaveLength(1);
    expect(landed[0]!.pathname).toBe("/callback");
    expect(landed[0]!.searchParams.get("error")).toBeNull();
    expect(landed[0]!.searchParams.get("iss")).toBe(stack.ownerOrigin);
    expect(approved.provider.tokens()).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "owner.read owner.write", refresh_token: expect.any(String) });

    // A code is spent once: the SDK redeemed it; the same code with the same verifier is refused.
    const again = await stack.tokenRequest({
      grant_type: "authorization_code",
      code: landed[0]!.searchParams.get("code")!,
      redirect_uri: stack.redirectUri,
      client_id: approved.provider.clientInformation()!.client_id,
      code_verifier: approved.provider.codeVerifier(),
    });
    expect(again).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(OWNER_TOOLS);
    const items = await listContact(approved);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      contact_id: contactId,
      state: "pending",
      self_reported_test: true,
      drafts: [],
      visitor_content: { content_label: "untrusted_visitor_content", summary: CONTACT_SUMMARY },
    });
  });

  it("an access token the gateway refuses → the client refreshes by itself and the call goes through", async () => {
    expect(approved, "the Approve run must have connected the client").toBeDefined();
    const before = approved.provider.tokens()!;
    const spoiled = approved.provider.spoilAccessToken();
    const from = approved.exchanges.length;
    expect((await listContact(approved)).map((item) => item.contact_id)).toEqual([contactId]);
    const recorded = approved.exchanges.slice(from);
    expect(recorded[0]).toMatchObject({ path: "/mcp", status: 401, wwwAuthenticate: expect.stringContaining('error="invalid_token"') });
    expect(steps(recorded).filter((step) => step.startsWith("POST /oauth/token"))).toEqual(["POST /oauth/token 200 refresh_token"]);
    expect(steps(recorded).at(-1)).toMatch(/^POST \/mcp 200$/);
    const after = approved.provider.tokens()!;
    expect(after.access_token).not.toBe(spoiled);
    expect(after.access_token).not.toBe(before.access_token);
    // Rotated (06 §3.4), same grant, no new consent.
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.scope).toBe("owner.read owner.write");
    expect(approved.provider.authorizationUrls).toHaveLength(1);
  });

  it("Deny in Chromium → the client gets error=access_denied at its redirect URI, no code, and finishAuth fails", async () => {
    const githubBefore = stack.standInRequests.length;
    let landed: URL | undefined;
    const denied = stack.oauthSession({
      consent: async (url) => {
        landed = await stack.consent("deny")(url);
        return landed;
      },
    });
    const failure = await denied.connect().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OAuthError);
    expect((failure as OAuthError).code).toBe("access_denied");
    expect(landed!.pathname).toBe("/callback");
    expect(landed!.searchParams.get("error")).toBe("access_denied");
    expect(landed!.searchParams.get("state")).toBe(denied.provider.authorizationUrls[0]!.searchParams.get("state"));
    expect(landed!.searchParams.get("iss")).toBe(stack.ownerOrigin);
    expect(landed!.searchParams.get("code")).toBeNull();
    expect(denied.provider.tokens()).toBeUndefined();
    expect(stack.standInRequests.slice(githubBefore)).toEqual([]);
  });

  it("a client named to reverse the page's sentence: Chromium shows the cleaned name, isolated, in the order it was written", async () => {
    const client = await stack.register("Claude \u202Eetirw.renwo daer\u202C");
    const auth = stack.authorization(client.client_id, "owner.read");
    const seen = await stack.readConsentInChromium(auth, ["etirw", "daer"]);
    expect(seen.heading).toBe("Allow a client to act for the owner of MAGNT?");
    expect(seen.name).toBe("Claude etirw.renwo daer");
    expect(seen.nameIsolation).toBe("isolate");
    // On screen, left to right as written: with the override, "daer" would be drawn before "etirw" ("read owner.write").
    const { etirw, daer } = seen.left;
    expect(typeof etirw === "number" && typeof daer === "number" && etirw < daer, JSON.stringify(seen.left)).toBe(true);
    // The answer goes to a program on this machine (loopback): no hosted-platform warning.
    expect(seen.warning).toBeNull();
  });

  it("a client that asked auth() for owner.read only, calling owner_save_draft → 403 insufficient_scope challenge, nothing saved", async () => {
    expect(approved, "the Approve run must have connected the client").toBeDefined();
    const readOnly = stack.oauthSession({ onInsufficientScope: "throw" });
    const tokens = await authorizeWithScope(new URL(`${stack.ownerOrigin}/mcp`), readOnly.provider, stack.consent("approve", { publishLine: false }), "owner.read");
    expect(tokens.scope).toBe("owner.read");
    expect(readOnly.provider.authorizationUrls[0]!.searchParams.get("scope")).toBe("owner.read");
    try {
      // Its tokens are in place: it connects without another consent, and reads.
      await readOnly.connect();
      expect(readOnly.provider.authorizationUrls).toHaveLength(1);
      expect((await listContact(readOnly)).map((item) => item.contact_id)).toEqual([contactId]);

      const from = readOnly.exchanges.length;
      const failure = await readOnly.callTool("owner_save_draft", { contact_id: contactId, text: "e2e draft that must not be saved" }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(InsufficientScopeError);
      expect((failure as InsufficientScopeError).requiredScope).toBe("owner.read owner.write");
      const [challenge] = readOnly.exchanges.slice(from);
      expect(challenge).toMatchObject({ path: "/mcp", status: 403 });
      expect(challenge!.wwwAuthenticate).toBe(
        `Bearer error="insufficient_scope", scope="owner.read owner.write", resource_metadata="${stack.ownerOrigin}/.well-known/oauth-protected-resource"`,
      );
    } finally {
      await readOnly.close();
    }
    const [item] = await listContact(approved);
    expect(item!.drafts).toEqual([]);
  });

  it("the helpers other suites use: linkWithScope runs the SDK's auth() (Approve in Chromium); ownerClient connects with the token it saved", async () => {
    const linked = await stack.linkWithScope("owner.read owner.write");
    expect(linked.client.client_id).toMatch(/^oc_/);
    expect(linked.client.redirect_uris).toEqual([stack.redirectUri]);
    expect(linked.tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "owner.read owner.write" });
    const mcp = await stack.ownerClient(linked.tokens.access_token);
    try {
      expect((await mcp.listTools()).tools.map((tool) => tool.name).sort()).toEqual(OWNER_TOOLS);
    } finally {
      await mcp.close();
    }
  });
});
