/**
 * The official TypeScript MCP client's own OAuth flow
 * (`@modelcontextprotocol/client` 2.4.0) as the owner's client of the e2e
 * suites (issue 19 item 5b): an `OAuthClientProvider` handed to the
 * Streamable HTTP transport, which on the owner gateway's 401 runs `auth()`
 * itself — discovery, dynamic registration, PKCE, the authorization URL —;
 * the host only opens that URL (here: headless Chromium, the owner clicking)
 * and gives the callback to `finishAuth`, which exchanges the code. A 403
 * `insufficient_scope` makes the transport re-authorize with the union of the
 * scopes through the same provider (step-up, SEP-2350); a 401 for a token
 * the gateway no longer accepts makes it refresh with its refresh token and
 * retry. Nothing here mints, exchanges or refreshes a token by hand.
 *
 * What the host does, as a desktop client would: keep one session in memory
 * (the provider), check the callback's `state` against the authorization
 * URL's (the SDK leaves CSRF protection to the host), and retry the one
 * request that needed the owner's consent.
 */
import {
  auth,
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type CallToolResult,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";

/** One HTTP request the client made (MCP or OAuth), as the client saw the answer. */
export interface ClientExchange {
  readonly method: string;
  /** The path, e.g. `/mcp`, `/oauth/token`. */
  readonly path: string;
  readonly status: number;
  /** `grant_type` of a token request. */
  readonly grantType: string | null;
  readonly wwwAuthenticate: string | null;
}

/**
 * The browser step: opens `authorizationUrl`, lets the owner decide and
 * returns the address the browser finally landed on (the redirect URI with
 * `code` or `error`).
 */
export type Consent = (authorizationUrl: URL) => Promise<URL>;

/** An in-memory `OAuthClientProvider`: one session, nothing persisted, the browser step recorded for the host. */
export class InMemoryOAuthProvider implements OAuthClientProvider {
  /** Every authorization URL the SDK asked the host to open, oldest first. */
  readonly authorizationUrls: URL[] = [];
  private information: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(
    private readonly redirectUri: string,
    private readonly clientName: string,
  ) {}

  get redirectUrl(): string {
    return this.redirectUri;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    return randomBytes(16).toString("base64url");
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.information;
  }

  saveClientInformation(information: StoredOAuthClientInformation): void {
    this.information = information;
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrls.push(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier saved: the SDK never started an authorization");
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all" || scope === "client") this.information = undefined;
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }

  /**
   * Makes the stored access token one the gateway refuses — one character of
   * its MAC changed —, as an expired one is refused (the same verification,
   * the same 401 `invalid_token`; the gateway's 1 h lifetime is fixed, so a
   * test cannot wait for it). The refresh token stays as issued.
   */
  spoilAccessToken(): string {
    if (this.saved === undefined) throw new Error("no tokens saved yet");
    const token = this.saved.access_token;
    const at = token.lastIndexOf(".") + 1;
    const spoiled = `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;
    this.saved = { ...this.saved, access_token: spoiled };
    return spoiled;
  }
}

export interface OAuthSession {
  readonly provider: InMemoryOAuthProvider;
  /** Every request of the client so far (MCP and OAuth), oldest first. */
  readonly exchanges: readonly ClientExchange[];
  /**
   * The MCP client, connected through the whole flow: the 401, the SDK's
   * `auth()` (registration, PKCE, authorization URL), `consent`, `finishAuth`
   * with the callback, and the connect again.
   */
  connect(): Promise<Client>;
  /**
   * `tools/call` on the connected client. When the SDK stopped for the
   * owner's consent (a step-up after a 403 `insufficient_scope`), runs
   * `consent` on the URL it produced, `finishAuth`, and calls once more.
   */
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** `fetch` that records each request of the client (`path` only: tokens travel in bodies and headers, never in these records). */
function recordingFetch(exchanges: ClientExchange[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    const grantType = path === "/oauth/token" ? new URLSearchParams(await request.clone().text()).get("grant_type") : null;
    const response = await fetch(request);
    exchanges.push({
      method: request.method,
      path,
      status: response.status,
      grantType,
      wwwAuthenticate: response.headers.get("www-authenticate"),
    });
    return response;
  };
}

/**
 * `auth()` called by the host for `scope` (as a client does to ask for a
 * narrower or wider grant than the server's challenge names): the SDK
 * discovers, registers when the provider holds no client yet and produces
 * the authorization URL; after `consent`, `auth()` with the callback's code
 * and `iss` exchanges it. The tokens end in the provider.
 */
export async function authorizeWithScope(serverUrl: URL, provider: InMemoryOAuthProvider, consent: Consent, scope: string): Promise<StoredOAuthTokens> {
  if ((await auth(provider, { serverUrl, scope })) !== "REDIRECT") throw new Error("auth() did not ask for the owner's consent");
  const asked = provider.authorizationUrls.at(-1)!;
  const landed = await consent(asked);
  checkState(asked, landed);
  const code = landed.searchParams.get("code");
  if (code === null) throw new Error(`the authorization was not granted: ${landed.search}`);
  const iss = landed.searchParams.get("iss");
  if ((await auth(provider, { serverUrl, authorizationCode: code, ...(iss !== null ? { iss } : {}) })) !== "AUTHORIZED") throw new Error("auth() did not exchange the code");
  return provider.tokens()!;
}

/** The SDK leaves `state` to the host: the callback must carry the one its authorization sent. */
function checkState(asked: URL, landed: URL): void {
  if (landed.searchParams.get("state") !== asked.searchParams.get("state")) {
    throw new Error(`the callback's state ${landed.searchParams.get("state")} is not the authorization's ${asked.searchParams.get("state")}`);
  }
}

/**
 * A session of the official MCP client with its own OAuth flow at
 * `serverUrl`. `onInsufficientScope: "throw"` surfaces a 403 as the SDK's
 * `InsufficientScopeError` instead of re-authorizing.
 */
export function oauthSession(
  serverUrl: URL,
  provider: InMemoryOAuthProvider,
  consent: Consent,
  options: { onInsufficientScope?: "reauthorize" | "throw" } = {},
): OAuthSession {
  const exchanges: ClientExchange[] = [];
  const fetchFn = recordingFetch(exchanges);
  let transport: StreamableHTTPClientTransport | undefined;
  let client: Client | undefined;

  const open = async (): Promise<Client> => {
    transport = new StreamableHTTPClientTransport(serverUrl, {
      authProvider: provider,
      fetch: fetchFn,
      ...(options.onInsufficientScope !== undefined ? { onInsufficientScope: options.onInsufficientScope } : {}),
    });
    client = new Client({ name: "e2e-owner-oauth", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    return client;
  };

  /** The owner's consent for the URL the SDK produced last, then `finishAuth` with the callback. */
  const authorize = async (): Promise<void> => {
    const asked = provider.authorizationUrls.at(-1);
    if (asked === undefined || transport === undefined) throw new Error("the SDK asked for no authorization");
    const landed = await consent(asked);
    checkState(asked, landed);
    await transport.finishAuth(landed.searchParams);
  };

  return {
    provider,
    exchanges,
    async connect() {
      try {
        return await open();
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
      }
      await authorize();
      return open();
    },
    async callTool(name, args) {
      if (client === undefined) throw new Error("connect() first");
      try {
        return (await client.callTool({ name, arguments: args })) as CallToolResult;
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
      }
      await authorize();
      return (await client.callTool({ name, arguments: args })) as CallToolResult;
    },
    async close() {
      await client?.close();
    },
  };
}
