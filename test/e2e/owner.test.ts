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
 * An official MCP client (v2) leaves a contact at the local door. A client
 * registers and starts an authorization with PKCE; the consent page is driven
 * in a real headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core) clicking Approve as the owner would, so the consent page's
 * CSP (form-action through GitHub back to the client), the `__Host-` cookies
 * on http://localhost and the redirect chain are enforced by a browser, not
 * by us. The final redirect lands on the client's loopback redirect URI (a
 * tiny HTTP server here); the code is exchanged for tokens, and the official
 * MCP client with the bearer token lists the four owner tools and reads the
 * contact left at the door. A second run clicks Deny and the client gets
 * `error=access_denied`. A client whose name holds a right-to-left override
 * (issue 17) is shown by Chromium cleaned, inside a `<bdi>` (computed
 * `unicode-bidi: isolate`), in the order it was written. A token narrowed to
 * `owner.read` calling a write tool gets the 403 `insufficient_scope`
 * challenge and changes nothing.
 *
 * Chromium is required, never skipped: .ci/run installs it when absent.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "./helpers";
import { startOwnerStack, type OwnerStack, type Registered, type Tokens } from "./owner-helpers";

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

async function listContact(token: string): Promise<ContactItem[]> {
  const client = await stack.ownerClient(token);
  try {
    const result = await client.callTool({ name: "owner_list_contacts", arguments: { contact_id: contactId, include_tests: true, detail: "full" } });
    expect(result.isError ?? false).toBe(false);
    return (result.structuredContent as { items: ContactItem[] }).items;
  } finally {
    await client.close();
  }
}

let approved: { client: Registered; tokens: Tokens };

beforeAll(async () => {
  stack = await startOwnerStack({ disable: ["DIALOGUE_ENABLED"] });
}, 180_000);

afterAll(async () => {
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

  it("Approve in Chromium → GitHub stand-in → code → tokens → the official MCP client lists the four tools and reads the contact", async () => {
    const client = await stack.register();
    expect(client.redirect_uris).toEqual([stack.redirectUri]);
    const auth = stack.authorization(client.client_id, "owner.read owner.write");
    const landed = await stack.consentInChromium(auth, "approve", { publishLine: false });
    expect(landed.pathname).toBe("/callback");
    expect(landed.searchParams.get("error")).toBeNull();
    expect(landed.searchParams.get("state")).toBe(auth.state);
    expect(landed.searchParams.get("iss")).toBe(stack.ownerOrigin);
    const code = landed.searchParams.get("code");
    expect(code).toEqual(expect.any(String));
    // The browser went through the stand-in GitHub: authorize, then the gateway's code exchange and /user lookup.
    expect(stack.standInRequests).toEqual(expect.arrayContaining(["GET /login/oauth/authorize", "POST /login/oauth/access_token", "GET /user"]));

    const exchanged = await stack.tokenRequest({
      grant_type: "authorization_code",
      code: code!,
      redirect_uri: stack.redirectUri,
      client_id: client.client_id,
      code_verifier: auth.verifier,
      resource: `${stack.ownerOrigin}/mcp`,
    });
    expect(exchanged.status).toBe(200);
    const tokens = exchanged.body as unknown as Tokens;
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "owner.read owner.write" });
    approved = { client, tokens };

    // A code is spent once.
    const again = await stack.tokenRequest({ grant_type: "authorization_code", code: code!, redirect_uri: stack.redirectUri, client_id: client.client_id, code_verifier: auth.verifier });
    expect(again).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    const mcp = await stack.ownerClient(tokens.access_token);
    try {
      const { tools } = await mcp.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(OWNER_TOOLS);
    } finally {
      await mcp.close();
    }
    const items = await listContact(tokens.access_token);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      contact_id: contactId,
      state: "pending",
      self_reported_test: true,
      drafts: [],
      visitor_content: { content_label: "untrusted_visitor_content", summary: CONTACT_SUMMARY },
    });
  });

  it("Deny in Chromium → the client gets error=access_denied at its redirect URI, and no code", async () => {
    const client = await stack.register();
    const auth = stack.authorization(client.client_id, "owner.read");
    const githubBefore = stack.standInRequests.length;
    const landed = await stack.consentInChromium(auth, "deny");
    expect(landed.pathname).toBe("/callback");
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("state")).toBe(auth.state);
    expect(landed.searchParams.get("iss")).toBe(stack.ownerOrigin);
    expect(landed.searchParams.get("code")).toBeNull();
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

  it("a token without owner.write calling owner_save_draft → 403 insufficient_scope challenge, nothing saved", async () => {
    expect(approved, "the Approve run must have produced tokens").toBeDefined();
    const narrowed = await stack.tokenRequest({
      grant_type: "refresh_token",
      refresh_token: approved.tokens.refresh_token,
      client_id: approved.client.client_id,
      scope: "owner.read",
    });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe("owner.read");
    const readOnly = narrowed.body.access_token as string;

    // The read token still reads.
    expect((await listContact(readOnly)).map((item) => item.contact_id)).toEqual([contactId]);

    const response = await fetch(`${stack.ownerOrigin}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${readOnly}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "owner_save_draft", arguments: { contact_id: contactId, text: "e2e draft that must not be saved" } },
      }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="owner.read owner.write", resource_metadata="${stack.ownerOrigin}/.well-known/oauth-protected-resource"`,
    );
    await response.arrayBuffer();
    const [item] = await listContact(approved.tokens.access_token);
    expect(item!.drafts).toEqual([]);
  });
});
