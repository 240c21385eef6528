/**
 * Small response builders for the door's own answers. Every error the door
 * produces is `no-store` (01 §8); `x-magnt-observer` is added by the pipeline
 * to every response, so it is not repeated here.
 */

export const TEXT_PLAIN = "text/plain; charset=utf-8";
export const SERVICE_UNAVAILABLE_TEXT = "Service temporarily unavailable";

export function textResponse(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, {
    status,
    headers: { "Content-Type": TEXT_PLAIN, "Cache-Control": "no-store", ...headers },
  });
}

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers },
  });
}

/** A JSON-RPC error as the MCP endpoint's edge rejections word it (01 §3, §4). */
export function jsonRpcErrorResponse(status: number, code: number, message: string): Response {
  return jsonResponse(status, { jsonrpc: "2.0", id: null, error: { code, message } });
}

export function notFound(): Response {
  return textResponse(404, "Not found");
}

export function methodNotAllowed(allow: string): Response {
  return textResponse(405, "Method Not Allowed", { Allow: allow });
}

export function serviceUnavailable(): Response {
  return textResponse(503, SERVICE_UNAVAILABLE_TEXT);
}

/** The same response without a body, for HEAD and for 204/304 answers. */
export function withoutBody(response: Response): Response {
  return new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A copy of `response` with mutable headers (responses from fetch() have immutable ones). */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const copy = new Response(response.body, response);
  for (const [name, value] of Object.entries(headers)) copy.headers.set(name, value);
  return copy;
}
