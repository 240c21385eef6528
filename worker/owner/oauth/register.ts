/**
 * `POST /oauth/register` (06 §3.2): stateless dynamic client registration
 * (RFC 7591). The client id *is* the registration: a signed object holding the
 * redirect URIs and the name, so nothing is stored and a stranger can register
 * as often as he likes without consuming anything.
 *
 * Threat model: registration is open to the internet, so it decides nothing
 * about trust — it only pins the redirect URIs to the allowed origins (checked
 * again at authorization), removes from the name every character that could
 * make the consent page say something it does not (client-name.ts), and caps
 * every size, so a client id stays ≤ 2048 characters and a consent page stays
 * readable.
 */
import { jsonResponse } from "../../edge/responses";
import type { OwnerEnv } from "../config";
import { ANY_ORIGIN, bodyText, gated, oauthJsonError, type OwnerAnswer, type OwnerDeps, type OwnerInput } from "../http";
import { CLIENT_NAME_MAX, clientDisplayName } from "./client-name";
import type { OwnerKeys } from "./keys";
import { CLIENT_ID_MAX, issueClientId } from "./objects";
import { isAllowedRedirectUri, REDIRECT_URIS_MAX } from "./redirect-uris";
import { seconds } from "./signed";

/** The grant and response types a client may name, registered or described by a metadata document (client-metadata.ts). */
export const SUPPORTED_GRANT_TYPES = ["authorization_code", "refresh_token"];
export const SUPPORTED_RESPONSE_TYPES = ["code"];

type RegistrationError = "invalid_redirect_uri" | "invalid_client_metadata";

export type RegistrationDecision =
  | { readonly kind: "registered"; readonly clientId: string; readonly issuedAt: number; readonly redirectUris: readonly string[]; readonly clientName: string }
  | { readonly kind: "refused"; readonly error: RegistrationError; readonly description: string };

const refuse = (error: RegistrationError, description: string): RegistrationDecision => ({ kind: "refused", error, description });

/** Decides a registration from the raw JSON text. */
export async function decideRegistration(
  text: string,
  allowedOrigins: ReadonlySet<string>,
  keys: OwnerKeys,
  nowMs: number,
): Promise<RegistrationDecision> {
  let metadata: unknown;
  try {
    metadata = JSON.parse(text);
  } catch {
    return refuse("invalid_client_metadata", "The body must be a JSON object.");
  }
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
    return refuse("invalid_client_metadata", "The body must be a JSON object.");
  }
  const fields = metadata as Record<string, unknown>;

  const uris = fields.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > REDIRECT_URIS_MAX) {
    return refuse("invalid_redirect_uri", `redirect_uris must list 1 to ${REDIRECT_URIS_MAX} URIs.`);
  }
  if (!uris.every((uri): uri is string => typeof uri === "string" && isAllowedRedirectUri(uri, allowedOrigins))) {
    return refuse(
      "invalid_redirect_uri",
      "Each redirect URI must be absolute, at most 512 characters, without a fragment, and use an allowed https origin or a loopback http address.",
    );
  }

  const name = fields.client_name;
  if (name !== undefined && typeof name !== "string") return refuse("invalid_client_metadata", "client_name must be a string.");
  // Display controls are removed, not refused (docs/decisions.md); the answer echoes the stored name.
  const clientName = clientDisplayName(name ?? "");
  if ([...clientName].length > CLIENT_NAME_MAX) {
    return refuse("invalid_client_metadata", `client_name must be at most ${CLIENT_NAME_MAX} characters.`);
  }

  const method = fields.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") {
    return refuse("invalid_client_metadata", "token_endpoint_auth_method must be none.");
  }
  if (!isSubsetOf(fields.grant_types, SUPPORTED_GRANT_TYPES)) {
    return refuse("invalid_client_metadata", "grant_types must be a subset of authorization_code and refresh_token.");
  }
  if (!isSubsetOf(fields.response_types, SUPPORTED_RESPONSE_TYPES)) {
    return refuse("invalid_client_metadata", "response_types must be a subset of code.");
  }

  const clientId = await issueClientId(keys, uris, clientName, nowMs);
  if (clientId.length > CLIENT_ID_MAX) {
    return refuse("invalid_client_metadata", `The registration is too large: client_id would exceed ${CLIENT_ID_MAX} characters.`);
  }
  return { kind: "registered", clientId, issuedAt: seconds(nowMs), redirectUris: uris, clientName };
}

/** Absent, or an array of strings all in `supported`. */
export function isSubsetOf(value: unknown, supported: readonly string[]): boolean {
  if (value === undefined) return true;
  return Array.isArray(value) && value.every((item) => typeof item === "string" && supported.includes(item));
}

export function renderRegistration(decision: RegistrationDecision): Response {
  if (decision.kind === "refused") return oauthJsonError(400, decision.error, decision.description);
  return jsonResponse(
    201,
    {
      client_id: decision.clientId,
      client_id_issued_at: decision.issuedAt,
      redirect_uris: decision.redirectUris,
      client_name: decision.clientName,
      token_endpoint_auth_method: "none",
      grant_types: SUPPORTED_GRANT_TYPES,
      response_types: SUPPORTED_RESPONSE_TYPES,
    },
    ANY_ORIGIN,
  );
}

/** The route handler. */
export function serveRegister(input: OwnerInput, env: OwnerEnv, deps: OwnerDeps): Promise<OwnerAnswer> {
  return gated(input, env, "gateway", "register", deps, async ({ config, keys }) => {
    const decision = await decideRegistration(bodyText(input), config.redirectOrigins, keys, deps.now());
    return {
      response: renderRegistration(decision),
      outcome: decision.kind === "refused" ? "oauth_error" : null,
      step: "register",
    };
  });
}
