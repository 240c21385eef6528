/**
 * The owner MCP end to end, offline (issue 12 items 4 and 6, 06, 08 §13):
 * `npm start -- --owner` runs the split deployment locally (gateway + core +
 * owner gateway on one local D1) with a `.dev.vars` of obviously fake owner
 * secrets, both owner flags on, and GitHub replaced by the loopback stand-in
 * (scripts/github-stand-in.mjs, signing in as the pinned numeric id).
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
 * `error=access_denied`. A token narrowed to `owner.read` calling a write tool
 * gets the 403 `insufficient_scope` challenge and changes nothing.
 *
 * Chromium is required, never skipped: .ci/run installs it when absent.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  killGroup,
  removeTempDirs,
  REPO_ROOT,
  startDoorWithNpm,
  stopAllDoors,
  tempDir,
  waitFor,
  writeTempLocalConfig,
  type Door,
} from "./helpers";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Obviously fake owner secrets: they exist only in this run's temp `.dev.vars`. */
const OWNER_GITHUB_ID = "900000001";
const FAKE_SECRETS = {
  OWNER_GITHUB_ID,
  OWNER_TOKEN_SIGNING_KEY: Buffer.from("e2e-fake-owner-signing-key-not-a-secret-0123456789").toString("base64url"),
  OWNER_TOKEN_EPOCH: "1",
  GITHUB_CLIENT_ID: "e2e-fake-github-client-id",
  GITHUB_CLIENT_SECRET: "e2e-fake-github-client-secret",
};
const OWNER_TOOLS = ["owner_list_contacts", "owner_list_observed_goals", "owner_save_draft", "owner_set_contact_state"];

let door: Door;
let ownerPort: number;
let ownerOrigin: string;
let standIn: ChildProcess;
const standInRequests: string[] = [];
let callbackServer: Server;
let redirectUri: string;
/** Every request the client's redirect URI received (path + query). */
const callbacks: URL[] = [];

let contactId: string;
const CONTACT_SUMMARY = `e2e owner contact ${randomBytes(6).toString("hex")}`;

function base64url(bytes: Buffer): string {
  return bytes.toString("base64url");
}

async function startStandIn(port: number): Promise<void> {
  standIn = spawn(
    process.execPath,
    [
      join(REPO_ROOT, "scripts", "github-stand-in.mjs"),
      "--port", String(port),
      "--id", OWNER_GITHUB_ID,
      "--client-id", FAKE_SECRETS.GITHUB_CLIENT_ID,
      "--client-secret", FAKE_SECRETS.GITHUB_CLIENT_SECRET,
      // Approves at once, so the redirect chain after the owner's click runs owner → GitHub → owner → client
      // under the consent page's form-action (06 §2), as a browser enforces it.
      "--auto",
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let buffer = "";
  await new Promise<void>((resolve, reject) => {
    standIn.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (line.startsWith("GitHub stand-in on")) resolve();
        else if (line.trim() !== "") standInRequests.push(line.trim());
      }
    });
    standIn.on("exit", (code) => reject(new Error(`GitHub stand-in exited with ${code}`)));
  });
}

/** The client's loopback redirect URI: records what arrives and answers a plain page. */
async function startCallbackServer(): Promise<void> {
  const port = await freePort();
  callbackServer = createServer((request, response) => {
    const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`);
    // The browser also asks for /favicon.ico; only the redirect URI's path is the client's answer.
    if (url.pathname === "/callback") callbacks.push(url);
    response.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
    response.end("client received the answer");
  });
  await new Promise<void>((resolve) => callbackServer.listen(port, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${port}/callback`;
}

interface Registered {
  client_id: string;
  redirect_uris: string[];
}

async function register(): Promise<Registered> {
  const response = await fetch(`${ownerOrigin}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ redirect_uris: [redirectUri], client_name: "E2E owner client" }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Registered;
}

interface Authorization {
  url: string;
  state: string;
  verifier: string;
}

function authorization(clientId: string, scope: string): Authorization {
  const verifier = base64url(randomBytes(48));
  const challenge = base64url(createHash("sha256").update(verifier).digest());
  const state = base64url(randomBytes(16));
  const url = new URL(`${ownerOrigin}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    scope,
    resource: `${ownerOrigin}/mcp`,
  }).toString();
  return { url: url.href, state, verifier };
}

/**
 * Opens the authorization URL in a fresh headless Chromium (its own user data
 * dir, so no cookie survives from another run), checks the consent page,
 * clicks `decision` and waits until the browser has landed on the client's
 * redirect URI. Returns that final URL as the client received it.
 */
async function consentInChromium(auth: Authorization, decision: "approve" | "deny"): Promise<URL> {
  const before = callbacks.length;
  const context = await chromium.launchPersistentContext(tempDir("chromium"), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const consent = await page.goto(auth.url);
    expect(consent?.status()).toBe(200);
    expect(await page.locator("h1").textContent()).toContain("E2E owner client");
    const cookies = await context.cookies(ownerOrigin);
    expect(cookies.map((cookie) => cookie.name)).toContain("__Host-magnt_owner_csrf");
    await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click(`button[name="decision"][value="${decision}"]`)]);
    expect(await page.locator("body").textContent()).toContain("client received the answer");
  } finally {
    await context.close();
  }
  return waitFor(() => (callbacks.length > before ? callbacks.at(-1) : undefined), { describe: () => "no request reached the client's redirect URI" });
}

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

async function tokenRequest(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${ownerOrigin}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function ownerClient(token: string): Promise<Client> {
  const client = new Client({ name: "e2e-owner", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${ownerOrigin}/mcp`), { authProvider: { token: async () => token } }));
  return client;
}

interface ContactItem {
  contact_id: string;
  self_reported_test: boolean;
  state: string;
  drafts: unknown[];
  visitor_content: { content_label: string; summary: string };
}

async function listContact(token: string): Promise<ContactItem[]> {
  const client = await ownerClient(token);
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
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: this suite drives the consent page in Debian's chromium (apt-get install chromium; .ci/run installs it when absent)`,
    );
  }
  const dir = tempDir("owner");
  const state = tempDir("owner-state");
  const config = writeTempLocalConfig(dir);
  const [doorPort, ownerGatewayPort, githubPort] = [await freePort(), await freePort(), await freePort()];
  ownerPort = ownerGatewayPort;
  ownerOrigin = `http://localhost:${ownerPort}`;
  await startStandIn(githubPort);
  await startCallbackServer();
  const github = `http://127.0.0.1:${githubPort}`;
  const devVars = {
    ...FAKE_SECRETS,
    OWNER_MCP_ENABLED: "true",
    OWNER_MCP_WRITE_ENABLED: "true",
    GITHUB_OAUTH_ORIGIN: github,
    GITHUB_API_ORIGIN: github,
  };
  writeFileSync(join(dir, ".dev.vars"), Object.entries(devVars).map(([name, value]) => `${name}=${value}\n`).join(""), { mode: 0o600 });

  door = await startDoorWithNpm(doorPort, state, ["--owner", "--owner-port", String(ownerPort), "--config", config]);
  // The door answers its probe before its Service Binding to core (another process) is connected: wait for both gateways.
  await waitFor(
    async () => {
      const probe = (await (await fetch(`${door.origin}/__magnt_probe`)).json()) as Record<string, unknown>;
      return probe.core_reachable === true && probe.contact_storage_configured === true ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, describe: () => door.output() },
  );
  await waitFor(
    async () => {
      try {
        const response = await fetch(`${ownerOrigin}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(2000) });
        return response.status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 250, describe: () => door.output() },
  );
}, 180_000);

afterAll(async () => {
  await stopAllDoors();
  if (standIn !== undefined) killGroup(standIn, "SIGTERM");
  await new Promise<void>((resolve) => (callbackServer === undefined ? resolve() : callbackServer.close(() => resolve())));
  removeTempDirs();
});

describe("npm start -- --owner", () => {
  it("prints the door's and the owner gateway's URLs and the cron pass", () => {
    expect(door.output()).toContain(`MAGNT door: http://localhost:${door.port}/ (MCP: http://localhost:${door.port}/mcp)`);
    expect(door.output()).toContain(`MAGNT owner: ${ownerOrigin}/ (owner MCP: ${ownerOrigin}/mcp`);
    expect(door.output()).toMatch(/one cron pass \(Telegram outbox, on core\): curl http:\/\/127\.0\.0\.1:\d+\/cdn-cgi\/handler\/scheduled/);
  });

  it("an official MCP client leaves a contact at the local door", async () => {
    const client = new Client({ name: "e2e-visitor", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(door.mcp)));
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
    const client = await register();
    expect(client.redirect_uris).toEqual([redirectUri]);
    const auth = authorization(client.client_id, "owner.read owner.write");
    const landed = await consentInChromium(auth, "approve");
    expect(landed.pathname).toBe("/callback");
    expect(landed.searchParams.get("error")).toBeNull();
    expect(landed.searchParams.get("state")).toBe(auth.state);
    expect(landed.searchParams.get("iss")).toBe(ownerOrigin);
    const code = landed.searchParams.get("code");
    expect(code).toEqual(expect.any(String));
    // The browser went through the stand-in GitHub: authorize, then the gateway's code exchange and /user lookup.
    expect(standInRequests).toEqual(expect.arrayContaining(["GET /login/oauth/authorize", "POST /login/oauth/access_token", "GET /user"]));

    const exchanged = await tokenRequest({
      grant_type: "authorization_code",
      code: code!,
      redirect_uri: redirectUri,
      client_id: client.client_id,
      code_verifier: auth.verifier,
      resource: `${ownerOrigin}/mcp`,
    });
    expect(exchanged.status).toBe(200);
    const tokens = exchanged.body as unknown as Tokens;
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "owner.read owner.write" });
    approved = { client, tokens };

    // A code is spent once.
    const again = await tokenRequest({ grant_type: "authorization_code", code: code!, redirect_uri: redirectUri, client_id: client.client_id, code_verifier: auth.verifier });
    expect(again).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    const mcp = await ownerClient(tokens.access_token);
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
    const client = await register();
    const auth = authorization(client.client_id, "owner.read");
    const githubBefore = standInRequests.length;
    const landed = await consentInChromium(auth, "deny");
    expect(landed.pathname).toBe("/callback");
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("state")).toBe(auth.state);
    expect(landed.searchParams.get("iss")).toBe(ownerOrigin);
    expect(landed.searchParams.get("code")).toBeNull();
    expect(standInRequests.slice(githubBefore)).toEqual([]);
  });

  it("a token without owner.write calling owner_save_draft → 403 insufficient_scope challenge, nothing saved", async () => {
    expect(approved, "the Approve run must have produced tokens").toBeDefined();
    const narrowed = await tokenRequest({
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

    const response = await fetch(`${ownerOrigin}/mcp`, {
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
      `Bearer error="insufficient_scope", scope="owner.read owner.write", resource_metadata="${ownerOrigin}/.well-known/oauth-protected-resource"`,
    );
    await response.arrayBuffer();
    const [item] = await listContact(approved.tokens.access_token);
    expect(item!.drafts).toEqual([]);
  });
});
