/**
 * Gateway → core forwarding of `POST /mcp` (01 §2.3) with the real core bundle
 * behind the gateway's `CORE` binding: an official MCP client through the
 * gateway, storage in core's D1, what core actually receives when the
 * internet forges `x-magnt-*` and `cf-*` headers, the rate-limit key core
 * uses, core's answer passed through unchanged, and 503 `core_unavailable`.
 */
import { describe, expect, it } from "vitest";
import { PUBLIC_TOOL_NAMES } from "../../worker/contracts/tools";
import { MCP_DOOR_VERSION } from "../../worker/contracts/versions";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { readMessages } from "../helpers/mcp";
import {
  callGateway,
  connectThroughGateway,
  coreDb,
  coreEvents,
  coreTaps,
  modernBody,
  modernHeaders,
  ORIGIN,
} from "./helpers";

type Structured = Record<string, unknown>;

const ADDRESS = "203.0.113.77";
const EDGE = { country: "DE", city: "Berlin", colo: "FRA", asn: 64500 };
const FORGED_KEY = "f".repeat(64);
/** Headers an internet client could send to impersonate the gateway, core or an owner. */
const FORGED: Record<string, string> = {
  "x-magnt-client-key": FORGED_KEY,
  "x-magnt-edge-country": "XX",
  "x-magnt-edge-city": "Forgedville",
  "x-magnt-edge-colo": "FGD",
  "x-magnt-edge-asn": "1",
  "x-magnt-forwarded": "forged-forwarded",
  "x-magnt-owner-claims": '{"sub":"forged-owner","scope":"owner.read owner.write owner.publish"}',
  "X-Magnt-Identity": "forged-identity",
  "cf-ipcountry": "XX",
  "cf-ray": "forged-ray",
};
const FORGED_MARKERS = ["forged", "Forgedville", "FGD", FORGED_KEY];

/** The rate-limit key of 01 §14, computed here independently of the Worker's code. */
async function rateLimitKey(address: string, day: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`magnt/public-writes/v1\n${day}\n${address}`));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The keys valid while `run` executes (two if it crosses a UTC midnight). */
async function keysDuring(address: string, run: () => Promise<void>): Promise<string[]> {
  const before = new Date().toISOString().slice(0, 10);
  await run();
  const after = new Date().toISOString().slice(0, 10);
  return Promise.all([...new Set([before, after])].map((day) => rateLimitKey(address, day)));
}

/** A modern `tools/call` POST to the gateway, as an internet client with an edge `cf` object. */
function toolCall(name: string, args: Structured, extraHeaders: Record<string, string> = {}, cf: Record<string, unknown> | null = EDGE) {
  return new Request(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { ...modernHeaders("tools/call", name), ...extraHeaders },
    body: modernBody("tools/call", { name, arguments: args }),
    ...(cf ? { cf } : {}),
  });
}

async function structuredOf(response: Response): Promise<Structured> {
  const [message] = await readMessages(response);
  return (message!.result as { structuredContent: Structured }).structuredContent;
}

describe("the official MCP client through the gateway", () => {
  it("lists exactly the four public tools and leaves a contact stored in core's D1", async () => {
    const client = await connectThroughGateway();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...PUBLIC_TOOL_NAMES].sort());

    const submission_id = crypto.randomUUID();
    const result = await client.callTool({
      name: "propose_contact",
      arguments: { summary: "  Hello from behind the gateway  ", reply_to: "agent@example.com", submission_id, is_test: true },
    });
    expect(result.isError).toBeFalsy();
    const receipt = result.structuredContent as Structured;
    expect(receipt).toMatchObject({ status: "accepted_for_human_review", duplicate: false, review_status: "pending" });
    await client.close();

    // The runner's TEST_CONTACTS and core's CONTACTS are one database: the row core wrote is here.
    const row = await coreDb().prepare("SELECT * FROM contacts WHERE contact_id = ?").bind(receipt.contact_id).first<Structured>();
    expect(row).toMatchObject({
      summary: "Hello from behind the gateway",
      reply_to: "agent@example.com",
      submission_id,
      self_reported_test: 1,
      created_at: receipt.received_at,
      client_name: "split-client-v2",
    });

    // Every call was executed once, by core, and logged there as mcp_request with role core.
    const events = (await coreEvents()).map(assertValidEvent);
    expect(events.every((event) => event.role === "core" && event.event_type === "mcp_request")).toBe(true);
    const proposals = events.filter((event) => event.event_type === "mcp_request" && event.tool_name === "propose_contact");
    expect(proposals).toHaveLength(1);
    expect(proposals[0]).toMatchObject({
      tool_result: "accepted_for_human_review",
      contact_id: receipt.contact_id,
      rate_limited: false,
      client_name: "split-client-v2",
    });
  });

  it("keeps a retry with the same submission UUID to one row across the split", async () => {
    const submission_id = crypto.randomUUID();
    const args = { summary: "Idempotent through the gateway", submission_id };
    const first = await structuredOf(await callGateway(toolCall("propose_contact", args)));
    const again = await structuredOf(await callGateway(toolCall("propose_contact", args)));
    expect(again).toMatchObject({ contact_id: first.contact_id, duplicate: true });
    const rows = await coreDb().prepare("SELECT COUNT(*) AS n FROM contacts WHERE submission_id = ?").bind(submission_id).first<{ n: number }>();
    expect(rows!.n).toBe(1);
  });

  it("core and the test runner share one database both ways", async () => {
    const submission_id = crypto.randomUUID();
    const args = { summary: "Shared storage check", submission_id };
    const first = await structuredOf(await callGateway(toolCall("propose_contact", args)));
    // Removed through the runner's binding: core no longer finds the submission, so it stores it anew.
    const deleted = await coreDb().prepare("DELETE FROM contacts WHERE contact_id = ?").bind(first.contact_id).run();
    expect(deleted.meta.changes).toBe(1);
    const second = await structuredOf(await callGateway(toolCall("propose_contact", args)));
    expect(second).toMatchObject({ status: "accepted_for_human_review", duplicate: false });
    expect(second.contact_id).not.toBe(first.contact_id);
    const ids = await coreDb().prepare("SELECT contact_id FROM contacts WHERE submission_id = ?").bind(submission_id).all<{ contact_id: string }>();
    expect(ids.results.map((row) => row.contact_id)).toEqual([second.contact_id]);
  });
});

describe("forged headers from the internet (01 §2.3, §14)", () => {
  it("core sees only the gateway's facts and key, never the forged values or the client address", async () => {
    const logs = captureConsole();
    let response!: Response;
    const keys = await keysDuring(ADDRESS, async () => {
      response = await callGateway(toolCall("propose_contact", { summary: "Forgery check" }, { ...FORGED, "cf-connecting-ip": ADDRESS }));
    });
    const receipt = await structuredOf(response);
    expect(receipt.status).toBe("accepted_for_human_review");

    // What core received: the client's ordinary headers plus exactly the gateway's x-magnt-* set.
    const [received, ...more] = await coreTaps().requests();
    expect(more).toEqual([]);
    const headers = new Headers(received!.headers);
    const names = [...headers.keys()];
    expect(names.filter((name) => name.startsWith("x-magnt-")).sort()).toEqual([
      "x-magnt-client-key",
      "x-magnt-edge-asn",
      "x-magnt-edge-city",
      "x-magnt-edge-colo",
      "x-magnt-edge-country",
      "x-magnt-forwarded",
    ]);
    expect(names.filter((name) => name.startsWith("cf-"))).toEqual([]);
    expect(headers.get("x-magnt-forwarded")).toBe("1");
    expect(headers.get("x-magnt-edge-country")).toBe("DE");
    expect(headers.get("x-magnt-edge-city")).toBe("Berlin");
    expect(headers.get("x-magnt-edge-colo")).toBe("FRA");
    expect(headers.get("x-magnt-edge-asn")).toBe("64500");
    expect(keys).toContain(headers.get("x-magnt-client-key"));
    expect(headers.get("mcp-method")).toBe("tools/call");
    const everything = JSON.stringify(received);
    for (const marker of [...FORGED_MARKERS, ADDRESS]) expect(everything).not.toContain(marker);

    // Core's limiter was asked once, with the gateway-computed salted key.
    const limiterKeys = await coreTaps().limiterKeys();
    expect(limiterKeys).toHaveLength(1);
    expect(keys).toContain(limiterKeys[0]);
    expect(limiterKeys[0]).not.toBe(FORGED_KEY);

    // Core's event carries the gateway's edge facts; no log line anywhere carries a forged value or the address.
    const [coreEvent, ...others] = (await coreEvents()).map(assertValidEvent);
    expect(others).toEqual([]);
    expect(coreEvent).toMatchObject({ role: "core", event_type: "mcp_request", country: "DE", city: "Berlin", colo: "FRA", asn: 64500, identity_verified: false, tool_name: "propose_contact" });
    const [gatewayEvent] = logs.events().map(assertValidEvent);
    expect(gatewayEvent).toMatchObject({ role: "gateway", event_type: "http", forwarded_to_core: true, country: "DE", city: "Berlin", colo: "FRA", asn: 64500 });
    const allLines = [...logs.lines(), ...(await coreTaps().lines())].join("\n");
    for (const marker of [...FORGED_MARKERS, ADDRESS, ...keys]) expect(allLines).not.toContain(marker);

    // Nor does the stored row.
    const row = await coreDb().prepare("SELECT * FROM contacts WHERE contact_id = ?").bind(receipt.contact_id).first<Structured>();
    for (const marker of [...FORGED_MARKERS, ADDRESS, ...keys]) expect(JSON.stringify(row)).not.toContain(marker);
  });

  it("without request.cf or an address, the forwarded facts are empty and the key is the one of 'unknown'", async () => {
    let response!: Response;
    const keys = await keysDuring("unknown", async () => {
      response = await callGateway(toolCall("contribute_task_signal", { goal: "check split forwarding", is_test: true }, FORGED, null));
    });
    expect(response.status).toBe(200);
    const [received] = await coreTaps().requests();
    const headers = new Headers(received!.headers);
    for (const fact of ["country", "city", "colo", "asn"]) expect(headers.get(`x-magnt-edge-${fact}`), fact).toBe("");
    expect(keys).toContain(headers.get("x-magnt-client-key"));
    const [coreEvent] = (await coreEvents()).map(assertValidEvent);
    expect(coreEvent).toMatchObject({ country: "", city: "", colo: "", asn: null });
    const limiterKeys = await coreTaps().limiterKeys();
    expect(limiterKeys).toHaveLength(1);
    expect(keys).toContain(limiterKeys[0]);
  });

  it("forged headers change nothing on the routes the gateway answers itself", async () => {
    for (const path of ["/mcp/server-card", "/.well-known/ai-catalog.json", "/.well-known/agent-card.json"]) {
      const plain = await callGateway(path);
      const forged = await callGateway(path, { headers: FORGED });
      expect(forged.status, path).toBe(plain.status);
      expect(await forged.text(), path).toBe(await plain.text());
    }
    const probe = (await (await callGateway("/__magnt_probe", { headers: FORGED })).json()) as Structured;
    expect(probe).toMatchObject({ role: "gateway", country: "", colo: "", core_reachable: true });
    const [askedCore] = await coreTaps().requests();
    expect(askedCore).toMatchObject({ method: "GET", url: `${ORIGIN}/__magnt_probe` });
    const names = askedCore!.headers.map((pair) => String(pair[0]));
    expect(names.filter((name) => name.startsWith("x-magnt-") || name.startsWith("cf-"))).toEqual([]);
  });
});

describe("core's answer passes through unchanged (01 §2.3)", () => {
  it("same URL, method and body bytes to core; status, headers and body back as core sent them", async () => {
    const seen: { url: string; method: string; body: Uint8Array; contentType: string | null }[] = [];
    const stubCore = {
      async fetch(request: Request) {
        seen.push({ url: request.url, method: request.method, body: new Uint8Array(await request.arrayBuffer()), contentType: request.headers.get("content-type") });
        return new Response("core says: ünïcode ✓", { status: 418, statusText: "I'm a teapot", headers: { "x-core-header": "kept", "content-type": "text/x-core" } });
      },
    };
    const body = new TextEncoder().encode('{"jsonrpc":"2.0","id":"ünï ✓","method":"tools/list"}');
    const response = await callGateway("/mcp?q=1", { method: "POST", headers: { "content-type": "application/json" }, body }, { CORE: stubCore });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ url: `${ORIGIN}/mcp?q=1`, method: "POST", contentType: "application/json" });
    expect([...seen[0]!.body]).toEqual([...body]);
    expect(response.status).toBe(418);
    expect(response.statusText).toBe("I'm a teapot");
    expect(response.headers.get("x-core-header")).toBe("kept");
    expect(response.headers.get("content-type")).toBe("text/x-core");
    expect(await response.text()).toBe("core says: ünïcode ✓");
  });
});

describe("core unavailable (01 §2.3)", () => {
  const CANARY = "CANARY-core-internal-error-text";
  const cases: [string, Record<string, unknown>][] = [
    ["CORE missing", { CORE: undefined }],
    ["CORE throwing", { CORE: { fetch: () => { throw new Error(CANARY); } } }],
    ["CORE rejecting", { CORE: { fetch: () => Promise.reject(new Error(CANARY)) } }],
  ];

  it.each(cases)("%s → 503 core_unavailable with the MCP headers", async (_name, overrides) => {
    const logs = captureConsole();
    const init = { method: "POST", headers: modernHeaders("tools/list"), body: modernBody("tools/list") };
    const plain = await callGateway("/mcp", init, overrides);
    const browser = await callGateway("/mcp", { ...init, headers: { ...init.headers, origin: ORIGIN } }, overrides);
    for (const response of [plain, browser]) {
      expect(response.status).toBe(503);
      expect(await response.text()).toBe("Service temporarily unavailable");
      expect(response.headers.get("x-magnt-mcp-version")).toBe(MCP_DOOR_VERSION);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("x-magnt-observer")).toBe("1");
    }
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
    expect(browser.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(browser.headers.get("vary")).toBe("Origin");

    const events = logs.events().map(assertValidEvent);
    expect(events).toHaveLength(2);
    for (const event of events) {
      expect(event).toMatchObject({ role: "gateway", event_type: "http", status: 503, outcome: "core_unavailable", forwarded_to_core: true });
      expect(event).not.toHaveProperty("mcp_method");
    }
    expect(logs.lines().join("\n")).not.toContain(CANARY);
    expect(await coreTaps().requests()).toEqual([]);
  });
});
