/**
 * The modern (2026-07-28, stateless, no handshake) MCP requests the benchmark
 * sends: the same envelope and headers a modern client sends, so the door and
 * the echo worker are measured on the path real agents take. Shared by the
 * door-overhead and sustained-load benchmarks.
 */

const PROTOCOL = "2026-07-28";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": PROTOCOL,
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

export interface McpRequest {
  method: "POST";
  headers: Record<string, string>;
  body: string;
}

function request(method: string, params: Record<string, unknown>, name?: string, meta: Record<string, unknown> = MODERN_META): McpRequest {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL,
      "mcp-method": method,
      ...(name === undefined ? {} : { "mcp-name": name }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
  };
}

export function toolsList(): McpRequest {
  return request("tools/list", {});
}

/** A `tools/list` from client software of its own name (the door keeps listings per client software, decision 208). */
export function toolsListAs(clientName: string): McpRequest {
  return request("tools/list", {}, undefined, { ...MODERN_META, "io.modelcontextprotocol/clientInfo": { name: clientName, version: "1.0.0" } });
}

export function toolCall(name: string, args: Record<string, unknown>): McpRequest {
  return request("tools/call", { name, arguments: args }, name);
}

/** What a tool answer carries that the benchmark looks at. */
export interface ToolAnswer {
  /** `structuredContent.status`, or `jsonrpc_error:<code>`, or `unparseable`. */
  outcome: string;
  structured: Record<string, unknown> | undefined;
}

export function readToolAnswer(text: string): ToolAnswer {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { outcome: "unparseable", structured: undefined };
  }
  if (typeof message !== "object" || message === null) return { outcome: "unparseable", structured: undefined };
  const { result, error } = message as { result?: { structuredContent?: Record<string, unknown>; tools?: unknown }; error?: { code?: unknown } };
  if (error !== undefined) return { outcome: `jsonrpc_error:${String(error.code)}`, structured: undefined };
  if (result?.structuredContent !== undefined) {
    const status = result.structuredContent.status;
    return { outcome: typeof status === "string" ? status : "result", structured: result.structuredContent };
  }
  if (Array.isArray(result?.tools)) return { outcome: "tools", structured: undefined };
  return { outcome: "no_structured_content", structured: undefined };
}
