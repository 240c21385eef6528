/**
 * The owner MCP end to end in the split deployment (06, 10 §1): the owner
 * gateway (magnt-owner) with its real `OWNER_CORE` Service Binding to core's
 * `OwnerEntrypoint`, a loopback stand-in GitHub, core's D1 shared with the
 * public gateway. A contact and an observed goal left at the public door are
 * listed by the owner's official MCP client after the whole link flow
 * (register → authorize → consent → GitHub → callback → code → token); every
 * tool runs, a refreshed token works again; a write tool with a read-only
 * token is answered with the 403 step-up challenge and changes nothing; a
 * stranger with the owner's login gets no code. Canaries in tokens, codes,
 * the GitHub login, visitor text and draft text never reach any log line of
 * any Worker.
 */
import { describe, expect, it } from "vitest";
import type { RequestEvent } from "../../worker/contracts/events";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { readMessages } from "../helpers/mcp";
import { Canaries } from "../helpers/privacy";
import { connectThroughGateway, coreDb, coreEvents, coreTaps, modernBody, modernHeaders, parseEvents } from "./helpers";
import { OWNER_ORIGIN } from "./owner-fixture";
import {
  connectOwner,
  exchange,
  link,
  ownerGatewayEvents,
  ownerGatewayFetch,
  ownerTablesSnapshot,
  ownerTaps,
  ownerToolCall,
  refresh,
  OWNER_USER,
  type TokenSet,
} from "./owner-helpers";

type Structured = Record<string, unknown>;
type Item = Structured & { visitor_content: Structured };

const RESOURCE_METADATA = `${OWNER_ORIGIN}/.well-known/oauth-protected-resource`;
const WRITE_CHALLENGE = `Bearer error="insufficient_scope", scope="owner.read owner.write", resource_metadata="${RESOURCE_METADATA}"`;

/** Leaves a contact and an observed goal at the public door (through the public gateway and core). */
async function leaveAtTheDoor(canaries: Canaries): Promise<{ contactId: string; goal: string; summary: string }> {
  const summary = canaries.make("summary");
  const goal = canaries.make("goal");
  const client = await connectThroughGateway();
  const proposed = await client.callTool({
    name: "propose_contact",
    arguments: { summary, reply_to: `${canaries.make("replyto")}@example.com`, submission_id: crypto.randomUUID() },
  });
  expect(proposed.isError).toBeFalsy();
  const searched = await client.callTool({ name: "search_shared_experience", arguments: { goal, blocker: canaries.make("blocker") } });
  expect(searched.isError).toBeFalsy();
  await client.close();
  return { contactId: (proposed.structuredContent as Structured).contact_id as string, goal, summary };
}

function structured(result: unknown): Structured {
  return (result as { structuredContent: Structured }).structuredContent;
}

/** Every log line of every Worker in this test: the public gateway (this isolate), core and the owner gateway. */
async function allLogLines(runner: ReturnType<typeof captureConsole>): Promise<string[]> {
  return [...runner.lines(), ...(await coreTaps().lines()), ...(await ownerTaps().lines())];
}

describe("owner MCP through the split deployment", () => {
  it("links as the owner, lists what visitors left, runs every tool, refreshes and runs again — and logs no canary", async () => {
    await ownerTaps().reset();
    const runner = captureConsole();
    const canaries = new Canaries();
    const door = await leaveAtTheDoor(canaries);

    const login = canaries.track("github login", `canarylogin-${crypto.randomUUID().slice(0, 8)}`);
    const linked = await link({ scope: "owner.read owner.write", user: { id: OWNER_USER.id, login }, state: canaries.make("state") });
    expect(linked.last.status).toBe(302);
    const redirect = new URL(linked.last.headers.get("location")!);
    expect(redirect.origin + redirect.pathname).toBe("http://127.0.0.1:33418/callback");
    expect(redirect.searchParams.get("iss")).toBe(OWNER_ORIGIN);
    expect(redirect.searchParams.get("state")).toBe(linked.state);
    canaries.track("client id", linked.clientId);
    canaries.track("code", linked.code!);
    canaries.track("verifier", linked.verifier);
    const tokens: TokenSet = await exchange(linked);
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "owner.read owner.write" });
    canaries.track("access token", tokens.access_token);
    canaries.track("refresh token", tokens.refresh_token);

    const client = await connectOwner(tokens.access_token);
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toEqual([
      "owner_list_contacts",
      "owner_list_observed_goals",
      "owner_save_draft",
      "owner_set_contact_state",
    ]);
    const info = client.getServerVersion();
    expect(info).toMatchObject({ name: "ru.magnt/mcp-door-owner", title: "MAGNT Owner", version: "0.2.0" });

    // owner_list_contacts: the contact left at the door, its visitor text inside the labelled group only.
    const contacts = structured(await client.callTool({ name: "owner_list_contacts", arguments: { contact_id: door.contactId, detail: "full" } }));
    expect(contacts.status).toBe("ok");
    const [contact] = contacts.items as Item[];
    expect(contact).toMatchObject({ contact_id: door.contactId, state: "pending", drafts: [] });
    expect(contact!.visitor_content).toMatchObject({ content_label: "untrusted_visitor_content", summary: door.summary });
    expect(Object.keys(contact!.visitor_content).slice(0, 2)).toEqual(["content_label", "notice"]);
    const { visitor_content: _group, ...outside } = contact!;
    expect(JSON.stringify(outside)).not.toContain(door.summary);

    // owner_list_observed_goals: the goal searched at the door.
    const goals = structured(await client.callTool({ name: "owner_list_observed_goals", arguments: { limit: 50 } }));
    const goal = (goals.items as Item[]).find((item) => item.visitor_content.goal === door.goal);
    expect(goal?.visitor_content.content_label).toBe("untrusted_visitor_content");

    // owner_save_draft and owner_set_contact_state: private draft, owner state; the contacts row untouched.
    const contactRowBefore = await coreDb().prepare("SELECT * FROM contacts WHERE contact_id = ?").bind(door.contactId).first();
    const draftText = canaries.make("draft");
    const saved = structured(await client.callTool({ name: "owner_save_draft", arguments: { contact_id: door.contactId, text: draftText } }));
    expect(saved).toMatchObject({ status: "draft_saved", contact_id: door.contactId, revision: 1 });
    const state = structured(
      await client.callTool({ name: "owner_set_contact_state", arguments: { contact_id: door.contactId, state: "acknowledged" } }),
    );
    expect(state).toMatchObject({ status: "state_set", state: "acknowledged", previous_state: "pending" });
    expect(await coreDb().prepare("SELECT * FROM contacts WHERE contact_id = ?").bind(door.contactId).first()).toEqual(contactRowBefore);
    await client.close();

    // Refresh (rotation), then the new access token works again and sees the writes.
    const refreshed = await refresh(linked.clientId, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as TokenSet;
    canaries.track("refreshed access token", next.access_token);
    canaries.track("refreshed refresh token", next.refresh_token);
    expect(next.access_token).not.toBe(tokens.access_token);
    const again = await connectOwner(next.access_token);
    const after = structured(await again.callTool({ name: "owner_list_contacts", arguments: { contact_id: door.contactId } }));
    expect((after.items as Item[])[0]).toMatchObject({
      state: "acknowledged",
      drafts: [{ draft_id: saved.draft_id, revision: 1, text: draftText }],
    });
    await again.close();

    // Telemetry: core's owner events carry the tool labels and counts, never ids or text; every event is valid.
    const coreOwnerEvents = (await coreEvents()).filter((event) => event.event_type === "owner_mcp_request");
    const calls = coreOwnerEvents.filter((event) => event.mcp_method === "tools/call");
    expect(calls.map((event) => [event.tool_name, event.tool_result])).toEqual([
      ["owner_list_contacts", "ok"],
      ["owner_list_observed_goals", "ok"],
      ["owner_save_draft", "draft_saved"],
      ["owner_set_contact_state", "state_set"],
      ["owner_list_contacts", "ok"],
    ]);
    expect(calls[0]).toMatchObject({ role: "core", items_returned: 1, include_tests: false, outcome: "success", query: "" });
    for (const event of coreOwnerEvents) {
      assertValidEvent(event);
      expect(event).not.toHaveProperty("contact_id");
    }
    const ownerEvents = await ownerGatewayEvents();
    for (const event of ownerEvents) assertValidEvent(event);
    const steps = ownerEvents.map((event) => event.owner_step);
    for (const step of ["register", "authorize", "consent", "github_callback", "token_code", "token_refresh", "mcp"] as const) {
      expect(steps).toContain(step);
    }
    expect(ownerEvents.every((event: RequestEvent) => event.role === "owner_gateway" && event.event_type === "http" && event.query === "")).toBe(
      true,
    );

    // The canaries reached storage (so the check is not vacuous) and no log line of any Worker.
    const draftRow = await coreDb().prepare("SELECT body FROM owner_drafts WHERE draft_id = ?").bind(saved.draft_id).first<{ body: string }>();
    expect(draftRow?.body).toBe(draftText);
    // Core and the owner gateway print nothing but their events (no SDK warning when the owner handler is built).
    for (const line of [...(await coreTaps().lines()), ...(await ownerTaps().lines())]) expect(parseEvents([line]), line).toHaveLength(1);
    const lines = await allLogLines(runner);
    expect(lines.length).toBeGreaterThan(10);
    await canaries.assertAbsentFrom(lines);
  });

  it("a write tool with a read-only token gets the 403 step-up challenge, and nothing changes", async () => {
    const canaries = new Canaries();
    const door = await leaveAtTheDoor(canaries);
    const linked = await link({ scope: "owner.read" });
    const tokens = await exchange(linked);
    expect(tokens.scope).toBe("owner.read");
    await coreTaps().reset();
    const before = await ownerTablesSnapshot();

    for (const [name, args] of [
      ["owner_save_draft", { contact_id: door.contactId, text: canaries.make("draft") }],
      ["owner_set_contact_state", { contact_id: door.contactId, state: "archived" }],
    ] as const) {
      const response = await ownerToolCall(tokens.access_token, name, args);
      expect(response.status, name).toBe(403);
      expect(response.headers.get("www-authenticate")).toBe(WRITE_CHALLENGE);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toEqual({ error: "insufficient_scope" });
    }
    expect(await ownerTablesSnapshot()).toBe(before);

    const events = (await coreEvents()).filter((event) => event.event_type === "owner_mcp_request");
    expect(events.map((event) => [event.tool_name, event.outcome, event.tool_result, event.status])).toEqual([
      ["owner_save_draft", "scope_rejected", "insufficient_scope", 403],
      ["owner_set_contact_state", "scope_rejected", "insufficient_scope", 403],
    ]);

    // The same token still reads.
    const read = await ownerToolCall(tokens.access_token, "owner_list_contacts", { contact_id: door.contactId });
    expect(read.status).toBe(200);
    const [message] = await readMessages(read);
    expect((message!.result as { structuredContent: Structured }).structuredContent.status).toBe("ok");
  });

  it("a stranger whose GitHub login equals the owner's gets no code (403 not_owner)", async () => {
    await ownerTaps().reset();
    const linked = await link({ user: { id: 9_000_001, login: OWNER_USER.login } });
    expect(linked.code).toBeNull();
    expect(linked.last.status).toBe(403);
    expect(await linked.last.text()).toContain("This GitHub account is not the owner");
    const callback = (await ownerGatewayEvents()).find((event) => event.owner_step === "github_callback");
    expect(callback).toMatchObject({ outcome: "not_owner", status: 403 });
  });

  it("a refresh token used twice revokes its family", async () => {
    const linked = await link();
    const tokens = await exchange(linked);
    expect((await refresh(linked.clientId, tokens.refresh_token)).status).toBe(200);
    const reuse = await refresh(linked.clientId, tokens.refresh_token);
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("tool errors and input errors are values with their labels: invalid cursor, unparseable since, unknown contact", async () => {
    const tokens = await exchange(await link({ scope: "owner.read owner.write" }));
    await coreTaps().reset();
    const before = await ownerTablesSnapshot();

    const cursor = await ownerToolCall(tokens.access_token, "owner_list_contacts", { cursor: "bm90LWEtY3Vyc29y" });
    const [cursorMessage] = await readMessages(cursor);
    const cursorResult = cursorMessage!.result as { isError: boolean; structuredContent: Structured };
    expect(cursorResult.isError).toBe(true);
    expect(cursorResult.structuredContent).toMatchObject({ status: "invalid_cursor" });

    const since = await ownerToolCall(tokens.access_token, "owner_list_observed_goals", { since: "2026-02-31" });
    const [sinceMessage] = await readMessages(since);
    expect(JSON.stringify(sinceMessage)).not.toContain('"status":"ok"');

    const missing = await ownerToolCall(tokens.access_token, "owner_set_contact_state", { contact_id: `mc_${crypto.randomUUID()}`, state: "archived" });
    const [missingMessage] = await readMessages(missing);
    expect((missingMessage!.result as { structuredContent: Structured }).structuredContent).toMatchObject({ status: "contact_not_found" });
    expect(await ownerTablesSnapshot()).toBe(before);

    const events = (await coreEvents()).filter((event) => event.event_type === "owner_mcp_request");
    expect(events.map((event) => [event.tool_name, event.outcome, event.tool_result])).toEqual([
      ["owner_list_contacts", "tool_error", "invalid_cursor"],
      ["owner_list_observed_goals", "tool_error", "invalid_arguments"],
      ["owner_set_contact_state", "tool_error", "contact_not_found"],
    ]);
    expect(events[1]).toMatchObject({ validation_status: "invalid", validation_field: "since", validation_code: "invalid_value" });
    for (const event of events) assertValidEvent(event);
  });

  it("passes subscriptions/listen back as an unread stream through the binding", async () => {
    const tokens = await exchange(await link());
    await coreTaps().reset();
    const response = await ownerGatewayFetch("/mcp", {
      method: "POST",
      headers: { ...modernHeaders("subscriptions/listen"), authorization: `Bearer ${tokens.access_token}` },
      body: modernBody("subscriptions/listen", { notifications: {} }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    await response.body?.cancel();
    const events = (await coreEvents()).filter((event) => event.event_type === "owner_mcp_request");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ mcp_method: "subscriptions/listen", outcome: "stream_opened" });
  });
});
