/**
 * An independent OAuth client, mcp-remote 0.15.1, against the local owner
 * gateway of `npm start -- --owner` (issue 19 items 3, 5a and 6, 06 §3):
 *
 * - at `http://localhost:<port>/mcp` and at `http://127.0.0.1:<port>/mcp`
 *   (the owner origin is `http://localhost:<port>`; Wrangler prints the
 *   other): mcp-remote discovers the server, registers, asks a browser to
 *   open the authorization URL — headless Chromium opens it and the owner
 *   clicks Approve, the stand-in GitHub approving at once —, exchanges the
 *   code and proxies MCP; the official MCP client lists the owner tools
 *   through it. Before the fix mcp-remote stopped at 127.0.0.1 with
 *   "Protected resource http://localhost:<port>/mcp does not match";
 * - with `--client-metadata-url`: mcp-remote presents an `https` Client ID
 *   Metadata Document URL instead of registering; the gateway fetches the
 *   document from a loopback stand-in (`OWNER_CLIENT_METADATA_FETCH_ORIGIN`)
 *   and Chromium shows its host as verified;
 * - documents the gateway must refuse, served for real over loopback HTTP
 *   (workerd's own fetch): a different `client_id`, more than 5 KiB, no
 *   answer within 3 s, a redirect (never followed).
 *
 * Chromium is required, never skipped: .ci/run installs it when absent.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, removeTempDirs } from "./helpers";
import { mcpRemoteRedirectUri, startMcpRemote, type McpRemoteRun } from "./mcp-remote";
import { decideInChromium, startOwnerStack, type OwnerStack } from "./owner-helpers";

/** The local loop turns the owner, write and dialogue flags on (docs/owner-activation.md §3): the B.1 tools and the two C.1 owner tools. */
const OWNER_TOOLS = [
  "owner_list_contacts",
  "owner_list_observed_goals",
  "owner_save_draft",
  "owner_set_contact_state",
  "owner_publish_reply",
  "owner_revoke_dialogue",
];
const DOCUMENT_ORIGIN = "https://mcp-remote.example";
const DOCUMENT_NAME = "mcp-remote via its metadata document";

type Served = { status: number; headers?: Record<string, string>; body: string } | "never";

/** The loopback stand-in for `https://mcp-remote.example`: path → answer, every request path recorded. */
interface DocumentHost {
  readonly origin: string;
  readonly requested: string[];
  readonly answers: Map<string, Served>;
  close(): Promise<void>;
}

async function startDocumentHost(): Promise<DocumentHost> {
  const port = await freePort();
  const requested: string[] = [];
  const answers = new Map<string, Served>();
  const server: Server = createServer((request, response) => {
    requested.push(request.url ?? "");
    const answer = answers.get(request.url ?? "");
    if (answer === undefined) return void response.writeHead(404).end();
    // Never answers: the gateway's time limit has to end it (its abort closes the socket).
    if (answer === "never") return;
    response.writeHead(answer.status, { "Content-Type": "application/json", ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    requested,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function documentFor(clientId: string, redirectUri: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    client_id: clientId,
    client_name: DOCUMENT_NAME,
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...fields,
  });
}

let stack: OwnerStack;
let documents: DocumentHost;
const runs: McpRemoteRun[] = [];

beforeAll(async () => {
  documents = await startDocumentHost();
  stack = await startOwnerStack({ vars: { OWNER_CLIENT_METADATA_ORIGINS: DOCUMENT_ORIGIN, OWNER_CLIENT_METADATA_FETCH_ORIGIN: documents.origin } });
}, 180_000);

afterAll(async () => {
  await Promise.all(runs.map((run) => run.close()));
  await stack?.stop();
  await documents?.close();
  removeTempDirs();
});

const ownerPort = () => new URL(stack.ownerOrigin).port;

/** mcp-remote at `serverUrl` through the owner's Approve click in Chromium; returns the run once MCP works through it. */
async function approveMcpRemote(serverUrl: string, callbackPort: number, clientMetadataUrl?: string) {
  const run = startMcpRemote(serverUrl, { callbackPort, ...(clientMetadataUrl !== undefined ? { clientMetadataUrl } : {}) });
  runs.push(run);
  const authorizationUrl = await run.authorizationUrl();
  let verified: string | null = null;
  let name: string | null = null;
  await decideInChromium(authorizationUrl.href, "approve", {
    landsOn: (url) => url.href.startsWith(mcpRemoteRedirectUri(callbackPort)),
    check: async (page) => {
      name = await page.locator("bdi.client-name").textContent();
      verified = (await page.locator("p.verified").count()) === 0 ? null : await page.locator("p.verified").textContent();
    },
  });
  const client = await run.connected.catch((error: unknown) => {
    throw new Error(`mcp-remote did not connect: ${String(error)}\n${run.log()}`);
  });
  return { run, client, authorizationUrl, consent: { name, verified } };
}

describe("mcp-remote completes the owner flow under either loopback name (issue 19 item 3)", () => {
  it.each(["localhost", "127.0.0.1"])("at http://%s:<owner port>/mcp", async (host) => {
    const origin = `http://${host}:${ownerPort()}`;
    const callbackPort = await freePort();
    const githubBefore = stack.standInRequests.length;
    const { client, authorizationUrl, consent } = await approveMcpRemote(`${origin}/mcp`, callbackPort);
    // Discovered under the address it was given: the authorization endpoint and the resource it asked for.
    expect(authorizationUrl.origin).toBe(origin);
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${origin}/mcp`);
    // Dynamically registered (an `oc_` client id), PKCE S256, its own loopback callback as redirect URI.
    expect(authorizationUrl.searchParams.get("client_id")).toMatch(/^oc_/);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorizationUrl.searchParams.get("redirect_uri")).toBe(mcpRemoteRedirectUri(callbackPort));
    // The owner's click went through the stand-in GitHub (authorize, the gateway's code exchange, /user).
    expect(stack.standInRequests.slice(githubBefore)).toEqual(expect.arrayContaining(["GET /login/oauth/authorize", "POST /login/oauth/access_token", "GET /user"]));
    expect(consent.verified).toBeNull();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...OWNER_TOOLS].sort());
    const listed = await client.callTool({ name: "owner_list_contacts", arguments: { include_tests: true } });
    expect(listed.isError ?? false).toBe(false);
    expect(listed.structuredContent).toMatchObject({ status: "ok" });
  });
});

describe("mcp-remote identified by its Client ID Metadata Document (issue 19 item 6)", () => {
  it("presents the https URL as client_id, the gateway fetches it from the loopback stand-in, and the page shows the host as verified", async () => {
    const callbackPort = await freePort();
    const clientId = `${DOCUMENT_ORIGIN}/oauth/client-metadata.json`;
    documents.answers.set("/oauth/client-metadata.json", {
      status: 200,
      headers: { "Cache-Control": "max-age=60" },
      body: documentFor(clientId, mcpRemoteRedirectUri(callbackPort)),
    });
    const { client, authorizationUrl, consent } = await approveMcpRemote(`http://127.0.0.1:${ownerPort()}/mcp`, callbackPort, clientId);
    // No registration: the client_id is the document's URL.
    expect(authorizationUrl.searchParams.get("client_id")).toBe(clientId);
    expect(consent.name).toBe(DOCUMENT_NAME);
    expect(consent.verified).toContain("Verified: mcp-remote.example");
    expect(documents.requested).toContain("/oauth/client-metadata.json");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("owner_list_contacts");
  });
});

describe("documents the gateway refuses, fetched for real over loopback (06 §3.7)", () => {
  const REDIRECT = "http://127.0.0.1:33418/callback";

  async function authorizePage(path: string): Promise<{ status: number; text: string }> {
    const verifier = randomBytes(48).toString("base64url");
    const url = new URL(`${stack.ownerOrigin}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: `${DOCUMENT_ORIGIN}${path}`,
      redirect_uri: REDIRECT,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    }).toString();
    const response = await fetch(url, { redirect: "manual" });
    return { status: response.status, text: await response.text() };
  }

  it("a client_id that differs, a body over 5 KiB, no answer within 3 s, a redirect", async () => {
    documents.answers.set("/bad/other-id.json", { status: 200, body: documentFor(`${DOCUMENT_ORIGIN}/bad/someone-else.json`, REDIRECT) });
    documents.answers.set("/bad/large.json", { status: 200, body: documentFor(`${DOCUMENT_ORIGIN}/bad/large.json`, REDIRECT, { padding: "x".repeat(6000) }) });
    documents.answers.set("/bad/slow.json", "never");
    documents.answers.set("/bad/redirect.json", { status: 302, headers: { Location: `${documents.origin}/bad/redirect-target.json` }, body: "" });
    documents.answers.set("/bad/redirect-target.json", { status: 200, body: documentFor(`${DOCUMENT_ORIGIN}/bad/redirect.json`, REDIRECT) });

    const cases: Array<[string, string]> = [
      ["/bad/other-id.json", "Its client_id is not exactly the URL it was fetched from."],
      ["/bad/large.json", "It is larger than 5 KiB."],
      ["/bad/slow.json", "It could not be fetched within 3 seconds."],
      ["/bad/redirect.json", "Its URL answered with a redirect; redirects are not followed."],
    ];
    for (const [path, problem] of cases) {
      const page = await authorizePage(path);
      expect(page.status, path).toBe(400);
      expect(page.text, path).toContain("The client_id names a client metadata document that cannot be used.");
      expect(page.text, path).toContain(problem);
    }
    expect(documents.requested).not.toContain("/bad/redirect-target.json");
  });
});
