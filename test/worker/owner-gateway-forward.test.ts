/**
 * What the owner gateway hands core over `OWNER_CORE` and what it makes of
 * core's answer (06 §5, 01 §2.3), through the real route table
 * (`createDoor("owner_gateway", ownerRoutes())`) with a recording binding in
 * place of core: the request crosses scrubbed (no `Authorization`, `Cookie`,
 * `cf-*` or inbound `x-magnt-*`; the gateway's own edge facts added; the token
 * only in `auth`), and core's status decides the answer and the event
 * (null-body statuses lose their body, a status outside 200–599 is
 * `core_unavailable`).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../worker/config/env";
import type { OwnerCoreBinding, OwnerMcpRpcAuth, OwnerMcpRpcRequest, OwnerMcpRpcResponse } from "../../worker/contracts/owner-wire";
import { createDoor } from "../../worker/edge/pipeline";
import { ownerRoutes } from "../../worker/entries/owner-routes";
import { deriveOwnerKeys, parseOwnerConfig, type OwnerEnv } from "../../worker/owner/index";
import { issueTokens } from "../../worker/owner/oauth/objects";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { OWNER_ORIGIN, ownerEnv } from "../helpers/owner";

const gateway = createDoor("owner_gateway", ownerRoutes());
const EDGE = { country: "DE", city: "Berlin", colo: "FRA", asn: 64500 };
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });

/** Headers an internet client could add to pose as a trusted hop, the owner, or the edge. */
const FORGED: Record<string, string> = {
  cookie: "magnt_owner_csrf=forged-cookie",
  "x-magnt-edge-country": "XX",
  "x-magnt-edge-asn": "1",
  "x-magnt-client-key": "f".repeat(64),
  "x-magnt-forwarded": "forged-forwarded",
  "x-magnt-owner-claims": '{"sub":"forged-subject"}',
  "cf-connecting-ip": "203.0.113.77",
  "cf-ray": "forged-ray",
};

interface Call {
  readonly req: OwnerMcpRpcRequest;
  readonly auth: OwnerMcpRpcAuth;
}

/** An `OWNER_CORE` that records each call (as the binding would clone it) and answers `answer()`. */
function recordingCore(answer: () => OwnerMcpRpcResponse | Promise<OwnerMcpRpcResponse>): { binding: OwnerCoreBinding; calls: Call[] } {
  const calls: Call[] = [];
  const binding: OwnerCoreBinding = {
    async handleOwnerMcp(req, auth) {
      calls.push({ req: structuredClone(req), auth: structuredClone(auth) });
      return answer();
    },
    spendOnce: async () => true,
    isSpent: async () => false,
  };
  return { binding, calls };
}

async function accessToken(env: OwnerEnv): Promise<string> {
  const config = parseOwnerConfig(env, "gateway")!;
  const keys = await deriveOwnerKeys(config.signingKey);
  const issued = await issueTokens(config, keys, { cid: "A".repeat(22), scope: "owner.read", refreshScope: "owner.read", family: null }, Date.now());
  return issued.accessToken;
}

/** One owner `/mcp` POST through the gateway whose `OWNER_CORE` is `binding`. */
async function post(env: OwnerEnv, binding: OwnerCoreBinding, headers: Record<string, string>, cf: Record<string, unknown> | null = EDGE) {
  const request = new Request(`${OWNER_ORIGIN}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-method": "tools/list", ...headers },
    body: BODY,
    ...(cf ? { cf } : {}),
  });
  const ctx = createExecutionContext();
  const response = await gateway.fetch(request, { ...env, CONTACTS: undefined, OWNER_CORE: binding } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text).buffer as ArrayBuffer;

describe("the request the owner gateway hands core", () => {
  it("is scrubbed: no credentials, cookies, cf-* or inbound x-magnt-*; the edge facts are the gateway's", async () => {
    const env = ownerEnv();
    const token = await accessToken(env);
    const core = recordingCore(() => ({ status: 200, headers: [["content-type", "application/json"]], body: bytes('{"ok":true}') }));
    const response = await post(env, core.binding, { ...FORGED, authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{"ok":true}');

    expect(core.calls).toHaveLength(1);
    const { req, auth } = core.calls[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe(`${OWNER_ORIGIN}/mcp`);
    expect(new TextDecoder().decode(req.body!)).toBe(BODY);
    const names = req.headers.map(([name]) => name.toLowerCase());
    expect(names).not.toContain("authorization");
    expect(names).not.toContain("cookie");
    expect(names.filter((name) => name.startsWith("cf-"))).toEqual([]);
    expect(names.filter((name) => name.startsWith("x-magnt-")).sort()).toEqual([
      "x-magnt-edge-asn",
      "x-magnt-edge-city",
      "x-magnt-edge-colo",
      "x-magnt-edge-country",
    ]);
    const headers = new Headers(req.headers);
    expect(headers.get("x-magnt-edge-country")).toBe("DE");
    expect(headers.get("x-magnt-edge-city")).toBe("Berlin");
    expect(headers.get("x-magnt-edge-colo")).toBe("FRA");
    expect(headers.get("x-magnt-edge-asn")).toBe("64500");
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("mcp-method")).toBe("tools/list");
    const everything = JSON.stringify(req);
    for (const marker of ["forged", "203.0.113.77", token]) expect(everything).not.toContain(marker);

    // The token travels only in `auth`, with the claims the gateway verified.
    expect(auth.token).toBe(token);
    expect(auth.claims).toMatchObject({ iss: OWNER_ORIGIN, aud: `${OWNER_ORIGIN}/mcp`, sub: env.OWNER_GITHUB_ID, scope: "owner.read" });
  });

  it("carries empty edge facts when the request has no cf object", async () => {
    const env = ownerEnv();
    const core = recordingCore(() => ({ status: 200, headers: [], body: bytes("{}") }));
    await post(env, core.binding, { authorization: `Bearer ${await accessToken(env)}` }, null);
    const headers = new Headers(core.calls[0]!.req.headers);
    for (const fact of ["country", "city", "colo", "asn"]) expect(headers.get(`x-magnt-edge-${fact}`), fact).toBe("");
  });
});

describe("core's answer at the owner gateway", () => {
  it.each([
    [200, null],
    [401, "token_rejected"],
    [403, "scope_rejected"],
    [404, "owner_disabled"],
    [413, null],
  ])("status %i passes through with its headers and body (outcome %s)", async (status, outcome) => {
    const env = ownerEnv();
    const core = recordingCore(() => ({ status, headers: [["content-type", "application/json"], ["x-core", "kept"]], body: bytes('{"from":"core"}') }));
    const logs = captureConsole();
    const response = await post(env, core.binding, { authorization: `Bearer ${await accessToken(env)}` });
    expect(response.status).toBe(status);
    expect(response.headers.get("x-core")).toBe("kept");
    expect(response.headers.get("x-magnt-mcp-version")).not.toBeNull();
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.text()).toBe('{"from":"core"}');
    const [event] = logs.events().map(assertValidEvent);
    expect(event).toMatchObject({ role: "owner_gateway", event_type: "http", owner_step: "mcp", forwarded_to_core: true, status });
    expect(event!.outcome).toBe(outcome ?? (status < 400 ? "http_success" : "http_error"));
  });

  it.each([204, 205, 304])("null-body status %i arrives without a body, even if core sent bytes", async (status) => {
    const env = ownerEnv();
    const core = recordingCore(() => ({ status, headers: [["x-core", "kept"]], body: bytes("must not appear") }));
    const response = await post(env, core.binding, { authorization: `Bearer ${await accessToken(env)}` });
    expect(response.status).toBe(status);
    expect(response.headers.get("x-core")).toBe("kept");
    expect(response.body).toBeNull();
    expect(await response.text()).toBe("");
  });

  it("passes a stream through unread", async () => {
    const env = ownerEnv();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode("event: message\n"));
        controller.enqueue(encoder.encode('data: {"jsonrpc":"2.0"}\n\n'));
        controller.close();
      },
    });
    const core = recordingCore(() => ({ status: 200, headers: [["content-type", "text/event-stream"]], body: stream }));
    const response = await post(env, core.binding, { authorization: `Bearer ${await accessToken(env)}` });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await response.text()).toBe('event: message\ndata: {"jsonrpc":"2.0"}\n\n');
  });

  it.each([
    ["status 101", () => ({ status: 101, headers: [], body: null })],
    ["status 199", () => ({ status: 199, headers: [], body: null })],
    ["status 600", () => ({ status: 600, headers: [], body: null })],
    ["a fractional status", () => ({ status: 200.5, headers: [], body: null })],
    ["a throwing binding", () => Promise.reject(new Error("core internals: secret detail"))],
  ] as [string, () => OwnerMcpRpcResponse | Promise<OwnerMcpRpcResponse>][])("%s is 503 core_unavailable", async (_label, answer) => {
    const env = ownerEnv();
    const core = recordingCore(answer);
    const logs = captureConsole();
    const response = await post(env, core.binding, { authorization: `Bearer ${await accessToken(env)}` });
    expect(response.status).toBe(503);
    expect(await response.text()).toBe("Service temporarily unavailable");
    expect(response.headers.get("x-magnt-mcp-version")).not.toBeNull();
    const [event] = logs.events().map(assertValidEvent);
    expect(event).toMatchObject({ owner_step: "mcp", forwarded_to_core: true, outcome: "core_unavailable", status: 503 });
    expect(logs.lines().join("\n")).not.toContain("secret detail");
  });

  it("never calls core for a request it refuses", async () => {
    const env = ownerEnv();
    const core = recordingCore(() => ({ status: 200, headers: [], body: null }));
    const response = await post(env, core.binding, { authorization: "Bearer not-a-token" });
    expect(response.status).toBe(401);
    expect(core.calls).toEqual([]);
  });
});
