/**
 * A host serving Client ID Metadata Documents (06 §3.7) on the network seam
 * of `network.ts`: the loopback stand-in `OWNER_CLIENT_METADATA_FETCH_ORIGIN`
 * points at, or a client's own `https` host. Each request is recorded; the
 * test decides each answer, including the hostile ones — a redirect, a body
 * over the limit, and an answer that never comes (it waits for the caller's
 * abort signal, so the gateway's own time limit is what ends it).
 */
import { useFakeHost } from "./network";

export type DocumentAnswer =
  | { readonly json: unknown; readonly status?: number; readonly headers?: Record<string, string> }
  | { readonly text: string; readonly status?: number; readonly headers?: Record<string, string> }
  | { readonly redirect: string }
  | "never";

export interface DocumentHost {
  /** Every request that reached the host, in order. */
  readonly requests: Request[];
  /** `path` (with its query) → what it answers; anything else is 404. */
  readonly documents: Map<string, DocumentAnswer>;
}

export function useDocumentHost(host: string): DocumentHost {
  const served: DocumentHost = { requests: [], documents: new Map() };
  useFakeHost(host, async (request) => {
    served.requests.push(request.clone());
    const url = new URL(request.url);
    const answer = served.documents.get(url.pathname + url.search);
    if (answer === undefined) return new Response("Not Found", { status: 404 });
    if (answer === "never") {
      return new Promise<Response>((_, reject) => {
        request.signal.addEventListener("abort", () => reject(request.signal.reason));
      });
    }
    if ("redirect" in answer) return new Response(null, { status: 302, headers: { Location: answer.redirect } });
    const body = "json" in answer ? JSON.stringify(answer.json) : answer.text;
    return new Response(body, { status: answer.status ?? 200, headers: { "Content-Type": "application/json", ...answer.headers } });
  });
  return served;
}

/** A valid document for `clientId` (a public client with a loopback redirect), with `fields` over it. */
export function clientDocument(clientId: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: "Metadata client",
    redirect_uris: ["http://127.0.0.1:33418/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...fields,
  };
}
