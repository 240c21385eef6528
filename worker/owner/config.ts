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
 * The result never carries a reason naming which secret is wrong: the 503 and
 * the telemetry say only `owner_misconfigured`; the operator checks the list in
 * `docs/owner-activation.md`.
 */
import type { Env } from "../config/env";
import { isOn } from "../config/flags";
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

export interface OwnerConfig {
  /** `OWNER_ORIGIN` as an origin (issuer). */
  readonly ownerOrigin: string;
  /** `{OWNER_ORIGIN}/mcp`, the only audience and `resource` (06 §3.1). */
  readonly audience: string;
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
  if (role === "gateway") {
    github = parseGithubConfig(env);
    if (github === null) return null;
  }
  return {
    ownerOrigin,
    audience: `${ownerOrigin}/mcp`,
    githubId,
    signingKey,
    epoch,
    writeEnabled: isOn(env, "OWNER_MCP_WRITE_ENABLED"),
    redirectOrigins: parseRedirectOrigins(env.OWNER_REDIRECT_ORIGINS),
    github,
  };
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
 * `OWNER_REDIRECT_ORIGINS`: comma-separated `https` origins. An entry that does
 * not parse as a bare origin (path, query, fragment, user info) is ignored, so
 * a typo narrows the list instead of widening it (06 §3.2).
 */
export function parseRedirectOrigins(value: string | undefined): ReadonlySet<string> {
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
