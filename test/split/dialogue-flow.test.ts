/**
 * The dialogue (07, C.1) end to end in the split deployment: the public
 * gateway with a real Service Binding to core (`magnt-core-dialogue`, every
 * dialogue flag on), the owner gateway (`magnt-owner-dialogue`) with its real
 * `OWNER_CORE` binding to the same core, one D1, official MCP clients (v2) on
 * both sides and the whole owner link flow through the stand-in GitHub.
 *
 * The round trip: a visitor leaves a message and receives a `dt_` token and
 * sends a follow-up; the owner (a token holding `owner.publish`, approved on
 * its own consent line) drafts, publishes two replies; two fetches return them
 * one at a time, oldest first; the third says none pending; a delivered reply
 * is re-read by `reply_id`; read receipts both ways (the owner sees both fetch
 * times; the visitor sees that exactly the message the owner opened in full
 * was read — a bulk listing marks nothing). A token without `owner.publish` is
 * answered with the 403 challenge naming all three scopes; a wrong token and
 * an unknown contact get identical bytes; with the flags off (magnt-core and
 * magnt-owner) the owner publish tool is absent and the public surface is the
 * monolith's. Canaries in the token, the reply texts and the draft texts never
 * reach a log line of any Worker.
 */
import { describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/client";
import type { RequestEvent } from "../../worker/contracts/events";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { readMessages } from "../helpers/mcp";
import { Canaries } from "../helpers/privacy";
import { callGateway, callMonolith, connectThroughGateway, coreDb, modernBody, modernHeaders, parseEvents } from "./helpers";
import { OWNER_ORIGIN } from "./owner-fixture";
import { connectOwner, exchange, link, ownerToolCall, type TokenSet } from "./owner-helpers";
import {
  connectVisitor,
  dialogueCoreEvents,
  dialogueCoreTaps,
  dialogueDoorFetch,
  dialogueOwnerFetch,
  dialogueOwnerTaps,
} from "./dialogue-helpers";

type Structured = Record<string, any>;

const RESOURCE_METADATA = `${OWNER_ORIGIN}/.well-known/oauth-protected-resource`;
const PUBLISH_CHALLENGE = `Bearer error="insufficient_scope", scope="owner.read owner.write owner.publish", resource_metadata="${RESOURCE_METADATA}"`;
const B1_TOOLS = ["owner_list_contacts", "owner_list_observed_goals", "owner_save_draft", "owner_set_contact_state"];
const C1_TOOLS = [...B1_TOOLS, "owner_publish_reply", "owner_revoke_dialogue"];

function structured(result: unknown): Structured {
  return (result as { structuredContent: Structured }).structuredContent;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  return { result, structured: structured(result), text: (result.content as { text: string }[])[0]!.text, isError: result.isError === true };
}

/** Links through the dialogue owner gateway with `scope` and exchanges the code. */
async function dialogueOwnerTokens(scope: string, canaries?: Canaries): Promise<{ tokens: TokenSet; consentHtml: string }> {
  const linked = await link({ scope, gateway: dialogueOwnerFetch, clientName: "Dialogue owner client" });
  const consentHtml = await linked.answers[0]!.text();
  canaries?.track(`client id ${scope}`, linked.clientId);
  canaries?.track(`code ${scope}`, linked.code!);
  const tokens = await exchange(linked);
  canaries?.track(`access token ${scope}`, tokens.access_token);
  canaries?.track(`refresh token ${scope}`, tokens.refresh_token);
  return { tokens, consentHtml };
}

/** Every log line of every Worker in the dialogue topology: the public gateway (this isolate), core and the owner gateway. */
async function allLogLines(runner: ReturnType<typeof captureConsole>): Promise<string[]> {
  return [...runner.lines(), ...(await dialogueCoreTaps().lines()), ...(await dialogueOwnerTaps().lines())];
}

async function ownerReadRow(contactId: string): Promise<{ read_at: string } | null> {
  return coreDb().prepare("SELECT read_at FROM dialogue_owner_reads WHERE contact_id = ?").bind(contactId).first<{ read_at: string }>();
}

describe("dialogue round trip through the split deployment (07)", () => {
  it("token → owner publishes two replies → fetched one at a time → none pending → re-read; receipts both ways; no canary in any log", async () => {
    await dialogueCoreTaps().reset();
    await dialogueOwnerTaps().reset();
    const runner = captureConsole();
    const canaries = new Canaries();

    // ── The visitor leaves a message and receives a dialogue token, then sends a follow-up.
    const visitor = await connectVisitor();
    const visitorTools = (await visitor.listTools()).tools.map((tool) => tool.name);
    expect(visitorTools).toContain("fetch_contact_reply");
    expect(visitorTools.some((name) => name.startsWith("owner_"))).toBe(false);
    const submissionId = crypto.randomUUID();
    const rootArgs = { summary: canaries.make("summary"), submission_id: submissionId, reply_to: `${canaries.make("replyto")}@example.com` };
    const root = await callTool(visitor, "propose_contact", rootArgs);
    expect(root.isError).toBe(false);
    expect(root.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "token_issued" } });
    const contactId = root.structured.contact_id as string;
    const token = canaries.track("dialogue token", root.structured.dialogue.dialogue_token as string);
    expect(token).toMatch(/^dt_[A-Za-z0-9_-]{43}$/);
    // Only its hash is stored.
    const stored = await coreDb().prepare("SELECT * FROM dialogues").all();
    expect(JSON.stringify(stored.results)).not.toContain(token);

    const followUp = await callTool(visitor, "propose_contact", {
      summary: canaries.make("follow-up summary"),
      submission_id: crypto.randomUUID(),
      previous_contact_id: contactId,
      dialogue_token: token,
    });
    expect(followUp.structured).toMatchObject({ status: "accepted_for_human_review", dialogue: { status: "joined" } });
    const followUpId = followUp.structured.contact_id as string;

    // ── The owner links with owner.publish, approved on its own consent line.
    const { tokens, consentHtml } = await dialogueOwnerTokens("owner.read owner.write owner.publish", canaries);
    expect(tokens.scope).toBe("owner.read owner.write owner.publish");
    expect(consentHtml).toMatch(/<p class="publish"><strong>Also requested: <code>owner\.publish<\/code><\/strong>/);
    const owner = await connectOwner(tokens.access_token, dialogueOwnerFetch);
    expect((await owner.listTools()).tools.map((tool) => tool.name)).toEqual(C1_TOOLS);
    expect(owner.getInstructions()).toContain("owner_publish_reply");
    expect(owner.getInstructions()).not.toContain("nothing is ever sent or published");

    // A bulk listing, even in full, shows the dialogue and marks nothing read (07 §6).
    const bulk = await callTool(owner, "owner_list_contacts", { include_tests: true, detail: "full", limit: 50 });
    const listedRoot = (bulk.structured.items as Structured[]).find((item) => item.contact_id === contactId);
    expect(listedRoot?.dialogue).toEqual({ in_dialogue: true, role: "root", revoked_at: null, replies: [] });
    expect((bulk.structured.items as Structured[]).find((item) => item.contact_id === followUpId)?.dialogue).toMatchObject({ role: "follow_up" });
    expect(await ownerReadRow(contactId)).toBeNull();

    // ── Two drafts, published explicitly, each at the revision reviewed.
    const firstText = canaries.make("first reply");
    const first = await callTool(owner, "owner_save_draft", { contact_id: contactId, text: firstText });
    expect(first.structured).toMatchObject({ status: "draft_saved", revision: 1 });
    const firstDraftId = first.structured.draft_id as string;
    const published1 = await callTool(owner, "owner_publish_reply", { draft_id: firstDraftId, expected_revision: 1 });
    expect(published1.structured).toMatchObject({ status: "reply_published", draft_id: firstDraftId, contact_id: contactId });
    const reply1 = published1.structured.reply_id as string;

    const second = await callTool(owner, "owner_save_draft", { contact_id: contactId, text: canaries.make("draft text") });
    const secondDraftId = second.structured.draft_id as string;
    const secondText = canaries.make("second reply");
    const revised = await callTool(owner, "owner_save_draft", { contact_id: contactId, draft_id: secondDraftId, expected_revision: 1, text: secondText });
    expect(revised.structured).toMatchObject({ status: "draft_saved", revision: 2 });
    const stale = await callTool(owner, "owner_publish_reply", { draft_id: secondDraftId, expected_revision: 1 });
    expect(stale.isError).toBe(true);
    expect(stale.structured).toMatchObject({ status: "revision_conflict", current_revision: 2 });
    const published2 = await callTool(owner, "owner_publish_reply", { draft_id: secondDraftId, expected_revision: 2 });
    expect(published2.structured).toMatchObject({ status: "reply_published", draft_id: secondDraftId });
    const reply2 = published2.structured.reply_id as string;

    // Publishing again is not an error; a published draft is immutable.
    const again = await callTool(owner, "owner_publish_reply", { draft_id: firstDraftId, expected_revision: 1 });
    expect(again.structured).toMatchObject({ status: "already_published", reply_id: reply1 });
    const immutable = await callTool(owner, "owner_save_draft", { contact_id: contactId, draft_id: firstDraftId, expected_revision: 1, text: "changed after publishing" });
    expect(immutable.isError).toBe(true);
    expect(immutable.structured.status).toBe("draft_published");
    expect(await coreDb().prepare("SELECT body, revision FROM owner_drafts WHERE draft_id = ?").bind(firstDraftId).first()).toEqual({ body: firstText, revision: 1 });

    // ── The visitor fetches: one reply per call, oldest first; then none pending.
    const fetch1 = await callTool(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect(fetch1.structured).toMatchObject({
      status: "reply_delivered",
      contact_id: contactId,
      reply: { reply_id: reply1, in_reply_to: contactId, text: firstText },
      redelivered: false,
      more_pending: true,
      content_label: "owner_reply",
    });
    // Any message of the dialogue works: the follow-up's id fetches the second reply.
    const fetch2 = await callTool(visitor, "fetch_contact_reply", { contact_id: followUpId, dialogue_token: token });
    expect(fetch2.structured).toMatchObject({ status: "reply_delivered", reply: { reply_id: reply2, text: secondText }, redelivered: false, more_pending: false });
    const fetch3 = await callTool(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect(fetch3.isError).toBe(false);
    expect(fetch3.structured).toMatchObject({ status: "no_reply_pending", more_pending: false });
    expect((fetch3.structured.delivered_replies as Structured[]).map((entry) => entry.reply_id)).toEqual([reply2, reply1]);
    expect(fetch3.text).not.toContain(firstText);

    // Re-read by reply_id: the same reply, its first delivery time unchanged.
    const reread = await callTool(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token, reply_id: reply1 });
    expect(reread.structured).toMatchObject({ status: "reply_delivered", reply: { reply_id: reply1, text: firstText }, redelivered: true, fetched_at: fetch1.structured.fetched_at });

    // ── Read receipts, owner side: both fetch times.
    const opened = await callTool(owner, "owner_list_contacts", { contact_id: contactId, detail: "full" });
    const [item] = opened.structured.items as Structured[];
    expect(item!.dialogue).toEqual({
      in_dialogue: true,
      role: "root",
      revoked_at: null,
      replies: [
        { reply_id: reply1, published_at: published1.structured.published_at, fetched_at: fetch1.structured.fetched_at },
        { reply_id: reply2, published_at: published2.structured.published_at, fetched_at: fetch2.structured.fetched_at },
      ],
    });
    expect(Object.fromEntries((item!.drafts as Structured[]).map((draft) => [draft.draft_id, draft.published_reply_id]))).toEqual({
      [firstDraftId]: reply1,
      [secondDraftId]: reply2,
    });
    // ...and that full single read is the one that counts.
    const readRow = await ownerReadRow(contactId);
    expect(readRow?.read_at).toEqual(expect.any(String));

    // ── Read receipts, visitor side: the root was read, the follow-up (never opened in full) was not.
    const receipts = await callTool(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect(receipts.structured.status).toBe("no_reply_pending");
    expect(receipts.structured.read_receipts).toEqual([
      { contact_id: followUpId, received_at: expect.any(String), read_by_owner: false, read_at: null },
      { contact_id: contactId, received_at: expect.any(String), read_by_owner: true, read_at: readRow!.read_at },
    ]);
    await visitor.close();
    await owner.close();

    // ── Telemetry: closed labels only; every event valid.
    const events = await dialogueCoreEvents();
    for (const event of events) assertValidEvent(event);
    const ownerCalls = events.filter((event) => event.event_type === "owner_mcp_request" && event.mcp_method === "tools/call");
    expect(ownerCalls.filter((event) => event.tool_name === "owner_publish_reply").map((event) => event.tool_result)).toEqual([
      "reply_published",
      "revision_conflict",
      "reply_published",
      "already_published",
    ]);
    expect(ownerCalls.find((event) => event.tool_result === "draft_published")).toMatchObject({ tool_name: "owner_save_draft", outcome: "tool_error" });
    const fetches = events.filter((event: RequestEvent) => event.tool_name === "fetch_contact_reply");
    expect(fetches.map((event) => [event.tool_result, event.redelivered, event.more_pending])).toEqual([
      ["reply_delivered", false, true],
      ["reply_delivered", false, false],
      ["no_reply_pending", false, false],
      ["reply_delivered", true, false],
      ["no_reply_pending", false, false],
    ]);
    const proposes = events.filter((event: RequestEvent) => event.tool_name === "propose_contact");
    expect(proposes.map((event) => [event.dialogue_token_issued, event.dialogue_joined])).toEqual([
      [true, false],
      [false, true],
    ]);

    // ── Privacy: the canaries reached storage (so the check is not vacuous) and no log line of any Worker.
    const replies = await coreDb().prepare("SELECT body FROM dialogue_replies WHERE dialogue_id = (SELECT dialogue_id FROM dialogue_contacts WHERE contact_id = ?) ORDER BY published_at").bind(contactId).all<{ body: string }>();
    expect(replies.results.map((row) => row.body)).toEqual([firstText, secondText]);
    for (const line of [...(await dialogueCoreTaps().lines()), ...(await dialogueOwnerTaps().lines())]) expect(parseEvents([line]), line).toHaveLength(1);
    const lines = await allLogLines(runner);
    expect(lines.length).toBeGreaterThan(20);
    await canaries.assertAbsentFrom(lines);
  });

  it("a token without owner.publish gets the 403 challenge naming all three scopes, and nothing is published", async () => {
    const visitor = await connectVisitor();
    const opened = structured(await visitor.callTool({ name: "propose_contact", arguments: { summary: "publish without the scope", submission_id: crypto.randomUUID() } }));
    const contactId = opened.contact_id as string;
    const dialogueToken = opened.dialogue.dialogue_token as string;

    // The gateway's 401 never advertises owner.publish (06 §4).
    const anonymous = await ownerToolCall(null, "owner_list_contacts", {}, {}, dialogueOwnerFetch);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${RESOURCE_METADATA}", scope="owner.read owner.write"`);

    // A request that names no scope gets owner.read; one that does not name owner.publish never gets it.
    const { tokens } = await dialogueOwnerTokens("owner.read owner.write");
    expect(tokens.scope).toBe("owner.read owner.write");
    const owner = await connectOwner(tokens.access_token, dialogueOwnerFetch);
    const draft = structured(await owner.callTool({ name: "owner_save_draft", arguments: { contact_id: contactId, text: "never published" } }));
    await owner.close();
    expect(draft.status).toBe("draft_saved");

    await dialogueCoreTaps().reset();
    const before = await coreDb().prepare("SELECT COUNT(*) AS n FROM dialogue_replies").first<{ n: number }>();
    const response = await ownerToolCall(tokens.access_token, "owner_publish_reply", { draft_id: draft.draft_id, expected_revision: 1 }, {}, dialogueOwnerFetch);
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(PUBLISH_CHALLENGE);
    expect(await response.json()).toEqual({ error: "insufficient_scope" });
    expect(await coreDb().prepare("SELECT COUNT(*) AS n FROM dialogue_replies").first<{ n: number }>()).toEqual(before);
    expect(await coreDb().prepare("SELECT COUNT(*) AS n FROM dialogue_replies WHERE draft_id = ?").bind(draft.draft_id).first()).toEqual({ n: 0 });
    const events = (await dialogueCoreEvents()).filter((event) => event.event_type === "owner_mcp_request");
    expect(events.map((event) => [event.tool_name, event.outcome, event.tool_result, event.status])).toEqual([
      ["owner_publish_reply", "scope_rejected", "insufficient_scope", 403],
    ]);

    // owner_revoke_dialogue needs only owner.read + owner.write: the same token runs it, and the token stops working.
    const revoke = await ownerToolCall(tokens.access_token, "owner_revoke_dialogue", { contact_id: contactId }, {}, dialogueOwnerFetch);
    expect(revoke.status).toBe(200);
    const [message] = await readMessages(revoke);
    expect((message!.result as { structuredContent: Structured }).structuredContent).toMatchObject({ status: "dialogue_revoked", contact_id: contactId });
    const refused = await visitor.callTool({ name: "fetch_contact_reply", arguments: { contact_id: contactId, dialogue_token: dialogueToken } });
    await visitor.close();
    expect(refused.isError).toBe(true);
    expect(structured(refused)).toMatchObject({ status: "dialogue_not_found" });
  });

  it("a wrong token and an unknown contact get identical bytes, each charged to the visitor's public-write budget", async () => {
    const visitor = await connectVisitor();
    const root = structured(await visitor.callTool({ name: "propose_contact", arguments: { summary: "wrong token please", submission_id: crypto.randomUUID() } }));
    const token = root.dialogue.dialogue_token as string;
    const wrongToken = `dt_${"A".repeat(43)}`;
    expect(wrongToken).not.toBe(token);
    await dialogueCoreTaps().reset();
    const wrong = await visitor.callTool({ name: "fetch_contact_reply", arguments: { contact_id: root.contact_id, dialogue_token: wrongToken } });
    const unknown = await visitor.callTool({ name: "fetch_contact_reply", arguments: { contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: token } });
    // Each wrong attempt took core's public-write budget once, under the key the gateway forwarded (01 §14, 07 §5.3) …
    const charged = await dialogueCoreTaps().limiterKeys();
    expect(charged).toHaveLength(2);
    expect(charged[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(charged[1]).toBe(charged[0]);
    // … and the right token never touches it.
    const right = await visitor.callTool({ name: "fetch_contact_reply", arguments: { contact_id: root.contact_id, dialogue_token: token } });
    expect(structured(right)).toMatchObject({ status: "no_reply_pending" });
    expect(await dialogueCoreTaps().limiterKeys()).toHaveLength(2);
    await visitor.close();
    expect(wrong.isError).toBe(true);
    expect(structured(wrong)).toMatchObject({ status: "dialogue_not_found" });
    expect(JSON.stringify(wrong.content)).toBe(JSON.stringify(unknown.content));
    expect(wrong.structuredContent).toEqual(unknown.structuredContent);
    expect(unknown.isError).toBe(true);
  });
});

describe("dialogue flags off (magnt-core, magnt-owner): the owner publish tool is absent and the public surface unchanged", () => {
  it("the owner server registers the four B.1 tools only, with the B.1 instructions; publish is an unknown tool", async () => {
    const linked = await link({ scope: "owner.read owner.write owner.publish" });
    const tokens = await exchange(linked);
    const owner = await connectOwner(tokens.access_token);
    expect((await owner.listTools()).tools.map((tool) => tool.name)).toEqual(B1_TOOLS);
    expect(owner.getInstructions()).toContain("nothing is ever sent or published");
    const listed = structured(await owner.callTool({ name: "owner_list_contacts", arguments: { limit: 5, include_tests: true } }));
    for (const item of listed.items as Structured[]) {
      expect(item).not.toHaveProperty("dialogue");
      for (const draft of item.drafts as Structured[]) expect(draft).not.toHaveProperty("published_reply_id");
    }
    await owner.close();
    const response = await ownerToolCall(tokens.access_token, "owner_publish_reply", { draft_id: `dr_${crypto.randomUUID()}`, expected_revision: 1 });
    const [message] = await readMessages(response);
    expect(message!.error?.code).toBe(-32602);
  });

  it("the public tools/list is the monolith's, without fetch_contact_reply or dialogue_token", async () => {
    const init = () => ({ method: "POST", headers: modernHeaders("tools/list"), body: modernBody("tools/list") });
    const viaGateway = await (await callGateway("/mcp", init())).text();
    expect(viaGateway).toBe(await (await callMonolith("/mcp", init())).text());
    expect(viaGateway).not.toContain("fetch_contact_reply");
    expect(viaGateway).not.toContain("dialogue_token");
    // With the flags on (the dialogue core behind the same gateway code) both appear: the comparison is not vacuous.
    const viaDialogue = await (await dialogueDoorFetch()("https://magnt.ru/mcp", init())).text();
    expect(viaDialogue).toContain("fetch_contact_reply");
    expect(viaDialogue).toContain("dialogue_token");
    const client = await connectThroughGateway();
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("fetch_contact_reply");
    await client.close();
  });
});
