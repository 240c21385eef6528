/**
 * The local owner stack of the e2e suites (06, 07, 08 §13): `npm start --
 * --owner` on a fresh temp local config — the one-command loop (issue 19):
 * gateway + core + owner gateway on one local D1, the generated local-only
 * `.dev.vars` (owner, write, dialogue and notification flags on), GitHub
 * replaced by the loopback stand-in magnt dev runs itself (signing in as the
 * generated owner id, approving at once, so the redirect chain after the
 * owner's click runs owner → GitHub → owner → client under the consent page's
 * form-action, 06 §2, as a browser enforces it), a suite's flag changes made
 * with `magnt flags … --owner` before the start — and the client's loopback
 * redirect URI as a tiny HTTP server. Owner tokens come only from real
 * clients: `oauthSession()` and `linkWithScope()` run the official MCP
 * client's own OAuth flow (oauth-client.ts); the hand-built requests
 * (`register`, `authorization`, `tokenRequest`) are for what no client sends.
 *
 * The consent page is driven in a real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) clicking Approve or Deny as the
 * owner would, so the consent page's CSP (form-action through GitHub back to
 * the client), the `__Host-` cookies on http://localhost and the redirect
 * chain are enforced by a browser, not by us. Chromium is required, never
 * skipped: .ci/run installs it when absent.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import type { FlagName } from "../../worker/contracts";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium";
import { freePort, magnt, READY_LINE, startDoorWithNpm, stopAllDoors, tempDir, waitFor, writeTempLocalConfig, type Door } from "./helpers";
import { authorizeWithScope, InMemoryOAuthProvider, oauthSession, type Consent, type OAuthSession } from "./oauth-client";

export { CHROMIUM } from "../helpers/chromium";

/** The client name every registration of these suites uses (the consent page shows it in its `<bdi class="client-name">`). */
export const CLIENT_NAME = "E2E owner client";

export interface Registered {
  client_id: string;
  redirect_uris: string[];
}

export interface Authorization {
  url: string;
  state: string;
  verifier: string;
}

/** What a real browser shows of the consent page (`readConsentInChromium`). */
export interface ConsentReading {
  /** The `<h1>` as rendered text. */
  readonly heading: string;
  /** The rendered text of `bdi.client-name`, or null when there is none. */
  readonly name: string | null;
  /** The computed `unicode-bidi` of that element (`isolate` for a `<bdi>`). */
  readonly nameIsolation: string | null;
  /**
   * For each word of `words` (each must occur once on the page), its left edge
   * on screen in px, measured with a DOM Range over the text as laid out —
   * the visual order, which a bidi override reverses while the source order
   * stays the same.
   */
  readonly left: Record<string, number | null>;
  /** The text of `p.warning`, or null. */
  readonly warning: string | null;
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export interface OwnerStack {
  readonly door: Door;
  readonly ownerOrigin: string;
  /** The client's loopback redirect URI. */
  readonly redirectUri: string;
  /** Every request the stand-in GitHub logged ("METHOD /path"), as magnt dev relays them. */
  readonly standInRequests: readonly string[];
  /** Registers a client (`clientName` defaults to CLIENT_NAME). */
  register(clientName?: string): Promise<Registered>;
  authorization(clientId: string, scope: string): Authorization;
  /**
   * Opens the authorization URL in a fresh headless Chromium (its own user data
   * dir, so no cookie survives from another run), checks the consent page —
   * `publishLine`: whether `owner.publish` must be shown on its own highlighted
   * line — clicks `decision` and waits until the browser has landed on the
   * client's redirect URI. Returns that final URL as the client received it.
   */
  consentInChromium(auth: Authorization, decision: "approve" | "deny", options?: { publishLine?: boolean }): Promise<URL>;
  /** Opens the authorization URL in a fresh headless Chromium and reads the consent page without deciding. */
  readConsentInChromium(auth: Authorization, words: readonly string[]): Promise<ConsentReading>;
  tokenRequest(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }>;
  /**
   * The Chromium consent as the official client's `Consent` step: opens the
   * URL the SDK produced, checks the page (`publishLine` as for
   * `consentInChromium`), clicks `decision`, returns the callback URL.
   */
  consent(decision: "approve" | "deny", options?: { publishLine?: boolean }): Consent;
  /**
   * The official MCP client with its own OAuth flow at owner `/mcp`
   * (oauth-client.ts), consenting in Chromium with Approve (the publish line
   * is checked against the scope each authorization URL asks for). A fresh
   * in-memory provider unless one is given.
   */
  oauthSession(options?: { provider?: InMemoryOAuthProvider; consent?: Consent; onInsufficientScope?: "reauthorize" | "throw" }): OAuthSession;
  /** A fresh in-memory provider for this stack's redirect URI (`clientName` defaults to CLIENT_NAME). */
  oauthProvider(clientName?: string): InMemoryOAuthProvider;
  /**
   * The official client's `auth()` for `scope`: registration, PKCE and the
   * code exchange by the SDK, Approve in Chromium, asserting the consent page;
   * returns the registration and the tokens its provider saved.
   */
  linkWithScope(scope: string): Promise<{ client: Registered; tokens: Tokens }>;
  /** The official MCP client (v2) at owner `/mcp` with a bearer token. */
  ownerClient(token: string): Promise<Client>;
  /** A raw JSON-RPC `tools/call` at owner `/mcp` (for the 403 challenge, which a client turns into an auth flow). */
  rawToolCall(token: string, name: string, args: Record<string, unknown>): Promise<Response>;
  stop(): Promise<void>;
}

/** What a test looks at while the consent page is open (`decideInChromium`). */
export interface ConsentSteps {
  /** The final address of the redirect chain that follows the click (the client's redirect URI). */
  readonly landsOn: (url: URL) => boolean;
  /** Runs on the consent page before the click. */
  readonly check?: (page: Page) => Promise<void>;
  /** Runs on the page the chain landed on. */
  readonly landed?: (page: Page) => Promise<void>;
}

/**
 * Opens `authorizationUrl` in a fresh headless Chromium (its own user data
 * dir, so no cookie survives from another run), checks that the consent page
 * set its CSRF cookie, runs `steps.check`, clicks `decision` and waits until
 * the browser has landed where `steps.landsOn` says (after the stand-in GitHub
 * approved at once), then runs `steps.landed`. Any client's authorization URL
 * will do: the tests' own, or one mcp-remote asked a browser to open.
 */
export async function decideInChromium(authorizationUrl: string, decision: "approve" | "deny", steps: ConsentSteps): Promise<URL> {
  const context = await chromium.launchPersistentContext(tempDir("chromium"), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const consent = await page.goto(authorizationUrl);
    expect(consent?.status(), await page.content()).toBe(200);
    const cookies = await context.cookies(new URL(authorizationUrl).origin);
    expect(cookies.map((cookie) => cookie.name)).toContain("__Host-magnt_owner_csrf");
    await steps.check?.(page);
    await Promise.all([page.waitForURL((url) => steps.landsOn(url)), page.click(`button[name="decision"][value="${decision}"]`)]);
    await steps.landed?.(page);
    return new URL(page.url());
  } finally {
    await context.close();
  }
}

function base64url(bytes: Buffer): string {
  return bytes.toString("base64url");
}

/** The client's loopback redirect URI: records what arrives and answers a plain page. */
async function startCallbackServer(callbacks: URL[]): Promise<{ server: Server; redirectUri: string }> {
  const port = await freePort();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`);
    // The browser also asks for /favicon.ico; only the redirect URI's path is the client's answer.
    if (url.pathname === "/callback") callbacks.push(url);
    response.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
    response.end("client received the answer");
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { server, redirectUri: `http://127.0.0.1:${port}/callback` };
}

/** The GitHub stand-in's requests as `magnt dev` relays them ("github stand-in: GET /user"). */
function githubRequests(output: string): string[] {
  return output
    .split("\n")
    .map((line) => /^github stand-in: ((?:GET|POST) \S+)$/.exec(line.trim())?.[1])
    .filter((line): line is string => line !== undefined);
}

/**
 * Flags a suite changes from the generated defaults (owner, write, dialogue
 * with replies and receipts, contact notifications on): set with `magnt flags
 * … --owner` before the start, as an owner would.
 */
export interface StackFlags {
  enable?: readonly FlagName[];
  disable?: readonly FlagName[];
  /**
   * Variables added to the split run's generated `.dev.vars` (created by
   * `magnt flags list --owner` first), for settings that are not flags, such
   * as the Client ID Metadata Document origins.
   */
  vars?: Readonly<Record<string, string>>;
}

/**
 * Starts the client's redirect URI and `npm start -- --owner` on a fresh temp
 * local config, after `flags`, and waits for magnt dev's readiness
 * announcement (everything answers through its bindings); the door's probe
 * then sees core at once.
 */
export async function startOwnerStack(flags: StackFlags = {}): Promise<OwnerStack> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: this suite drives the consent page in Debian's chromium (apt-get install chromium; .ci/run installs it when absent)`,
    );
  }
  const dir = tempDir("owner");
  const state = tempDir("owner-state");
  const config = writeTempLocalConfig(dir);
  const [doorPort, ownerPort] = [await freePort(), await freePort()];
  const ownerOrigin = `http://localhost:${ownerPort}`;
  const callbacks: URL[] = [];
  for (const [change, names] of [["enable", flags.enable ?? []], ["disable", flags.disable ?? []]] as const) {
    for (const name of names) {
      const run = await magnt(["flags", change, name, "--owner", "--yes", "--config", config, "--persist-to", state]);
      expect(run.code, run.stderr).toBe(0);
    }
  }
  if (flags.vars !== undefined) {
    const run = await magnt(["flags", "list", "--owner", "--config", config, "--persist-to", state]);
    expect(run.code, run.stderr).toBe(0);
    const generated = join(dir, ".wrangler", "magnt-dev-owner", ".dev.vars");
    appendFileSync(generated, Object.entries(flags.vars).map(([name, value]) => `${name}=${value}\n`).join(""));
  }
  const { server: callbackServer, redirectUri } = await startCallbackServer(callbacks);

  const cleanUp = async () => {
    await stopAllDoors();
    await new Promise<void>((resolve) => callbackServer.close(() => resolve()));
  };
  let door: Door;
  try {
    door = await startDoorWithNpm(doorPort, state, ["--owner", "--owner-port", String(ownerPort), "--config", config], { untilPrinted: READY_LINE, readyTimeoutMs: 240_000 });
    const probe = (await (await fetch(`${door.origin}/__magnt_probe`)).json()) as Record<string, unknown>;
    expect(probe).toMatchObject({ core_reachable: true, contact_storage_configured: true });
  } catch (error) {
    await cleanUp();
    throw error;
  }

  /** Chromium at `url`: checks the consent page, clicks `decision`, returns what reached the client's redirect URI. */
  const consentAt = async (url: string, decision: "approve" | "deny", options: { publishLine?: boolean }): Promise<URL> => {
    const before = callbacks.length;
    await decideInChromium(url, decision, {
      landsOn: (landed) => landed.href.startsWith(redirectUri),
      check: async (page) => {
        expect(await page.locator("bdi.client-name").textContent()).toBe(CLIENT_NAME);
        if (options.publishLine !== undefined) {
          const line = page.locator("p.publish");
          expect(await line.count()).toBe(options.publishLine ? 1 : 0);
          if (options.publishLine) {
            expect(await line.textContent()).toContain("owner.publish");
            expect(await line.textContent()).toContain("publish replies that visitors can read");
          }
        }
      },
      landed: async (page) => expect(await page.locator("body").textContent()).toContain("client received the answer"),
    });
    return waitFor(() => (callbacks.length > before ? callbacks.at(-1) : undefined), { describe: () => "no request reached the client's redirect URI" });
  };

  const stack: OwnerStack = {
    door,
    ownerOrigin,
    redirectUri,
    get standInRequests() {
      return githubRequests(door.output());
    },

    async register(clientName = CLIENT_NAME) {
      const response = await fetch(`${ownerOrigin}/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ redirect_uris: [redirectUri], client_name: clientName }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as Registered;
    },

    authorization(clientId, scope) {
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
    },

    consentInChromium(auth, decision, options = {}) {
      return consentAt(auth.url, decision, options);
    },

    consent(decision, options = {}) {
      return (url) => consentAt(url.href, decision, options);
    },

    oauthProvider(clientName = CLIENT_NAME) {
      return new InMemoryOAuthProvider(redirectUri, clientName);
    },

    oauthSession(options = {}) {
      const consent =
        options.consent ?? ((url: URL) => consentAt(url.href, "approve", { publishLine: (url.searchParams.get("scope") ?? "").split(" ").includes("owner.publish") }));
      return oauthSession(new URL(`${ownerOrigin}/mcp`), options.provider ?? stack.oauthProvider(), consent, {
        ...(options.onInsufficientScope !== undefined ? { onInsufficientScope: options.onInsufficientScope } : {}),
      });
    },

    async readConsentInChromium(auth, words) {
      const context = await chromium.launchPersistentContext(tempDir("chromium"), { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        const consent = await page.goto(auth.url);
        expect(consent?.status()).toBe(200);
        // Evaluated in the page (a string: the test project has no DOM types). The page itself runs no script.
        return (await page.evaluate(`(() => {
          const words = ${JSON.stringify(words)};
          const bdi = document.querySelector("bdi.client-name");
          const warning = document.querySelector("p.warning");
          const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          const texts = [];
          for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) texts.push(node);
          const left = {};
          for (const word of words) {
            const node = texts.find((text) => text.data.includes(word));
            if (node === undefined) { left[word] = null; continue; }
            const range = document.createRange();
            const start = node.data.indexOf(word);
            range.setStart(node, start);
            range.setEnd(node, start + word.length);
            left[word] = Math.min(...Array.from(range.getClientRects(), (rect) => rect.left));
          }
          return {
            heading: document.querySelector("h1").innerText,
            name: bdi === null ? null : bdi.innerText,
            nameIsolation: bdi === null ? null : getComputedStyle(bdi).unicodeBidi,
            left,
            warning: warning === null ? null : warning.innerText,
          };
        })()`)) as ConsentReading;
      } finally {
        await context.close();
      }
    },

    async tokenRequest(form) {
      const response = await fetch(`${ownerOrigin}/oauth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },

    async linkWithScope(scope) {
      const provider = stack.oauthProvider();
      const tokens = await authorizeWithScope(new URL(`${ownerOrigin}/mcp`), provider, stack.consent("approve", { publishLine: scope.split(" ").includes("owner.publish") }), scope);
      expect(tokens).toMatchObject({ token_type: "Bearer", scope, refresh_token: expect.any(String) });
      const client = provider.clientInformation()!;
      const redirectUris = "redirect_uris" in client ? client.redirect_uris : undefined;
      expect(redirectUris).toEqual([redirectUri]);
      return { client: { client_id: client.client_id, redirect_uris: [redirectUri] }, tokens: tokens as Tokens };
    },

    async ownerClient(token) {
      const client = new Client({ name: "e2e-owner", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${ownerOrigin}/mcp`), { authProvider: { token: async () => token } }));
      return client;
    },

    rawToolCall(token, name, args) {
      return fetch(`${ownerOrigin}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      });
    },

    stop: cleanUp,
  };
  return stack;
}
