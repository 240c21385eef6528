/**
 * Discovery documents of the owner host (06 §3.1): RFC 9728 protected-resource
 * metadata and RFC 8414 authorization-server metadata. Public by nature
 * (`Access-Control-Allow-Origin: *`), built only from `OWNER_ORIGIN` (locally:
 * the loopback name of it the request used, config.ts `addressedBy`), and
 * served only by the owner gateway — never listed on the public door.
 */
import { jsonResponse } from "../../edge/responses";
import type { OwnerConfig, OwnerEnv } from "../config";
import { ANY_ORIGIN, gated, type OwnerAnswer, type OwnerDeps, type OwnerInput } from "../http";
import { OWNER_SCOPES } from "./scopes";

export const RESOURCE_NAME = "MAGNT owner";

export function protectedResourceMetadata(ownerOrigin: string) {
  return {
    resource: `${ownerOrigin}/mcp`,
    authorization_servers: [ownerOrigin],
    scopes_supported: [...OWNER_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: RESOURCE_NAME,
  };
}

/** `client_id_metadata_document_supported` only while some origin is allowed to serve one (06 §3.7). */
export function authorizationServerMetadata(config: OwnerConfig) {
  const ownerOrigin = config.ownerOrigin;
  return {
    issuer: ownerOrigin,
    authorization_endpoint: `${ownerOrigin}/oauth/authorize`,
    token_endpoint: `${ownerOrigin}/oauth/token`,
    registration_endpoint: `${ownerOrigin}/oauth/register`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [...OWNER_SCOPES],
    authorization_response_iss_parameter_supported: true,
    ...(config.clientMetadata.origins.size > 0 ? { client_id_metadata_document_supported: true } : {}),
  };
}

/** `GET /.well-known/oauth-protected-resource` and `…/oauth-protected-resource/mcp`. */
export function serveProtectedResourceMetadata(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "metadata", deps, async ({ config }) => ({
    response: jsonResponse(200, protectedResourceMetadata(config.ownerOrigin), ANY_ORIGIN),
    outcome: null,
    step: "metadata",
  }));
}

/** `GET /.well-known/oauth-authorization-server`. */
export function serveAuthorizationServerMetadata(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "metadata", deps, async ({ config }) => ({
    response: jsonResponse(200, authorizationServerMetadata(config), ANY_ORIGIN),
    outcome: null,
    step: "metadata",
  }));
}

/** `OPTIONS /oauth/register` and `/oauth/token` (06 §2). */
export function serveOAuthPreflight(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "other", deps, async () => ({
    response: new Response(null, {
      status: 204,
      headers: Object.assign({}, ANY_ORIGIN, {
        "Access-Control-Allow-Methods": "POST, OPTIONS",
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Max-Age": "600",
        "Cache-Control": "no-store",
      }),
    }),
    outcome: null,
    step: "other",
  }));
}
