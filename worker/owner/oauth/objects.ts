/**
 * The six signed objects of 06 §3.2, each with its `typ`, key, payload shape
 * and lifetime, issued and verified here and nowhere else.
 *
 * Verification of a token (`verifyAccessToken`, `verifyRefreshToken`) checks
 * everything the token alone can prove: MAC with the token key, `alg`, `typ`,
 * `iss`, `aud`, `sub` = the pinned GitHub id, `epoch` = the current epoch,
 * `exp` > now, `iat` ≤ now + 60 s, and the exact claim set. Core and the owner
 * gateway run this same code with their own secrets (06 §5).
 *
 * Objects are minted under the issuer the request addressed and verified
 * against every origin of the server (`OwnerConfig.origins`): in production
 * that is `OWNER_ORIGIN` alone; locally, with a loopback `OWNER_ORIGIN`, a
 * token minted through `127.0.0.1` is accepted through `localhost` on the same
 * port — one process, one key, one owner (06 §3.6).
 */
import * as z from "zod";
import { isOwnAudience, type OwnerConfig } from "../config";
import { randomToken } from "./encoding";
import type { OwnerKeys } from "./keys";
import { numericDate, OBJECT_TYPES, seconds, signObject, verifyObject } from "./signed";

/** Lifetimes in seconds (06 §3.2). */
export const LIFETIME = {
  consent: 600,
  link: 600,
  code: 60,
  access: 3600,
  refresh: 30 * 24 * 3600,
  /** Absolute lifetime of a refresh family, counted from `fam_iat`. */
  family: 90 * 24 * 3600,
} as const;

/** Longest client id accepted anywhere, `oc_` included (06 §3.2). */
export const CLIENT_ID_MAX = 2048;
export const CLIENT_ID_PREFIX = "oc_";
/** How far in the future a token's `iat` may lie (06 §4). */
export const IAT_LEEWAY_SECONDS = 60;

// ---------------------------------------------------------------- client id

const clientPayload = z
  .object({
    redirect_uris: z.array(z.string()).min(1).max(5),
    client_name: z.string(),
    iat: numericDate,
    /** Random: two registrations with equal metadata are still two clients (codes and tokens bind to `cid`). */
    jti: z.string(),
  })
  .strict();
export type ClientRecord = z.infer<typeof clientPayload>;

export async function issueClientId(keys: OwnerKeys, redirectUris: readonly string[], clientName: string, nowMs: number): Promise<string> {
  const jws = await signObject(OBJECT_TYPES.client, keys.client, {
    redirect_uris: [...redirectUris],
    client_name: clientName,
    iat: seconds(nowMs),
    jti: randomToken(16),
  });
  return CLIENT_ID_PREFIX + jws;
}

/** The registration a client id carries; null for an over-long, foreign or forged id. */
export async function verifyClientId(keys: OwnerKeys, clientId: string, nowMs: number): Promise<ClientRecord | null> {
  if (clientId.length > CLIENT_ID_MAX || !clientId.startsWith(CLIENT_ID_PREFIX)) return null;
  return verifyObject(clientId.slice(CLIENT_ID_PREFIX.length), OBJECT_TYPES.client, keys.client, nowMs, clientPayload);
}

// ---------------------------------------------------------------- consent and link requests

/** The authorization request as validated at `GET /oauth/authorize`. */
const grantRequestFields = {
  /** Hash of the client id (as in the tokens). */
  cid: z.string(),
  redirect_uri: z.string(),
  code_challenge: z.string(),
  /** Canonical scope string the owner is asked to grant. */
  scope: z.string(),
  resource: z.string().nullable(),
  /** The client's `state`, echoed back; null when it sent none. */
  state: z.string().nullable(),
};
const grantRequest = z.object(grantRequestFields).strict();
export type GrantRequest = z.infer<typeof grantRequest>;

const consentPayload = z
  .object({ ...grantRequestFields, client_name: z.string(), nonce_hash: z.string(), iat: numericDate, exp: numericDate })
  .strict();
export type ConsentRequest = z.infer<typeof consentPayload>;

export function issueConsentRequest(
  keys: OwnerKeys,
  request: GrantRequest,
  clientName: string,
  nonceHash: string,
  nowMs: number,
): Promise<string> {
  const iat = seconds(nowMs);
  return signObject(
    OBJECT_TYPES.consent,
    keys.state,
    Object.assign({}, request, { client_name: clientName, nonce_hash: nonceHash, iat, exp: iat + LIFETIME.consent }),
  );
}

export function verifyConsentRequest(keys: OwnerKeys, value: string, nowMs: number): Promise<ConsentRequest | null> {
  return verifyObject(value, OBJECT_TYPES.consent, keys.state, nowMs, consentPayload);
}

const linkPayload = z.object({ ...grantRequestFields, nonce: z.string(), iat: numericDate, exp: numericDate }).strict();
export type LinkRequest = z.infer<typeof linkPayload>;

export function issueLinkRequest(keys: OwnerKeys, request: GrantRequest, nowMs: number): Promise<string> {
  const iat = seconds(nowMs);
  return signObject(OBJECT_TYPES.link, keys.state, Object.assign({}, request, { nonce: randomToken(), iat, exp: iat + LIFETIME.link }));
}

export function verifyLinkRequest(keys: OwnerKeys, value: string, nowMs: number): Promise<LinkRequest | null> {
  return verifyObject(value, OBJECT_TYPES.link, keys.state, nowMs, linkPayload);
}

// ---------------------------------------------------------------- authorization code

/** An `iss` naming this server under any of its origins. */
function ownIssuer(config: OwnerConfig) {
  return z.string().refine((issuer) => config.origins.has(issuer));
}

/** An `aud` naming this server's MCP endpoint under any of its origins. */
function ownAudience(config: OwnerConfig) {
  return z.string().refine((audience) => isOwnAudience(config, audience));
}

function codePayload(config: OwnerConfig) {
  return z
    .object({
      iss: ownIssuer(config),
      sub: z.string(),
      cid: z.string(),
      redirect_uri: z.string(),
      code_challenge: z.string(),
      scope: z.string(),
      resource: z.string().nullable(),
      epoch: z.number().int(),
      iat: numericDate,
      exp: numericDate,
      jti: z.string(),
    })
    .strict();
}
export type CodeClaims = z.infer<ReturnType<typeof codePayload>>;

export function issueCode(config: OwnerConfig, keys: OwnerKeys, link: LinkRequest, nowMs: number): Promise<string> {
  const iat = seconds(nowMs);
  const claims: CodeClaims = {
    iss: config.ownerOrigin,
    sub: config.githubId,
    cid: link.cid,
    redirect_uri: link.redirect_uri,
    code_challenge: link.code_challenge,
    scope: link.scope,
    resource: link.resource,
    epoch: config.epoch,
    iat,
    exp: iat + LIFETIME.code,
    jti: randomToken(),
  };
  return signObject(OBJECT_TYPES.code, keys.token, claims);
}

/** Signature, `typ`, issuer, expiry and shape; the endpoint checks the rest (06 §3.5). */
export function verifyCode(config: OwnerConfig, keys: OwnerKeys, code: string, nowMs: number): Promise<CodeClaims | null> {
  return verifyObject(code, OBJECT_TYPES.code, keys.token, nowMs, codePayload(config));
}

// ---------------------------------------------------------------- access and refresh tokens

function tokenFields(config: OwnerConfig, nowMs: number) {
  return {
    iss: ownIssuer(config),
    aud: ownAudience(config),
    sub: z.literal(config.githubId),
    scope: z.string(),
    epoch: z.literal(config.epoch),
    cid: z.string(),
    iat: numericDate.max(seconds(nowMs) + IAT_LEEWAY_SECONDS),
    exp: numericDate,
    jti: z.string(),
  };
}

function accessPayload(config: OwnerConfig, nowMs: number) {
  return z.object(tokenFields(config, nowMs)).strict();
}
function refreshPayload(config: OwnerConfig, nowMs: number) {
  return z.object(Object.assign({}, tokenFields(config, nowMs), { fam: z.string(), fam_iat: numericDate })).strict();
}

/** The verified claims of an access token (06 §3.2), as core compares them (06 §5). */
export type AccessClaims = z.infer<ReturnType<typeof accessPayload>>;
export type RefreshClaims = z.infer<ReturnType<typeof refreshPayload>>;

/** Null unless `token` is a currently valid owner access token (06 §4's list of checks). */
export function verifyAccessToken(config: OwnerConfig, keys: OwnerKeys, token: string, nowMs: number): Promise<AccessClaims | null> {
  return verifyObject(token, OBJECT_TYPES.access, keys.token, nowMs, accessPayload(config, nowMs));
}

export function verifyRefreshToken(config: OwnerConfig, keys: OwnerKeys, token: string, nowMs: number): Promise<RefreshClaims | null> {
  return verifyObject(token, OBJECT_TYPES.refresh, keys.token, nowMs, refreshPayload(config, nowMs));
}

export interface IssuedTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/**
 * A new access token with `scope` and a refresh token in family `fam` (new
 * when absent) with `refreshScope`. The refresh token's expiry never passes
 * the family's absolute end (`fam_iat` + 90 days).
 */
export async function issueTokens(
  config: OwnerConfig,
  keys: OwnerKeys,
  grant: { cid: string; scope: string; refreshScope: string; family: { fam: string; fam_iat: number } | null },
  nowMs: number,
): Promise<IssuedTokens> {
  const iat = seconds(nowMs);
  const base = { iss: config.ownerOrigin, aud: config.audience, sub: config.githubId, epoch: config.epoch, cid: grant.cid, iat };
  const family = grant.family ?? { fam: randomToken(), fam_iat: iat };
  const access: AccessClaims = Object.assign({}, base, { scope: grant.scope, exp: iat + LIFETIME.access, jti: randomToken() });
  const refresh: RefreshClaims = Object.assign({}, base, {
    scope: grant.refreshScope,
    exp: Math.min(iat + LIFETIME.refresh, family.fam_iat + LIFETIME.family),
    jti: randomToken(),
    fam: family.fam,
    fam_iat: family.fam_iat,
  });
  const [accessToken, refreshToken] = await Promise.all([
    signObject(OBJECT_TYPES.access, keys.token, access),
    signObject(OBJECT_TYPES.refresh, keys.token, refresh),
  ]);
  return { accessToken, refreshToken };
}
