/**
 * The owner deployment's boundaries (06 §1, §4, §5; 00 §3): core re-verifies
 * every token itself (another key, different claims → 401, called straight on
 * `OwnerEntrypoint` over the real binding); the single-use ledger; with the
 * owner flags off every owner path answers 404 and `OwnerEntrypoint` refuses;
 * a missing core is 503 `core_unavailable`; forged claims headers change
 * nothing on any public route; public discovery is byte-identical with the
 * owner flags on and off (monolith and gateway) and never names an owner tool.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env, OwnerMcpRpcRequest } from "../../worker/config/env";
import { OWNER_TOOL_NAMES } from "../../worker/contracts/tools";
import { OwnerEntrypoint } from "../../worker/entries/core";
import monolith from "../../worker/entries/monolith";
import { deriveOwnerKeys, parseOwnerConfig, type OwnerEnv } from "../../worker/owner/index";
import { issueTokens } from "../../worker/owner/oauth/objects";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { readMessages } from "../helpers/mcp";
import { randomKey } from "../helpers/owner";
import { callGateway, coreDb, modernBody, modernHeaders } from "./helpers";
import { OWNER_GATEWAY_VARS, OWNER_ORIGIN, OWNER_SHARED_VARS } from "./owner-fixture";
import { callOwnerInProcess, ownerCore, ownerTablesSnapshot, ownerTokens } from "./owner-helpers";

type Json = Record<string, unknown>;

const OWNER_PATHS: [string, string][] = [
  ["GET", "/.well-known/oauth-protected-resource"],
  ["GET", "/.well-known/oauth-protected-resource/mcp"],
  ["GET", "/.well-known/oauth-authorization-server"],
  ["POST", "/oauth/register"],
  ["OPTIONS", "/oauth/register"],
  ["GET", "/oauth/authorize"],
  ["POST", "/oauth/authorize"],
  ["GET", "/oauth/github/callback"],
  ["POST", "/oauth/token"],
  ["OPTIONS", "/oauth/token"],
  ["POST", "/mcp"],
  ["OPTIONS", "/mcp"],
  ["GET", "/mcp"],
  ["DELETE", "/oauth/token"],
  ["GET", "/"],
  ["GET", "/anything/else"],
];

/** Headers an internet client could send to pose as the owner or as a trusted hop. */
const FORGED: Record<string, string> = {
  "x-magnt-owner-claims": '{"sub":"583231","scope":"owner.read owner.write owner.publish"}',
  "x-magnt-identity": "owner",
  "x-magnt-owner-token": "forged",
  "x-magnt-forwarded": "1",
  "x-owner-claims": '{"sub":"583231"}',
};

/** Access token and claims signed with `signingKey` for the fixture's owner. */
async function mintAccess(signingKey: string, scope = "owner.read owner.write"): Promise<{ token: string; claims: Json }> {
  const config = parseOwnerConfig({ ...OWNER_SHARED_VARS, OWNER_TOKEN_SIGNING_KEY: signingKey } as OwnerEnv, "core")!;
  const keys = await deriveOwnerKeys(config.signingKey);
  const issued = await issueTokens(config, keys, { cid: "A".repeat(22), scope, refreshScope: scope, family: null }, Date.now());
  return { token: issued.accessToken, claims: claimsOf(issued.accessToken) };
}

function claimsOf(token: string): Json {
  const payload = token.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(payload + "=".repeat((4 - (payload.length % 4)) % 4))) as Json;
}

function rpcToolsList(): OwnerMcpRpcRequest {
  return {
    method: "POST",
    url: `${OWNER_ORIGIN}/mcp`,
    headers: Object.entries(modernHeaders("tools/list")),
    body: new TextEncoder().encode(modernBody("tools/list")).buffer as ArrayBuffer,
  };
}

function bodyText(body: ArrayBuffer | ReadableStream | null): string {
  return body instanceof ArrayBuffer ? new TextDecoder().decode(body) : "";
}

/** Core's `OwnerEntrypoint` in this isolate with another env (the auxiliary core's flags are on). */
function entrypointWith(overrides: Record<string, string | undefined>): OwnerEntrypoint {
  const merged: Record<string, unknown> = { CONTACTS: coreDb(), ...OWNER_SHARED_VARS, ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete merged[key];
  return new OwnerEntrypoint(createExecutionContext(), merged as Env);
}

/** How an RPC call ended, without leaving a rejected promise behind. */
function settled(call: Promise<unknown>): Promise<"answered" | "refused"> {
  return Promise.resolve(call).then(
    () => "answered" as const,
    () => "refused" as const,
  );
}

function expectNoOwnerTool(text: string): void {
  for (const name of OWNER_TOOL_NAMES) expect(text).not.toContain(name);
  for (const word of text.match(/owner_[a-z_]+/g) ?? []) expect(word).toBe("owner_release");
  expect(text).not.toContain("owner.magnt.ru");
}

describe("core re-verifies every token (06 §5)", () => {
  it("answers a token core verifies with claims that deep-equal it", async () => {
    const { token, claims } = await mintAccess(OWNER_SHARED_VARS.OWNER_TOKEN_SIGNING_KEY);
    const answer = await ownerCore().handleOwnerMcp(rpcToolsList(), { token, claims });
    expect(answer.status).toBe(200);
    expect(bodyText(answer.body)).toContain("owner_list_contacts");
  });

  it("refuses a token signed with another key, passed straight to OwnerEntrypoint", async () => {
    const { token, claims } = await mintAccess(randomKey());
    const answer = await ownerCore().handleOwnerMcp(rpcToolsList(), { token, claims });
    expect(answer.status).toBe(401);
    expect(new Headers(answer.headers).get("www-authenticate")).toContain('error="invalid_token"');
    expect(bodyText(answer.body)).not.toContain("owner_list_contacts");
  });

  it("refuses claims that differ from the verified token (wider scope, other subject, extra claim)", async () => {
    const { token, claims } = await mintAccess(OWNER_SHARED_VARS.OWNER_TOKEN_SIGNING_KEY, "owner.read");
    for (const forged of [
      { ...claims, scope: "owner.read owner.write owner.publish" },
      { ...claims, sub: "1" },
      { ...claims, admin: true },
      { sub: claims.sub },
      null,
    ]) {
      const answer = await ownerCore().handleOwnerMcp(rpcToolsList(), { token, claims: forged as Json });
      expect(answer.status).toBe(401);
    }
  });

  it("refuses a malformed request shape with 400 and reads nothing", async () => {
    const { token, claims } = await mintAccess(OWNER_SHARED_VARS.OWNER_TOKEN_SIGNING_KEY);
    const core = ownerCore() as unknown as { handleOwnerMcp(req: unknown, auth: unknown): Promise<{ status: number }> };
    expect((await core.handleOwnerMcp({ method: "GET", url: `${OWNER_ORIGIN}/mcp`, headers: [], body: null }, { token, claims })).status).toBe(400);
    expect((await core.handleOwnerMcp({ method: "POST", url: "not a url", headers: [], body: null }, { token, claims })).status).toBe(400);
  });

  it("spends an id once and remembers it; refuses malformed ledger calls", async () => {
    const id = randomKey();
    const expires = new Date(Date.now() + 60_000).toISOString();
    expect(await ownerCore().isSpent(id)).toBe(false);
    expect(await ownerCore().spendOnce(id, "code", expires)).toBe(true);
    expect(await ownerCore().spendOnce(id, "code", expires)).toBe(false);
    expect(await ownerCore().isSpent(id)).toBe(true);
    expect(await settled(ownerCore().spendOnce("x'; DROP TABLE contacts; --", "code", expires))).toBe("refused");
    expect(await settled(ownerCore().spendOnce(randomKey(), "session" as "code", expires))).toBe("refused");
  });
});

describe("owner flags off (06 §1)", () => {
  it("every owner path and method answers 404 owner_disabled on the owner gateway", async () => {
    const logs = captureConsole();
    const { token } = await mintAccess(OWNER_SHARED_VARS.OWNER_TOKEN_SIGNING_KEY);
    for (const [method, path] of OWNER_PATHS) {
      const response = await callOwnerInProcess(
        path,
        { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(method === "POST" ? { body: "{}" } : {}) },
        { OWNER_MCP_ENABLED: undefined, OWNER_MCP_WRITE_ENABLED: undefined },
      );
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.text()).toBe("Not found");
    }
    const events = logs.events();
    expect(events).toHaveLength(OWNER_PATHS.length);
    for (const event of events) {
      assertValidEvent(event);
      expect(event).toMatchObject({ role: "owner_gateway", event_type: "http", outcome: "owner_disabled", query: "" });
    }
  });

  it("a flag value other than exactly \"true\" is off", async () => {
    for (const value of ["TRUE", " true", "1", "yes"]) {
      const response = await callOwnerInProcess("/.well-known/oauth-authorization-server", {}, { OWNER_MCP_ENABLED: value });
      expect(response.status).toBe(404);
    }
  });

  it("OwnerEntrypoint refuses every call", async () => {
    const { token, claims } = await mintAccess(OWNER_SHARED_VARS.OWNER_TOKEN_SIGNING_KEY);
    const off = entrypointWith({ OWNER_MCP_ENABLED: undefined });
    const answer = await off.handleOwnerMcp(rpcToolsList(), { token, claims });
    expect(answer.status).toBe(404);
    expect(bodyText(answer.body)).toBe("Not found");
    await expect(off.spendOnce(randomKey(), "code", new Date().toISOString())).rejects.toThrow();
    await expect(off.isSpent(randomKey())).rejects.toThrow();
  });

  it("with core's write flag off the write tools do not exist", async () => {
    const { token, claims } = await mintAccess(OWNER_SHARED_VARS.OWNER_TOKEN_SIGNING_KEY);
    const readOnly = entrypointWith({ OWNER_MCP_WRITE_ENABLED: undefined });
    const answer = await readOnly.handleOwnerMcp(rpcToolsList(), { token, claims });
    const text = bodyText(answer.body);
    expect(text).toContain("owner_list_contacts");
    expect(text).not.toContain("owner_save_draft");
    expect(text).not.toContain("owner_set_contact_state");
  });

  it("with the gateway's write flag off the 401 challenge advertises owner.read only", async () => {
    const on = await callOwnerInProcess("/mcp", { method: "POST", headers: modernHeaders("tools/list"), body: modernBody("tools/list") });
    expect(on.status).toBe(401);
    expect(on.headers.get("www-authenticate")).toContain('scope="owner.read owner.write"');
    const off = await callOwnerInProcess(
      "/mcp",
      { method: "POST", headers: modernHeaders("tools/list"), body: modernBody("tools/list") },
      { OWNER_MCP_WRITE_ENABLED: undefined },
    );
    expect(off.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${OWNER_ORIGIN}/.well-known/oauth-protected-resource", scope="owner.read"`,
    );
  });

  it("a missing or malformed owner secret is 503 owner_misconfigured on every owner path", async () => {
    for (const overrides of [{ OWNER_TOKEN_SIGNING_KEY: undefined }, { OWNER_GITHUB_ID: "octo-owner" }, { GITHUB_OAUTH_ORIGIN: "https://evil.example" }]) {
      for (const [method, path] of OWNER_PATHS) {
        const response = await callOwnerInProcess(path, { method, ...(method === "POST" ? { body: "{}" } : {}) }, overrides);
        expect(response.status, `${method} ${path}`).toBe(503);
      }
    }
  });
});

describe("owner gateway without core", () => {
  it("answers /mcp with 503 core_unavailable and issues no token", async () => {
    const logs = captureConsole();
    const tokens = await ownerTokens("owner.read");
    const mcp = await callOwnerInProcess(
      "/mcp",
      { method: "POST", headers: { ...modernHeaders("tools/list"), authorization: `Bearer ${tokens.access_token}` }, body: modernBody("tools/list") },
      { OWNER_CORE: undefined },
    );
    expect(mcp.status).toBe(503);
    const refreshed = await callOwnerInProcess(
      "/oauth/token",
      {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: tokens.clientId }),
      },
      { OWNER_CORE: undefined },
    );
    expect(refreshed.status).toBe(503);
    expect(await refreshed.json()).toMatchObject({ error: "temporarily_unavailable" });
    expect(logs.events().map((event) => [event.owner_step, event.outcome])).toEqual([
      ["mcp", "core_unavailable"],
      ["token_refresh", "core_unavailable"],
    ]);
  });

  it("ignores forged claims headers: identity comes only from a verified token", async () => {
    const response = await callOwnerInProcess("/mcp", {
      method: "POST",
      headers: { ...modernHeaders("tools/list"), ...FORGED },
      body: modernBody("tools/list"),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "unauthorized" });
  });
});

// ---------------------------------------------------------------- the public surface

type Caller = (path: string, init?: RequestInit) => Promise<Response>;

/** The monolith in this isolate with core's database and the given owner flags (as secrets, 00 §6). */
function monolithWith(flags: Record<string, string>): Caller {
  return async (path, init) => {
    const ctx = createExecutionContext();
    const workerEnv = { ...(env as unknown as Json), CONTACTS: coreDb(), CORE: undefined, ...flags } as unknown as Env;
    const response = await monolith.fetch(new Request(new URL(path, "https://magnt.ru"), init), workerEnv, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
}

function gatewayWith(flags: Record<string, string>): Caller {
  return (path, init) => callGateway(path, init, flags);
}

const PUBLIC_DOCUMENTS = [
  "/mcp/server-card",
  "/.well-known/mcp/server-card.json",
  "/.well-known/ai-catalog.json",
  "/.well-known/agent-card.json",
  "/.well-known/agent.json",
];
const DISCOVERY_CALLS: [string, Json][] = [
  ["server/discover", {}],
  ["tools/list", {}],
  ["resources/list", {}],
  ["tools/call", { name: "about_magnt", arguments: {} }],
];
/** Every owner flag and secret a public Worker could be given by mistake (not the owner host's allow-list). */
const ALL_OWNER_FLAGS = {
  ...OWNER_SHARED_VARS,
  GITHUB_CLIENT_ID: OWNER_GATEWAY_VARS.GITHUB_CLIENT_ID,
  GITHUB_CLIENT_SECRET: OWNER_GATEWAY_VARS.GITHUB_CLIENT_SECRET,
  OWNER_REDIRECT_ORIGINS: OWNER_GATEWAY_VARS.OWNER_REDIRECT_ORIGINS,
};

/** Everything public a client can discover, as text (the probe without its per-request fields). */
async function discovery(call: Caller): Promise<string[]> {
  const out: string[] = [];
  for (const path of PUBLIC_DOCUMENTS) out.push(`${path} ${await (await call(path)).text()}`);
  for (const [method, params] of DISCOVERY_CALLS) {
    const name = typeof params.name === "string" ? params.name : undefined;
    const response = await call("/mcp", { method: "POST", headers: modernHeaders(method, name), body: modernBody(method, params) });
    out.push(`${method} ${response.status} ${await response.text()}`);
  }
  const probe = (await (await call("/__magnt_probe")).json()) as Json;
  out.push(`probe ${JSON.stringify(Object.keys(probe).sort())} ${JSON.stringify({ ...probe, time: null, event_id: null, request_id: null })}`);
  return out;
}

describe("the public surface with the owner flags on and off", () => {
  it.each([
    ["monolith", monolithWith],
    ["gateway", gatewayWith],
  ] as const)("%s: public discovery is byte-identical and never names an owner tool", async (_label, make) => {
    const off = await discovery(make({}));
    const on = await discovery(make(ALL_OWNER_FLAGS));
    expect(on).toEqual(off);
    for (const text of on) expectNoOwnerTool(text);
  });

  it.each([
    ["monolith", monolithWith],
    ["gateway", gatewayWith],
  ] as const)("%s: an owner tool call with forged claims headers is an unknown tool and changes nothing", async (_label, make) => {
    const call = make(ALL_OWNER_FLAGS);
    const before = await ownerTablesSnapshot();
    for (const name of OWNER_TOOL_NAMES) {
      const response = await call("/mcp", {
        method: "POST",
        headers: { ...modernHeaders("tools/call", name), ...FORGED, authorization: "Bearer forged" },
        body: modernBody("tools/call", { name, arguments: { contact_id: `mc_${crypto.randomUUID()}`, text: "x", state: "archived" } }),
      });
      const [message] = await readMessages(response);
      const text = JSON.stringify(message);
      expect(message!.error ?? (message!.result as Json).isError).toBeTruthy();
      expect(text).not.toContain('"status":"ok"');
    }
    const list = await call("/mcp", { method: "POST", headers: { ...modernHeaders("tools/list"), ...FORGED }, body: modernBody("tools/list") });
    expectNoOwnerTool(await list.text());
    expect(await ownerTablesSnapshot()).toBe(before);
  });
});
