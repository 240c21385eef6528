/**
 * The owner Service Binding's wire (06 §5, contracts/owner-wire.ts) round
 * trip in workerd: what the gateway encodes, cloned as the binding clones it,
 * is what core decodes; what core encodes is what the gateway decodes —
 * status, headers and body, null-body statuses without a body — and each
 * decoder refuses any other shape.
 */
import { describe, expect, it } from "vitest";
import { FORWARDING_HEADERS } from "../../worker/contracts/forwarding";
import {
  decodeOwnerMcpRequest,
  decodeOwnerMcpResponse,
  encodeOwnerMcpRequest,
  encodeOwnerMcpResponse,
  NULL_BODY_STATUSES,
  type OwnerMcpRpcResponse,
} from "../../worker/contracts/owner-wire";

const encoder = new TextEncoder();
const BODY = '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}';

/** The binding's structured clone, with a stream passed through as RPC passes it. */
function overTheBinding<T extends { body: unknown }>(value: T): T {
  return value.body instanceof ReadableStream ? { ...structuredClone({ ...value, body: null }), body: value.body } : structuredClone(value);
}

function inbound(cf: Record<string, unknown> | null): Request {
  return new Request("https://owner.magnt.ru/mcp?x=1", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
      Authorization: "Bearer secret-token",
      Cookie: "a=b",
      "cf-connecting-ip": "203.0.113.5",
      "X-Magnt-Edge-Country": "XX",
      "x-magnt-forwarded": "1",
    },
    body: BODY,
    ...(cf ? { cf } : {}),
  });
}

describe("the request: gateway encodes, core decodes", () => {
  it("arrives with the same URL, the scrubbed headers plus the edge facts, and the same body bytes", async () => {
    const body = encoder.encode(`padding${BODY}`).subarray(7);
    const wire = overTheBinding(encodeOwnerMcpRequest(inbound({ country: "DE", city: "Berlin", colo: "FRA", asn: 64500 }), body));
    expect(wire.method).toBe("POST");
    expect(wire.body).toBeInstanceOf(ArrayBuffer);
    expect(wire.body!.byteLength).toBe(BODY.length);

    const decoded = decodeOwnerMcpRequest(wire)!;
    expect(decoded).not.toBeNull();
    expect(decoded.request.method).toBe("POST");
    expect(decoded.request.url).toBe("https://owner.magnt.ru/mcp?x=1");
    expect(new TextDecoder().decode(decoded.body!)).toBe(BODY);
    expect(Object.fromEntries(decoded.request.headers)).toEqual({
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": "2025-11-25",
      [FORWARDING_HEADERS.edge.country]: "DE",
      [FORWARDING_HEADERS.edge.city]: "Berlin",
      [FORWARDING_HEADERS.edge.colo]: "FRA",
      [FORWARDING_HEADERS.edge.asn]: "64500",
    });
  });

  it("carries no body as null and absent edge facts as empty", () => {
    const decoded = decodeOwnerMcpRequest(overTheBinding(encodeOwnerMcpRequest(inbound(null), null)))!;
    expect(decoded.body).toBeNull();
    for (const name of Object.values(FORWARDING_HEADERS.edge)) expect(decoded.request.headers.get(name), name).toBe("");
  });

  it.each([
    ["null", null],
    ["a string", "POST https://owner.magnt.ru/mcp"],
    ["method GET", { method: "GET", url: "https://owner.magnt.ru/mcp", headers: [], body: null }],
    ["an unparseable URL", { method: "POST", url: "not a url", headers: [], body: null }],
    ["a non-http URL", { method: "POST", url: "file:///etc/passwd", headers: [], body: null }],
    ["headers as an object", { method: "POST", url: "https://owner.magnt.ru/mcp", headers: { a: "b" }, body: null }],
    ["a header triple", { method: "POST", url: "https://owner.magnt.ru/mcp", headers: [["a", "b", "c"]], body: null }],
    ["a numeric header value", { method: "POST", url: "https://owner.magnt.ru/mcp", headers: [["a", 1]], body: null }],
    ["a string body", { method: "POST", url: "https://owner.magnt.ru/mcp", headers: [], body: BODY }],
    ["a Uint8Array body", { method: "POST", url: "https://owner.magnt.ru/mcp", headers: [], body: encoder.encode(BODY) }],
  ])("core refuses %s", (_label, value) => {
    expect(decodeOwnerMcpRequest(value)).toBeNull();
  });
});

describe("the answer: core encodes, the gateway decodes", () => {
  it.each([
    [200, null],
    [400, null],
    [401, "token_rejected"],
    [403, "scope_rejected"],
    [404, "owner_disabled"],
    [413, null],
    [503, null],
  ])("status %i keeps its headers and body (outcome %s)", async (status, outcome) => {
    const core = new Response(`{"status":${status}}`, {
      status,
      headers: { "Content-Type": "application/json", "WWW-Authenticate": 'Bearer error="invalid_token"', "x-magnt-mcp-version": "0.2.0" },
    });
    const wire = overTheBinding(await encodeOwnerMcpResponse(core, false));
    expect(wire.body).toBeInstanceOf(ArrayBuffer);
    const answer = decodeOwnerMcpResponse(wire);
    if (!answer.ok) throw new Error("decoded as unusable");
    expect(answer.outcome).toBe(outcome);
    expect(answer.response.status).toBe(status);
    expect(Object.fromEntries(answer.response.headers)).toEqual({
      "content-type": "application/json",
      "www-authenticate": 'Bearer error="invalid_token"',
      "x-magnt-mcp-version": "0.2.0",
    });
    expect(await answer.response.text()).toBe(`{"status":${status}}`);
  });

  it.each([204, 205, 304])("null-body status %i crosses without a body, even when the wire carries bytes", async (status) => {
    const wire = overTheBinding(await encodeOwnerMcpResponse(new Response(null, { status, headers: { etag: '"v1"' } }), false));
    expect(wire).toEqual({ status, headers: [["etag", '"v1"']], body: null });
    for (const value of [wire, { ...wire, body: encoder.encode("stray bytes").buffer as ArrayBuffer }]) {
      const answer = decodeOwnerMcpResponse(value);
      if (!answer.ok) throw new Error("decoded as unusable");
      expect(answer.response.status).toBe(status);
      expect(answer.response.headers.get("etag")).toBe('"v1"');
      expect(answer.response.body).toBeNull();
    }
  });

  it("knows Fetch's null-body statuses", () => {
    expect([...NULL_BODY_STATUSES].sort((a, b) => a - b)).toEqual([101, 204, 205, 304]);
  });

  it("passes a stream through unread", async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode("event: message\n"));
        controller.enqueue(encoder.encode("data: {}\n\n"));
        controller.close();
      },
    });
    const core = new Response(stream, { headers: { "content-type": "text/event-stream" } });
    const wire = await encodeOwnerMcpResponse(core, true);
    expect(wire.body).toBeInstanceOf(ReadableStream);
    const answer = decodeOwnerMcpResponse(overTheBinding(wire));
    if (!answer.ok) throw new Error("decoded as unusable");
    expect(await answer.response.text()).toBe("event: message\ndata: {}\n\n");
  });

  it.each([
    ["nothing", null],
    ["undefined", undefined],
    ["status 101 (null-body, but outside 200–599)", { status: 101, headers: [], body: null }],
    ["status 199", { status: 199, headers: [], body: null }],
    ["status 600", { status: 600, headers: [], body: null }],
    ["a fractional status", { status: 200.5, headers: [], body: null }],
    ["a status as text", { status: "200", headers: [], body: null }],
    ["headers as an object", { status: 200, headers: { a: "b" }, body: null }],
    ["an invalid header name", { status: 200, headers: [["bad name", "x"]], body: null }],
    ["a string body", { status: 200, headers: [], body: "text" }],
    ["a Uint8Array body", { status: 200, headers: [], body: encoder.encode("text") }],
  ] as [string, unknown][])("the gateway refuses %s (core_unavailable)", (_label, value) => {
    expect(decodeOwnerMcpResponse(value as OwnerMcpRpcResponse)).toEqual({ ok: false });
  });
});
