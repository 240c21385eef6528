/**
 * The HTTP side of `/a2a` and `/a2a/` (04 §2): headers every answer carries,
 * the preflight and the route's rejections. `x-magnt-observer` is
 * added by the pipeline to every response.
 */
import { A2A_PROTOCOL_VERSION } from "../contracts/versions";
import type { DoorRequest, RouteRejections } from "../edge/pipeline";
import { jsonResponse, SERVICE_UNAVAILABLE_TEXT, TEXT_PLAIN } from "../edge/responses";
import { rpcErrors, type JsonRpcError } from "./errors";
import type { JsonRpcId } from "./envelope";
import { a2aUrls } from "./urls";

/** On every `/a2a` answer: public, credential-free, never cached (04 §2, 01 §8). */
const ENDPOINT_HEADERS = { "Access-Control-Allow-Origin": "*", "Cache-Control": "no-store" } as const;
/** JSON answers also state the protocol version they speak. */
const JSON_HEADERS = { ...ENDPOINT_HEADERS, "A2A-Version": A2A_PROTOCOL_VERSION } as const;

type RpcPayload = { readonly result: unknown } | { readonly error: JsonRpcError };

/** A JSON-RPC response; HTTP 200 except for the transport-level 413 and 415 (04 §3). */
export function rpcResponse(status: 200 | 413 | 415, id: JsonRpcId, payload: RpcPayload): Response {
  return jsonResponse(status, { jsonrpc: "2.0", id, ...payload }, JSON_HEADERS);
}

/** A notification is accepted whatever its method or version: 204, empty body (04 §3 step 6). */
export function notificationAccepted(): Response {
  return new Response(null, { status: 204, headers: ENDPOINT_HEADERS });
}

/** `OPTIONS /a2a` (04 §2). Any Origin: the endpoint uses no credentials. */
export function serveA2aPreflight(_req: DoorRequest): Response {
  return new Response(null, {
    status: 204,
    headers: Object.assign({}, ENDPOINT_HEADERS, {
      "Access-Control-Allow-Methods": "POST, OPTIONS",
      "Access-Control-Allow-Headers": "Content-Type, A2A-Version, A2A-Extensions",
      "Access-Control-Max-Age": "86400",
    }),
  });
}

/**
 * The route's rejections (04 §2–§3). GET, HEAD and every other method: 405
 * with a pointer to the card and to MCP (the pipeline drops the body of every
 * HEAD answer, this one included); the edge's 413 in JSON-RPC (the body was
 * never parsed); a foreign Host and an escaped exception in plain text — all
 * with the endpoint's headers.
 */
export const a2aRejections: RouteRejections = {
  forbidden: () => plainText(403, "Forbidden"),
  tooLarge: () => rpcResponse(413, null, { error: rpcErrors.payloadTooLarge() }),
  methodNotAllowed: (req, allow) => {
    const urls = a2aUrls(req.env);
    return jsonResponse(
      405,
      { error: "method_not_allowed", agent_card: urls.agentCard, mcp: urls.mcp },
      Object.assign({}, JSON_HEADERS, { Allow: allow }),
    );
  },
  unavailable: () => plainText(503, SERVICE_UNAVAILABLE_TEXT),
};

function plainText(status: number, text: string): Response {
  return new Response(text, { status, headers: Object.assign({}, ENDPOINT_HEADERS, { "Content-Type": TEXT_PLAIN }) });
}
