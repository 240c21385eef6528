/**
 * Who a `client_id` is (06 §3.2, §3.7), the one place that knows the two
 * kinds: a registered client (`oc_` + the signed registration, verified with
 * the client key) and a Client ID Metadata Document URL on an origin the
 * owner listed (fetched and checked by client-metadata.ts). Anything else is
 * no client here.
 *
 * The authorization endpoint resolves a client in full (`resolveClient`: a
 * document is fetched); the token endpoint only asks whether the id still
 * names a client (`isKnownClient`: no fetch). A code and a refresh token are
 * bound to the hash of the exact `client_id` the owner approved, so what the
 * token endpoint must still refuse is an id that stopped being acceptable —
 * a registration signed with a rotated key, a document origin the owner
 * removed from the list — and neither needs the network.
 */
import type { OwnerConfig } from "../config";
import { loadClientDocument, metadataDocumentUrl, type DocumentProblem } from "./client-metadata";
import { clientDisplayName } from "./client-name";
import type { OwnerKeys } from "./keys";
import { verifyClientId } from "./objects";

/** What the authorization endpoint and the consent page know of a client. */
export interface ClientIdentity {
  readonly redirectUris: readonly string[];
  /** The name the client chose for itself, cleaned (client-name.ts). */
  readonly clientName: string;
  /** The host that served the client's metadata document; null for a registered client. */
  readonly verifiedHost: string | null;
}

export type ClientResolution =
  | { readonly ok: true; readonly client: ClientIdentity }
  | { readonly ok: false; readonly problem: "invalid_client" }
  | { readonly ok: false; readonly problem: "invalid_client_metadata"; readonly detail: DocumentProblem };

/** Resolves `clientId` for an authorization request. */
export async function resolveClient(clientId: string, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<ClientResolution> {
  const documentUrl = metadataDocumentUrl(clientId, config.clientMetadata);
  if (documentUrl !== null) {
    const loaded = await loadClientDocument(documentUrl, config.clientMetadata, nowMs);
    if (!loaded.ok) return { ok: false, problem: "invalid_client_metadata", detail: loaded.problem };
    return { ok: true, client: Object.assign({}, loaded.document, { verifiedHost: documentUrl.host }) };
  }
  const registered = await verifyClientId(keys, clientId, nowMs);
  if (registered === null) return { ok: false, problem: "invalid_client" };
  // Cleaned again: a client id signed before the name rule never expires (client-name.ts).
  return { ok: true, client: { redirectUris: registered.redirect_uris, clientName: clientDisplayName(registered.client_name), verifiedHost: null } };
}

/** Whether `clientId` still names a client here (the token endpoint's check; nothing is fetched). */
export async function isKnownClient(clientId: string, config: OwnerConfig, keys: OwnerKeys, nowMs: number): Promise<boolean> {
  return metadataDocumentUrl(clientId, config.clientMetadata) !== null || (await verifyClientId(keys, clientId, nowMs)) !== null;
}
