/**
 * The owner deployment's test configuration (06 §1, 00 §7), shared by the
 * split topology (Node side: the auxiliary Workers' variables and secrets) and
 * the owner suites (inside workerd). Plain constants only, so both sides can
 * import it. Test-only values: the signing key below signs nothing real.
 */

export const OWNER_ORIGIN = "https://owner.magnt.ru";
export const OWNER_HOST = "owner.magnt.ru";
export const OWNER_AUDIENCE = `${OWNER_ORIGIN}/mcp`;
export const OWNER_GITHUB_ID = "583231";
/** Base64url of 32 fixed bytes (test only). */
export const OWNER_TOKEN_SIGNING_KEY = "c3BsaXQtb3duZXItdGVzdC1zaWduaW5nLWtleS0zMmI";
export const GITHUB_CLIENT_ID = "Iv1.splitclientid";
export const GITHUB_CLIENT_SECRET = "CANARYsplitgithubclientsecret01";
/** The loopback stand-in GitHub (00 §7: only loopback `http` overrides are accepted). */
export const GITHUB_STAND_IN_ORIGIN = "http://127.0.0.1:8790";
export const OWNER_REDIRECT_ORIGINS = "https://claude.ai";

/** Flags and secrets core and the owner gateway share (06 §1). */
export const OWNER_SHARED_VARS = {
  OWNER_MCP_ENABLED: "true",
  OWNER_MCP_WRITE_ENABLED: "true",
  OWNER_ORIGIN,
  OWNER_GITHUB_ID,
  OWNER_TOKEN_SIGNING_KEY,
} as const;

/** The owner gateway's own variables and secrets (wrangler.owner.jsonc plus the secrets of 00 §7). */
export const OWNER_GATEWAY_VARS = {
  ...OWNER_SHARED_VARS,
  ALLOWED_HOSTS: OWNER_HOST,
  OWNER_REDIRECT_ORIGINS,
  GITHUB_CLIENT_ID,
  GITHUB_CLIENT_SECRET,
  GITHUB_OAUTH_ORIGIN: GITHUB_STAND_IN_ORIGIN,
  GITHUB_API_ORIGIN: GITHUB_STAND_IN_ORIGIN,
} as const;

/**
 * How the stand-in GitHub knows who signs in: the test plays the browser on
 * GitHub's authorize page and picks the code, `ghcode.<numeric id>.<login>.<nonce>`.
 */
export function githubCode(id: number, login: string): string {
  return `ghcode.${id}.${login}.${crypto.randomUUID()}`;
}
