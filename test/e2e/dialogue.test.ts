/**
 * The dialogue (07, C.1) end to end, offline: `npm start -- --owner` (gateway +
 * core + owner gateway on one local D1) on a fresh local config — its
 * generated local-only `.dev.vars` has both owner flags, the three dialogue
 * flags and a `DIALOGUE_TOKEN_KEY` —, GitHub replaced by the loopback
 * stand-in magnt dev runs, and the official MCP client v2 on both sides over
 * real HTTP. The owner's client runs its own OAuth flow (oauth-client.ts,
 * issue 19 item 5b): it connects with the scope of the gateway's 401
 * (`owner.read owner.write`, approved in headless Chromium); its first
 * `owner_publish_reply` gets the 403 naming all three scopes, the SDK
 * re-authorizes through the same provider with `owner.publish` added — the
 * consent page in Chromium shows it on its own highlighted line — and the
 * call is made again.
 *
 * The acceptance of issue 13: the visitor leaves a message and receives a
 * `dt_` token; the owner, with a token that holds `owner.publish`, publishes
 * two replies; two fetches return them one at a time, oldest first, and the
 * third says none pending; a delivered reply is re-read by `reply_id`; the
 * owner sees both fetch times and the visitor sees which message the owner
 * read; a token without `owner.publish` gets the 403 challenge and publishes
 * nothing until the owner consented to `owner.publish`; a wrong token
 * and an unknown contact get identical answers. Neither the token nor any
 * reply or draft text appears in the output of the three Workers.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "./helpers";
import type { OAuthSession } from "./oauth-client";
import { startOwnerStack, type OwnerStack } from "./owner-helpers";

type Structured = Record<string, any>;

const OWNER_TOOLS = [
  "owner_list_contacts",
  "owner_list_observed_goals",
  "owner_save_draft",
  "owner_set_contact_state",
  "owner_publish_reply",
  "owner_revoke_dialogue",
];

/** Values that must never appear in any Worker's output. */
const canaries = new Map<string, string>();
const canary = (label: string) => {
  const value = `CANARY${label.replace(/[^a-z]/gi, "")}${randomBytes(8).toString("hex")}`;
  canaries.set(label, value);
  return value;
};

let stack: OwnerStack;
let visitor: Client;
let session: OAuthSession;
let owner: Client;

let contactId: string;
let followUpId: string;
let token: string;
const replies: { id: string; text: string; publishedAt: string }[] = [];
const fetchedAt: string[] = [];

type Called = { structuredContent?: unknown; content: unknown; isError?: boolean };

async function call(client: Client | OAuthSession, name: string, args: Record<string, unknown>) {
  // The owner's session retries a call once after a step-up consent; the visitor's client is plain.
  const result = (client instanceof Client ? await client.callTool({ name, arguments: args }) : await client.callTool(name, args)) as Called;
  return { structured: result.structuredContent as Structured, text: (result.content as { text: string }[])[0]!.text, isError: result.isError === true };
}

beforeAll(async () => {
  // The generated defaults are exactly this suite's: both owner flags and the three dialogue flags on.
  stack = await startOwnerStack();
  visitor = new Client({ name: "e2e-visitor", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  await visitor.connect(new StreamableHTTPClientTransport(new URL(stack.door.mcp)));
}, 180_000);

afterAll(async () => {
  await visitor?.close();
  await session?.close();
  await stack?.stop();
  removeTempDirs();
});

describe("dialogue through npm start -- --owner", () => {
  it("the visitor leaves a message and receives a dt_ token, then joins a follow-up", async () => {
    const { tools } = await visitor.listTools();
    expect(tools.map((tool) => tool.name)).toContain("fetch_contact_reply");
    const probe = (await (await fetch(`${stack.door.origin}/__magnt_probe`)).json()) as Structured;
    expect(probe.dialogue_enabled).toBe(true);

    const root = await call(visitor, "propose_contact", {
      submission_id: crypto.randomUUID(),
      summary: canary("summary"),
      intent: "e2e: open a dialogue with the owner",
      reply_to: "e2e@example.invalid",
      is_test: true,
    });
    expect(root.isError).toBe(false);
    expect(root.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "token_issued" } });
    contactId = root.structured.contact_id;
    token = root.structured.dialogue.dialogue_token;
    canaries.set("dialogue token", token);
    expect(token).toMatch(/^dt_[A-Za-z0-9_-]{43}$/);

    const followUp = await call(visitor, "propose_contact", {
      submission_id: crypto.randomUUID(),
      summary: canary("follow-up"),
      previous_contact_id: contactId,
      dialogue_token: token,
      is_test: true,
    });
    expect(followUp.structured).toMatchObject({ status: "accepted_for_human_review", dialogue: { status: "joined" } });
    followUpId = followUp.structured.contact_id;
  });

  it("Approve in Chromium with the scope of the gateway's 401 (no publish line) → the client's own OAuth → six owner tools", async () => {
    session = stack.oauthSession();
    owner = await session.connect();
    expect(session.provider.authorizationUrls.map((url) => url.searchParams.get("scope"))).toEqual(["owner.read owner.write"]);
    expect(session.provider.tokens()?.scope).toBe("owner.read owner.write");
    canaries.set("write access token", session.provider.tokens()!.access_token);
    canaries.set("first refresh token", session.provider.tokens()!.refresh_token!);
    const { tools } = await owner.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(OWNER_TOOLS);
    expect(owner.getInstructions()).toContain("owner_publish_reply");
  });

  it("the first publish gets the 403 naming all three scopes and publishes nothing; the client re-authorizes with owner.publish (its own line in Chromium) and the call goes through; the second publishes at once", async () => {
    expect(owner, "the Approve run must have connected the owner").toBeDefined();
    const clientId = session.provider.clientInformation()!.client_id;
    for (const label of ["first reply", "second reply"]) {
      const text = canary(label);
      const draft = await call(session, "owner_save_draft", { contact_id: contactId, text });
      expect(draft.structured).toMatchObject({ status: "draft_saved", revision: 1 });
      const from = session.exchanges.length;
      const published = await call(session, "owner_publish_reply", { draft_id: draft.structured.draft_id, expected_revision: 1 });
      expect(published.structured).toMatchObject({ status: "reply_published", contact_id: contactId });
      replies.push({ id: published.structured.reply_id, text, publishedAt: published.structured.published_at });
      const recorded = session.exchanges.slice(from);
      if (label === "first reply") {
        expect(recorded[0]).toMatchObject({ path: "/mcp", status: 403 });
        expect(recorded[0]!.wwwAuthenticate).toBe(
          `Bearer error="insufficient_scope", scope="owner.read owner.write owner.publish", resource_metadata="${stack.ownerOrigin}/.well-known/oauth-protected-resource"`,
        );
        // A fresh authorization (a refresh cannot widen a grant) by the same registered client; the code exchanged by finishAuth.
        const stepUp = session.provider.authorizationUrls[1]!;
        expect(stepUp.searchParams.get("scope")).toBe("owner.read owner.write owner.publish");
        expect(stepUp.searchParams.get("client_id")).toBe(clientId);
        expect(recorded.filter((step) => step.path === "/oauth/token").map((step) => `${step.status} ${step.grantType}`)).toEqual(["200 authorization_code"]);
        expect(recorded.some((step) => step.path === "/oauth/register")).toBe(false);
      } else {
        expect(recorded.map((step) => `${step.path} ${step.status}`)).toEqual(["/mcp 200"]);
      }
    }
    expect(session.provider.authorizationUrls).toHaveLength(2);
    expect(session.provider.tokens()?.scope).toBe("owner.read owner.write owner.publish");
    canaries.set("publish access token", session.provider.tokens()!.access_token);
    canaries.set("second refresh token", session.provider.tokens()!.refresh_token!);
    // The refused call published nothing: exactly the two replies exist.
    const listed = await call(session, "owner_list_contacts", { contact_id: contactId });
    expect(((listed.structured.items as Structured[])[0]!.dialogue.replies as Structured[]).map((reply) => reply.reply_id)).toEqual(replies.map((reply) => reply.id));
  });

  it("two fetches return them one at a time, oldest first; the third says none pending; a re-read by reply_id", async () => {
    expect(replies).toHaveLength(2);
    const first = await call(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect(first.structured).toMatchObject({
      status: "reply_delivered",
      reply: { reply_id: replies[0]!.id, in_reply_to: contactId, text: replies[0]!.text },
      redelivered: false,
      more_pending: true,
      content_label: "owner_reply",
    });
    const second = await call(visitor, "fetch_contact_reply", { contact_id: followUpId, dialogue_token: token });
    expect(second.structured).toMatchObject({ status: "reply_delivered", reply: { reply_id: replies[1]!.id, text: replies[1]!.text }, more_pending: false });
    fetchedAt.push(first.structured.fetched_at, second.structured.fetched_at);

    const third = await call(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect(third.isError).toBe(false);
    expect(third.structured).toMatchObject({ status: "no_reply_pending", more_pending: false });
    expect((third.structured.delivered_replies as Structured[]).map((entry) => entry.reply_id)).toEqual([replies[1]!.id, replies[0]!.id]);

    const reread = await call(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token, reply_id: replies[0]!.id });
    expect(reread.structured).toMatchObject({ status: "reply_delivered", redelivered: true, fetched_at: fetchedAt[0], reply: { text: replies[0]!.text } });
  });

  it("read receipts both ways: the owner sees both fetch times; the visitor sees the message the owner opened in full", async () => {
    expect(fetchedAt).toHaveLength(2);
    const before = await call(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect((before.structured.read_receipts as Structured[]).every((receipt) => receipt.read_by_owner === false)).toBe(true);

    const opened = await call(owner, "owner_list_contacts", { contact_id: contactId, detail: "full" });
    expect((opened.structured.items as Structured[])[0]!.dialogue).toEqual({
      in_dialogue: true,
      role: "root",
      revoked_at: null,
      replies: replies.map((reply, index) => ({ reply_id: reply.id, published_at: reply.publishedAt, fetched_at: fetchedAt[index] })),
    });

    const after = await call(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: token });
    expect(after.structured.read_receipts).toEqual([
      { contact_id: followUpId, received_at: expect.any(String), read_by_owner: false, read_at: null },
      { contact_id: contactId, received_at: expect.any(String), read_by_owner: true, read_at: expect.any(String) },
    ]);
  });

  it("a wrong token and an unknown contact get identical answers", async () => {
    const wrong = await call(visitor, "fetch_contact_reply", { contact_id: contactId, dialogue_token: `dt_${"B".repeat(43)}` });
    const unknown = await call(visitor, "fetch_contact_reply", { contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: token });
    expect(wrong.isError).toBe(true);
    expect(wrong.structured.status).toBe("dialogue_not_found");
    expect(unknown.isError).toBe(true);
    expect(wrong.text).toBe(unknown.text);
  });

  it("no token, reply text or draft text appears in the output of the three Workers", () => {
    const output = stack.door.output();
    expect(output).toContain('"event_type"');
    for (const [label, value] of canaries) expect(output, `canary "${label}" leaked`).not.toContain(value);
  });
});
