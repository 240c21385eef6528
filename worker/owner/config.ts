/**
 * The owner's configuration (06 §1, 00 §6–§7), parsed once per request into a
 * value every other owner module trusts.
 *
 * Threat model: a missing, truncated or mistyped secret must never weaken the
 * owner check. So parsing fails closed: `OWNER_MCP_ENABLED` on with any owner
 * secret missing or malformed is `misconfigured` (503 on every owner path, no
 * token issued or accepted), never a default. A GitHub origin override can
 * only point at a loopback stand-in (the client secret and the user's GitHub
 * token travel to it), reusing the one rule of `edge/outbound.ts`.
 *
 * The same loopback-only rule covers `OWNER_CLIENT_METADATA_FETCH_ORIGIN`, the
 * stand-in that receives the client metadata documents of 06 §3.7.
 *
 * The issuer and audience come from `OWNER_ORIGIN`, never from a request. One
 * exception, for this machine only: when `OWNER_ORIGIN` itself is a loopback
 * `http` origin, the same port under the other loopback names (`localhost`,
 * `127.0.0.1`, `[::1]`) is the same server, and a request addressed to one of
 * them is answered under that name (`addressedBy`), because a client compares
 * the `resource` and the issuer with the address it used (06 §3.1). Any other
 * host — and every host in production, where `OWNER_ORIGIN` is `https` — is
 * answered under `OWNER_ORIGIN` as before, whatever the `Host` header says.
 *
 * The result never carries a reason naming which secret is wrong: the 503 and
 * the telemetry say only `owner_misconfigured`; the operator checks the list in
 * `docs/owner-activation.md`.
 */
import type { Env } from "../config/env";
import { isOn } from "../config/flags";
import { isLoopbackHttpOrigin, LOOPBACK_HOSTS } from "../contracts/origins";
import { loopbackOverride } from "../edge/outbound";
import { decodeBase64urlKey } from "../lib/base64url";

/** The owner secrets and variables that `Env` (shared by every deployable) does not name yet. */
export interface OwnerEnv extends Env {
  OWNER_GITHUB_ID?: string;
  OWNER_TOKEN_SIGNING_KEY?: string;
  OWNER_TOKEN_EPOCH?: string;
  GITHUB_CLIENT_ID?: string;
  GITHUB_CLIENT_SECRET?: string;
  GITHUB_OAUTH_ORIGIN?: string;
  GITHUB_API_ORIGIN?: string;
  /** Loopback stand-in that receives every client metadata document fetch (tests and local runs only, 06 §3.7). */
  OWNER_CLIENT_METADATA_FETCH_ORIGIN?: string;
}

/** Which Worker reads the configuration: core needs no GitHub secrets (06 §1). */
export type OwnerRole = "gateway" | "core";

export const DEFAULT_OWNER_ORIGIN = "https://owner.magnt.ru";
export const DEFAULT_GITHUB_OAUTH_ORIGIN = "https://github.com";
export const DEFAULT_GITHUB_API_ORIGIN = "https://api.github.com";

/** Minimum decoded length of `OWNER_TOKEN_SIGNING_KEY` (06 §1). */
export const MIN_SIGNING_KEY_BYTES = 32;

const GITHUB_ID_PATTERN = /^[1-9][0-9]{0,19}$/;
const EPOCH_PATTERN = /^[1-9][0-9]{0,8}$/;

/** GitHub linking settings; present only on the owner gateway. */
export interface GithubConfig {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Default `https://github.com` or a loopback stand-in. */
  readonly oauthOrigin: string;
  /** Default `https://api.github.com` or a loopback stand-in. */
  readonly apiOrigin: string;
}

/** Client ID Metadata Documents (06 §3.7); present only on the owner gateway. */
export interface ClientMetadataConfig {
  /** `OWNER_CLIENT_METADATA_ORIGINS`: exact `https` origins whose URLs may be a `client_id`. Empty: none is fetched. */
  readonly origins: ReadonlySet<string>;
  /** A loopback stand-in that receives every document fetch instead of the URL's own origin; null in production. */
  readonly fetchOrigin: string | null;
}

export interface OwnerConfig {
  /**
   * The issuer: `OWNER_ORIGIN`, or — locally, after `addressedBy` — the
   * loopback name of it that the request used.
   */
  readonly ownerOrigin: string;
  /** `{ownerOrigin}/mcp`, the audience and `resource` tokens are minted for (06 §3.1). */
  readonly audience: string;
  /**
   * Every origin this server is: `OWNER_ORIGIN` alone, or, when it is a
   * loopback `http` origin, its port under each loopback name. A token or
   * code whose `iss` (and `aud` under it) is any of them verifies: the names
   * reach one process holding one key on the owner's machine (06 §3.6).
   */
  readonly origins: ReadonlySet<string>;
  /** The pinned numeric GitHub id, as digits. */
  readonly githubId: string;
  /** The decoded signing secret (input key material of HKDF, 06 §3.2). */
  readonly signingKey: Uint8Array;
  readonly epoch: number;
  /** `OWNER_MCP_WRITE_ENABLED` of this Worker. */
  readonly writeEnabled: boolean;
  /** Exact `https` origins allowed for redirect URIs besides loopback (00 §7). */
  readonly redirectOrigins: ReadonlySet<string>;
  /** Null on core. */
  readonly github: GithubConfig | null;
  /** No origin and no stand-in on core. */
  readonly clientMetadata: ClientMetadataConfig;
}

export type OwnerState =
  | { readonly kind: "disabled" }
  | { readonly kind: "misconfigured" }
  | { readonly kind: "ready"; readonly config: OwnerConfig };

/**
 * The owner state of this Worker: `disabled` unless `OWNER_MCP_ENABLED` is
 * exactly "true"; then `ready` only when every secret of `role` parses.
 */
export function resolveOwner(env: OwnerEnv, role: OwnerRole): OwnerState {
  if (!isOn(env, "OWNER_MCP_ENABLED")) return { kind: "disabled" };
  const config = parseOwnerConfig(env, role);
  return config === null ? { kind: "misconfigured" } : { kind: "ready", config };
}

/** Parses the configuration; null when anything is missing or malformed. */
export function parseOwnerConfig(env: OwnerEnv, role: OwnerRole): OwnerConfig | null {
  const ownerOrigin = parseOwnerOrigin(env.OWNER_ORIGIN);
  const githubId = env.OWNER_GITHUB_ID;
  const signingKey = decodeSigningKey(env.OWNER_TOKEN_SIGNING_KEY);
  const epoch = parseEpoch(env.OWNER_TOKEN_EPOCH);
  if (ownerOrigin === null || githubId === undefined || !GITHUB_ID_PATTERN.test(githubId)) return null;
  if (signingKey === null || epoch === null) return null;

  let github: GithubConfig | null = null;
  let clientMetadata: ClientMetadataConfig = NO_CLIENT_METADATA;
  if (role === "gateway") {
    github = parseGithubConfig(env);
    const parsed = parseClientMetadataConfig(env);
    if (github === null || parsed === null) return null;
    clientMetadata = parsed;
  }
  return {
    ownerOrigin,
    audience: `${ownerOrigin}/mcp`,
    origins: ownerOrigins(ownerOrigin),
    githubId,
    signingKey,
    epoch,
    writeEnabled: isOn(env, "OWNER_MCP_WRITE_ENABLED"),
    redirectOrigins: parseHttpsOrigins(env.OWNER_REDIRECT_ORIGINS),
    github,
    clientMetadata,
  };
}

const NO_CLIENT_METADATA: ClientMetadataConfig = { origins: new Set(), fetchOrigin: null };

/**
 * The allowed document origins (a typo narrows the list, as for redirect
 * origins) and the stand-in: absent or empty → the document's own origin;
 * anything but a loopback `http` origin → null (misconfigured), so a typo can
 * never send the gateway's requests to a third-party host.
 */
function parseClientMetadataConfig(env: OwnerEnv): ClientMetadataConfig | null {
  const origins = parseHttpsOrigins(env.OWNER_CLIENT_METADATA_ORIGINS);
  const configured = env.OWNER_CLIENT_METADATA_FETCH_ORIGIN;
  if (configured === undefined || configured === "") return { origins, fetchOrigin: null };
  return isLoopbackHttpOrigin(configured) ? { origins, fetchOrigin: configured } : null;
}

/**
 * `OWNER_ORIGIN` alone; or, for a loopback `http` origin, the same scheme and
 * port under every loopback name (`http://localhost:8789` → also
 * `http://127.0.0.1:8789` and `http://[::1]:8789`).
 */
function ownerOrigins(ownerOrigin: string): ReadonlySet<string> {
  const url = new URL(ownerOrigin);
  if (url.protocol !== "http:" || !(LOOPBACK_HOSTS as readonly string[]).includes(url.hostname)) return new Set([ownerOrigin]);
  const port = url.port === "" ? "" : `:${url.port}`;
  return new Set(LOOPBACK_HOSTS.map((host) => `http://${host}${port}`));
}

/**
 * `config` as the server that `requestUrl` addressed: when the URL's origin is
 * one of `config.origins` (only ever another loopback name of a loopback
 * `OWNER_ORIGIN`), the issuer and audience are that origin's; otherwise
 * `config` unchanged. Every owner answer is built from the result, so the
 * metadata, the challenges, `iss`, the GitHub callback and the tokens all name
 * the address the client used.
 */
export function addressedBy(config: OwnerConfig, requestUrl: string): OwnerConfig {
  let origin: string;
  try {
    origin = new URL(requestUrl).origin;
  } catch {
    return config;
  }
  if (origin === config.ownerOrigin || !config.origins.has(origin)) return config;
  return Object.assign({}, config, { ownerOrigin: origin, audience: `${origin}/mcp` });
}

/** Whether `value` is this server's MCP endpoint under any of its origins (the audiences a token may carry). */
export function isOwnAudience(config: OwnerConfig, value: string): boolean {
  return value.endsWith("/mcp") && config.origins.has(value.slice(0, -"/mcp".length));
}

function parseGithubConfig(env: OwnerEnv): GithubConfig | null {
  const clientId = env.GITHUB_CLIENT_ID;
  const clientSecret = env.GITHUB_CLIENT_SECRET;
  if (clientId === undefined || clientId === "" || clientSecret === undefined || clientSecret === "") return null;
  const oauthOrigin = loopbackOverride(env.GITHUB_OAUTH_ORIGIN, DEFAULT_GITHUB_OAUTH_ORIGIN);
  const apiOrigin = loopbackOverride(env.GITHUB_API_ORIGIN, DEFAULT_GITHUB_API_ORIGIN);
  if (oauthOrigin === null || apiOrigin === null) return null;
  return { clientId, clientSecret, oauthOrigin, apiOrigin };
}

/**
 * `OWNER_ORIGIN` (absent → production default). A trailing slash is tolerated
 * as for `PUBLIC_ORIGIN`; anything that is not a bare http(s) origin is null,
 * because the issuer and audience are built from it.
 */
function parseOwnerOrigin(value: string | undefined): string | null {
  const configured = (value ?? "").trim().replace(/\/+$/, "");
  if (configured === "") return DEFAULT_OWNER_ORIGIN;
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return url.origin === configured ? configured : null;
}

/** Base64url (URL-safe alphabet only) of at least 32 bytes, else null (the one key-secret rule, lib/base64url.ts). */
export function decodeSigningKey(value: string | undefined): Uint8Array | null {
  return decodeBase64urlKey(value, MIN_SIGNING_KEY_BYTES);
}

/** Absent → 1; otherwise a positive integer of at most nine digits, else null. */
function parseEpoch(value: string | undefined): number | null {
  if (value === undefined) return 1;
  return EPOCH_PATTERN.test(value) ? Number(value) : null;
}

/**
 * `OWNER_REDIRECT_ORIGINS`, `OWNER_CLIENT_METADATA_ORIGINS`: comma-separated
 * `https` origins. An entry that does not parse as a bare origin (path, query,
 * fragment, user info) is ignored, so a typo narrows the list instead of
 * widening it (06 §3.2).
 */
export function parseHttpsOrigins(value: string | undefined): ReadonlySet<string> {
  const origins = new Set<string>();
  for (const raw of (value ?? "").split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      continue;
    }
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
    if (url.protocol === "https:" && bare && (entry === url.origin || entry === `${url.origin}/`)) origins.add(url.origin);
  }
  return origins;
}
