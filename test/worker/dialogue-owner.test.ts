/**
 * The owner side of the dialogue (07 §4, §6) before it is mounted on the owner
 * server: the two tool definitions called through their `run`, the
 * registration rule, their scopes, the owner's view of dialogues and delivery
 * times, read marking — and the whole round trip with the visitor on the
 * public door through the official client.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { Env } from "../../worker/config/env";
import { dialogueOwnerTools, ownerPublishReplyTool, ownerRevokeDialogueTool } from "../../worker/dialogue/index";
import type { ToolContext, ToolOutcome } from "../../worker/lib/tool-definition";
import { dialogueViewsOf } from "../../worker/owner/index";
import { markContactRead, publishedReplyIdsOf } from "../../worker/storage/dialogue/store";
import { contactIdSchema, draftIdSchema } from "../../worker/lib/input-schemas";

/** Ids reach the storage through the input schemas, which normalise them (either case → the stored lower case). */
const asContactId = (id: string) => contactIdSchema.parse(id);
const asDraftId = (id: string) => draftIdSchema.parse(id);
import { countRows, db, selectRows } from "../helpers/db";
import { faultyD1 } from "../fakes/faulty-d1";
import { connectV2, DIALOGUE_ON, fetchReply, openDialogue, propose, RECEIPTS_ON, type Structured } from "./dialogue-harness";

function ownerCtx(overrides: Partial<Env> = {}): ToolContext {
  return {
    env: { ...(env as Env), ...overrides },
    origin: "https://magnt.ru",
    client: { name: null, version: null, protocolVersion: null },
    controlledTest: false,
    checkPublicWrite: async () => ({ limited: false }),
    registeredTools: [],
  };
}

async function insertDraft(contactId: string, body: string, revision = 1): Promise<string> {
  const draftId = `dr_${crypto.randomUUID()}`;
  const now = new Date().toISOString();
  await db()
    .prepare("INSERT INTO owner_drafts (draft_id, contact_id, body, revision, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(draftId, contactId, body, revision, now, now)
    .run();
  return draftId;
}

const publish = (args: unknown, ctx = ownerCtx()) => ownerPublishReplyTool.run(args, ctx);
/** As the SDK calls it: with the arguments parsed by the tool's own schema. */
const revoke = (args: unknown, ctx = ownerCtx()) => ownerRevokeDialogueTool.run(ownerRevokeDialogueTool.inputSchema.parse(args), ctx);
const parsePublish = (args: unknown) => ownerPublishReplyTool.inputSchema.parse(args);

function expectOnlyToolResult(outcome: ToolOutcome, toolResult: string) {
  expect(outcome.telemetry).toEqual({ tool_result: toolResult });
}

describe("registration rule and scopes (07 §1, §4)", () => {
  const ALL = { OWNER_MCP_ENABLED: "true", OWNER_MCP_WRITE_ENABLED: "true", DIALOGUE_ENABLED: "true", DIALOGUE_REPLIES_ENABLED: "true" };
  it("registers publish with owner+write+dialogue+replies and revoke with owner+write+dialogue, each flag exactly \"true\"", () => {
    expect(dialogueOwnerTools(ALL).map((tool) => tool.name)).toEqual(["owner_publish_reply", "owner_revoke_dialogue"]);
    expect(dialogueOwnerTools({ ...ALL, DIALOGUE_REPLIES_ENABLED: "TRUE" }).map((tool) => tool.name)).toEqual(["owner_revoke_dialogue"]);
    // Replies need the dialogue: with it off a reply could be published that no visitor can fetch.
    expect(dialogueOwnerTools({ ...ALL, DIALOGUE_ENABLED: undefined })).toEqual([]);
    expect(dialogueOwnerTools({ ...ALL, DIALOGUE_ENABLED: "TRUE" })).toEqual([]);
    expect(dialogueOwnerTools({ ...ALL, OWNER_MCP_WRITE_ENABLED: "false" })).toEqual([]);
    expect(dialogueOwnerTools({ ...ALL, OWNER_MCP_ENABLED: " true" })).toEqual([]);
    expect(dialogueOwnerTools({})).toEqual([]);
  });

  it("names the scopes the SDK must challenge for, and the annotations of 07 §4", () => {
    expect(ownerPublishReplyTool.requiredScopes).toEqual(["owner.read", "owner.write", "owner.publish"]);
    expect(ownerRevokeDialogueTool.requiredScopes).toEqual(["owner.read", "owner.write"]);
    expect(ownerPublishReplyTool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true });
    expect(ownerRevokeDialogueTool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
  });

  it("has strict inputs: draft_id + expected_revision ≥ 1; contact_id", () => {
    expect(ownerPublishReplyTool.inputSchema.safeParse({ draft_id: `dr_${crypto.randomUUID()}` }).success).toBe(false);
    expect(ownerPublishReplyTool.inputSchema.safeParse({ draft_id: `dr_${crypto.randomUUID()}`, expected_revision: 0 }).success).toBe(false);
    expect(ownerPublishReplyTool.inputSchema.safeParse({ draft_id: `dr_${crypto.randomUUID()}`, expected_revision: 1, text: "x" }).success).toBe(false);
    expect(ownerRevokeDialogueTool.inputSchema.safeParse({ contact_id: "mc_nope" }).success).toBe(false);
  });
});

describe("owner_publish_reply (07 §4.1)", () => {
  it("publishes exactly the reviewed revision, reads it back, and answers already_published afterwards", async () => {
    const { contactId, dialogueId } = await openDialogue("publish to me");
    const draftId = await insertDraft(contactId, "The owner's reviewed reply", 2);

    const conflict = await publish(parsePublish({ draft_id: draftId, expected_revision: 1 }));
    expect(conflict.isError).toBe(true);
    expect(conflict.result).toMatchObject({ status: "revision_conflict", current_revision: 2 });
    expectOnlyToolResult(conflict, "revision_conflict");

    const done = await publish(parsePublish({ draft_id: draftId.toUpperCase().replace("DR_", "dr_"), expected_revision: 2 }));
    expect(done.isError).toBe(false);
    expect(Object.keys(done.result)).toEqual(["status", "reply_id", "draft_id", "contact_id", "published_at"]);
    expect(done.result).toMatchObject({ status: "reply_published", draft_id: draftId, contact_id: contactId });
    expect(done.result.reply_id).toMatch(/^rp_[0-9a-f-]{36}$/);
    expectOnlyToolResult(done, "reply_published");
    const [row] = await selectRows<Structured>("SELECT * FROM dialogue_replies WHERE draft_id = ?", draftId);
    expect(row).toMatchObject({
      reply_id: done.result.reply_id,
      dialogue_id: dialogueId,
      contact_id: contactId,
      draft_revision: 2,
      body: "The owner's reviewed reply",
      published_at: done.result.published_at,
      fetched_at: null,
    });

    const again = await publish(parsePublish({ draft_id: draftId, expected_revision: 2 }));
    expect(again.isError).toBe(false);
    expect(again.result).toEqual({ ...done.result, status: "already_published" });
    expect(await countRows("dialogue_replies", "draft_id = ?", draftId)).toBe(1);
  });

  it("concurrent publications of one draft store one reply: one reply_published, the rest already_published", async () => {
    const { contactId } = await openDialogue("concurrent publish");
    const draftId = await insertDraft(contactId, "once only");
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => publish(parsePublish({ draft_id: draftId, expected_revision: 1 }))));
    expect(outcomes.filter((outcome) => outcome.result.status === "reply_published")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.result.status === "already_published")).toHaveLength(7);
    expect(new Set(outcomes.map((outcome) => outcome.result.reply_id)).size).toBe(1);
    expect(await countRows("dialogue_replies", "draft_id = ?", draftId)).toBe(1);
  });

  it("draft_not_found; no_dialogue for a contact without one and for a revoked dialogue; storage_error on faults", async () => {
    const missing = await publish(parsePublish({ draft_id: `dr_${crypto.randomUUID()}`, expected_revision: 1 }));
    expect(missing.result).toEqual({ status: "draft_not_found", message: expect.any(String) });

    const plain = (await propose({ summary: "no dialogue here" }, {})).structured!;
    const orphanDraft = await insertDraft(plain.contact_id, "cannot go anywhere");
    expect((await publish(parsePublish({ draft_id: orphanDraft, expected_revision: 1 }))).result).toMatchObject({ status: "no_dialogue" });

    const { contactId } = await openDialogue("to be revoked");
    const draftId = await insertDraft(contactId, "too late");
    expect((await revoke({ contact_id: contactId })).result.status).toBe("dialogue_revoked");
    const refused = await publish(parsePublish({ draft_id: draftId, expected_revision: 1 }));
    expect(refused).toMatchObject({ isError: true, result: { status: "no_dialogue" } });
    expect(await countRows("dialogue_replies", "draft_id = ?", draftId)).toBe(0);

    const faulty = ownerCtx({ CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /dialogue_replies/ }) });
    const live = await openDialogue("fault");
    const liveDraft = await insertDraft(live.contactId, "fault");
    expect((await publish(parsePublish({ draft_id: liveDraft, expected_revision: 1 }), faulty)).result).toEqual({ status: "storage_error", message: expect.any(String) });
    expect((await publish(parsePublish({ draft_id: liveDraft, expected_revision: 1 }), ownerCtx({ CONTACTS: undefined }))).result.status).toBe("storage_error");
  });
});

describe("owner_revoke_dialogue (07 §4.3)", () => {
  it("sets revoked_at once, is idempotent, and makes the token fail for fetches, follow-ups and duplicate retries", async () => {
    const args = { summary: "revoke me", submission_id: crypto.randomUUID(), is_test: true };
    const opened = (await propose(args)).structured!;
    const token = opened.dialogue.dialogue_token as string;
    const followUp = (await propose({ summary: "follow", previous_contact_id: opened.contact_id, dialogue_token: token, is_test: true })).structured!;

    const first = await revoke({ contact_id: followUp.contact_id.toUpperCase().replace("MC_", "mc_") });
    expect(first).toMatchObject({ isError: false, result: { status: "dialogue_revoked", contact_id: followUp.contact_id } });
    expectOnlyToolResult(first, "dialogue_revoked");
    const second = await revoke({ contact_id: opened.contact_id });
    expect(second.result.revoked_at).toBe(first.result.revoked_at);
    const [row] = await selectRows<Structured>("SELECT revoked_at FROM dialogues WHERE root_contact_id = ?", opened.contact_id);
    expect(row!.revoked_at).toBe(first.result.revoked_at);

    expect((await fetchReply({ contact_id: opened.contact_id, dialogue_token: token })).structured!.status).toBe("dialogue_not_found");
    expect((await propose({ summary: "after", previous_contact_id: opened.contact_id, dialogue_token: token })).structured!.status).toBe("dialogue_not_found");
    expect((await propose(args)).structured!.dialogue.status).toBe("token_previously_issued");
    // Nothing is deleted.
    expect(await countRows("dialogue_contacts", "contact_id IN (?, ?)", opened.contact_id, followUp.contact_id)).toBe(2);
  });

  it("contact_not_found and no_dialogue", async () => {
    expect((await revoke({ contact_id: `mc_${crypto.randomUUID()}` })).result).toEqual({ status: "contact_not_found", message: expect.any(String) });
    const plain = (await propose({ summary: "plain" }, {})).structured!;
    const none = await revoke({ contact_id: plain.contact_id });
    expect(none).toMatchObject({ isError: true, result: { status: "no_dialogue" } });
    expectOnlyToolResult(none, "no_dialogue");
  });
});

describe("the round trip with read receipts (07 §4.2, §5, §6)", () => {
  it("visitor writes, owner publishes two replies, two fetches deliver them one at a time, both sides see receipts", async () => {
    const visitor = await connectV2("auto", RECEIPTS_ON);
    const receipt = (await visitor.callTool({ name: "propose_contact", arguments: { summary: "Hello Alexander, can you answer me here?" } }))
      .structuredContent as Structured;
    const contactId = asContactId(receipt.contact_id as string);
    const token = receipt.dialogue.dialogue_token as string;

    // The owner opens that one contact in full: the owner side calls markContactRead (only the first read counts).
    await markContactRead(db(), contactId, "2026-03-01T09:00:00.000Z");
    await markContactRead(db(), contactId, "2026-03-02T09:00:00.000Z");
    const draftOne = await insertDraft(contactId, "First answer from Alexander");
    const draftTwo = await insertDraft(contactId, "Second answer from Alexander");
    const one = await publish(parsePublish({ draft_id: draftOne, expected_revision: 1 }));
    const two = await publish(parsePublish({ draft_id: draftTwo, expected_revision: 1 }));

    const before = (await dialogueViewsOf(db(), [contactId], { readReceipts: true })).get(contactId)!;
    expect(before).toEqual({
      in_dialogue: true,
      role: "root",
      revoked_at: null,
      replies: [
        { reply_id: one.result.reply_id, published_at: one.result.published_at, fetched_at: null },
        { reply_id: two.result.reply_id, published_at: two.result.published_at, fetched_at: null },
      ],
    });

    const call = async (args: Record<string, unknown>) =>
      (await visitor.callTool({ name: "fetch_contact_reply", arguments: { contact_id: contactId, dialogue_token: token, ...args } })).structuredContent as Structured;
    const first = await call({});
    const second = await call({});
    const third = await call({});
    expect([first.reply.text, second.reply.text]).toEqual(["First answer from Alexander", "Second answer from Alexander"]);
    expect([first.more_pending, second.more_pending]).toEqual([true, false]);
    expect(third).toMatchObject({ status: "no_reply_pending" });
    expect(first.read_receipts).toEqual([{ contact_id: contactId, received_at: receipt.received_at, read_by_owner: true, read_at: "2026-03-01T09:00:00.000Z" }]);
    const reread = await call({ reply_id: one.result.reply_id });
    expect(reread).toMatchObject({ redelivered: true, fetched_at: first.fetched_at, reply: { text: "First answer from Alexander" } });

    const after = (await dialogueViewsOf(db(), [contactId], { readReceipts: true })).get(contactId)!;
    expect(after.replies.map((reply) => reply.fetched_at)).toEqual([first.fetched_at, second.fetched_at]);
    const withoutReceipts = (await dialogueViewsOf(db(), [contactId], { readReceipts: false })).get(contactId)!;
    expect(withoutReceipts.replies).toEqual([
      { reply_id: one.result.reply_id, published_at: one.result.published_at },
      { reply_id: two.result.reply_id, published_at: two.result.published_at },
    ]);
    const plain = (await propose({ summary: "no dialogue" }, {})).structured!;
    expect((await dialogueViewsOf(db(), [asContactId(plain.contact_id)], { readReceipts: true })).get(asContactId(plain.contact_id))).toEqual({
      in_dialogue: false,
      role: null,
      revoked_at: null,
      replies: [],
    });
    const unpublished = await insertDraft(contactId, "still private");
    const published = await publishedReplyIdsOf(db(), [asDraftId(draftOne), asDraftId(unpublished)]);
    expect(Object.fromEntries(published)).toEqual({ [draftOne]: one.result.reply_id, [unpublished]: null });
    await visitor.close();
  });

  it("markContactRead ignores unknown contacts and is a no-op the second time", async () => {
    const unknown = asContactId(`mc_${crypto.randomUUID()}`);
    await markContactRead(db(), unknown, new Date().toISOString());
    expect(await countRows("dialogue_owner_reads", "contact_id = ?", unknown)).toBe(0);
    const { contactId } = await openDialogue("read twice", {}, DIALOGUE_ON);
    await markContactRead(db(), asContactId(contactId.toUpperCase().replace("MC_", "mc_")), "2026-04-01T00:00:00.000Z");
    await markContactRead(db(), asContactId(contactId), "2026-04-02T00:00:00.000Z");
    expect(await selectRows("SELECT read_at FROM dialogue_owner_reads WHERE contact_id = ?", contactId)).toEqual([{ read_at: "2026-04-01T00:00:00.000Z" }]);
  });
});
