/**
 * The owner tools' C.1 additions (07 §4.2, §6; 06 §6.3) on the real local D1,
 * through the tool definitions as the owner server runs them: the `dialogue`
 * object and `published_reply_id` only with DIALOGUE_ENABLED, their storage
 * faults as `storage_error`; read marks only for one contact opened in full
 * with both dialogue flags on (never a listing, a failure swallowed); a
 * published draft immutable (`draft_published`) whatever the flags; and with
 * the flags off no listing touches a C.1 table and nothing writes one.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { Env } from "../../worker/config/env";
import type { ToolContext, ToolOutcome } from "../../worker/lib/tool-definition";
import { ownerListContactsTool, ownerSaveDraftTool } from "../../worker/owner/index";
import { countRows, db } from "../helpers/db";
import { faultyD1, type FaultyD1 } from "../fakes/faulty-d1";
import { insertReply, openDialogue, propose, type Structured } from "./dialogue-harness";

const DIALOGUE = { DIALOGUE_ENABLED: "true" };
const RECEIPTS = { DIALOGUE_ENABLED: "true", DIALOGUE_READ_RECEIPTS_ENABLED: "true" };
const C1_TABLE = /dialogue_(contacts|replies|owner_reads|fetch_attempts)|\bdialogues\b/;

function ctx(overrides: Partial<Record<keyof Env, unknown>>, database: D1Database = db()): ToolContext {
  return {
    env: { ...(env as Env), OWNER_MCP_ENABLED: "true", OWNER_MCP_WRITE_ENABLED: "true", ...overrides, CONTACTS: database } as Env,
    origin: "https://owner.magnt.ru",
    client: { name: null, version: null, protocolVersion: null },
    controlledTest: false,
    checkPublicWrite: async () => ({ limited: false }),
    registeredTools: [],
  };
}

/** As the SDK calls a tool: the arguments parsed by the tool's own schema. */
function list(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome> {
  return ownerListContactsTool.run(ownerListContactsTool.inputSchema.parse(args), context);
}
function save(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome> {
  return ownerSaveDraftTool.run(ownerSaveDraftTool.inputSchema.parse(args), context);
}
const result = (outcome: ToolOutcome) => outcome.result as Structured;
const touchedC1 = (recorder: FaultyD1) => recorder.statements.filter((statement) => C1_TABLE.test(statement.sql));

async function draftFor(contactId: string, text = "the owner's draft"): Promise<string> {
  const saved = result(await save({ contact_id: contactId, text }, ctx(DIALOGUE)));
  expect(saved.status).toBe("draft_saved");
  return saved.draft_id as string;
}

describe("owner_list_contacts with and without the dialogue (07 §4.2)", () => {
  it("flags off: no dialogue object, no published_reply_id, no read mark — and no statement on a C.1 table", async () => {
    const { contactId } = await openDialogue("listed while the flag is off");
    await draftFor(contactId);
    for (const flags of [{}, { DIALOGUE_READ_RECEIPTS_ENABLED: "true" }, { DIALOGUE_ENABLED: "TRUE", DIALOGUE_READ_RECEIPTS_ENABLED: "true" }]) {
      const recorder = faultyD1(db());
      const outcome = await list({ contact_id: contactId, detail: "full" }, ctx(flags, recorder));
      const [item] = result(outcome).items as Structured[];
      expect(item).not.toHaveProperty("dialogue");
      expect(item!.drafts[0]).not.toHaveProperty("published_reply_id");
      expect(touchedC1(recorder), JSON.stringify(flags)).toEqual([]);
    }
    expect(await countRows("dialogue_owner_reads", "contact_id = ?", contactId)).toBe(0);
  });

  it("every listed contact gets a dialogue object (not in one: in_dialogue false) and every draft its published_reply_id", async () => {
    const { contactId, dialogueId } = await openDialogue("in a dialogue");
    const plain = (await propose({ summary: "no dialogue here", is_test: true }, {})).structured!.contact_id as string;
    const draftId = await draftFor(contactId);
    const { replyId } = await insertReply(dialogueId, contactId, "published body");
    await db().prepare("UPDATE dialogue_replies SET draft_id = ? WHERE reply_id = ?").bind(draftId, replyId).run();
    const other = await draftFor(contactId, "not published");

    const page = result(await list({ include_tests: true, limit: 50 }, ctx(DIALOGUE)));
    const byId = new Map((page.items as Structured[]).map((item) => [item.contact_id, item]));
    expect(byId.get(plain)!.dialogue).toEqual({ in_dialogue: false, role: null, revoked_at: null, replies: [] });
    expect(byId.get(contactId)!.dialogue).toMatchObject({ in_dialogue: true, role: "root", replies: [{ reply_id: replyId }] });
    // Without the receipts flag the owner sees no fetch times.
    expect(byId.get(contactId)!.dialogue.replies[0]).not.toHaveProperty("fetched_at");
    expect(Object.fromEntries((byId.get(contactId)!.drafts as Structured[]).map((d) => [d.draft_id, d.published_reply_id]))).toEqual({
      [draftId]: replyId,
      [other]: null,
    });
    for (const item of page.items as Structured[]) expect(item).toHaveProperty("dialogue");
  });

  it.each([
    ["the dialogue memberships", /FROM dialogue_contacts dc JOIN dialogues/],
    ["the replies", /FROM dialogue_replies\s+WHERE contact_id/],
    ["the published reply ids", /SELECT draft_id, reply_id FROM dialogue_replies/],
  ])("a fault reading %s is storage_error", async (_label, failWhen) => {
    const { contactId } = await openDialogue("fault while listing");
    await draftFor(contactId);
    const outcome = await list({ contact_id: contactId }, ctx(RECEIPTS, faultyD1(db(), { failWhen, message: "CANARY-d1-listing" })));
    expect(outcome.isError).toBe(true);
    expect(result(outcome)).toMatchObject({ status: "storage_error" });
    expect(outcome.telemetry).toMatchObject({ tool_result: "storage_error" });
  });
});

describe("read marks (07 §6)", () => {
  it("only one contact opened in full with both flags on marks it read; listings, previews and the receipts flag alone never do", async () => {
    const { contactId } = await openDialogue("read me in full");
    await list({ include_tests: true, detail: "full", limit: 50 }, ctx(RECEIPTS));
    await list({ contact_id: contactId, detail: "preview" }, ctx(RECEIPTS));
    await list({ contact_id: contactId }, ctx(RECEIPTS));
    await list({ contact_id: contactId, detail: "full" }, ctx(DIALOGUE));
    expect(await countRows("dialogue_owner_reads", "contact_id = ?", contactId)).toBe(0);

    const outcome = await list({ contact_id: contactId.toUpperCase().replace("MC_", "mc_"), detail: "full" }, ctx(RECEIPTS));
    expect(result(outcome).items).toHaveLength(1);
    expect(await countRows("dialogue_owner_reads", "contact_id = ?", contactId)).toBe(1);
  });

  it("an unknown contact opened in full records nothing; a failure to record is swallowed and the listing still succeeds", async () => {
    const unknown = `mc_${crypto.randomUUID()}`;
    expect(result(await list({ contact_id: unknown, detail: "full" }, ctx(RECEIPTS))).items).toEqual([]);
    expect(await countRows("dialogue_owner_reads", "contact_id = ?", unknown)).toBe(0);

    const { contactId } = await openDialogue("the read mark fails");
    const outcome = await list(
      { contact_id: contactId, detail: "full" },
      ctx(RECEIPTS, faultyD1(db(), { failWhen: /INSERT INTO dialogue_owner_reads/, message: "CANARY-d1-read-mark" })),
    );
    expect(outcome.isError).toBeFalsy();
    expect(result(outcome)).toMatchObject({ status: "ok", items: [{ contact_id: contactId }] });
    expect(outcome.telemetry).toMatchObject({ tool_result: "ok", items_returned: 1 });
    expect(await countRows("dialogue_owner_reads", "contact_id = ?", contactId)).toBe(0);
  });
});

describe("owner_save_draft on a published draft (06 §6.3, 07 §4.1)", () => {
  async function publishedDraft() {
    const { contactId, dialogueId } = await openDialogue("publish then edit");
    const draftId = await draftFor(contactId, "the published text");
    const { replyId } = await insertReply(dialogueId, contactId, "the published text");
    await db().prepare("UPDATE dialogue_replies SET draft_id = ? WHERE reply_id = ?").bind(draftId, replyId).run();
    return { contactId, draftId };
  }

  it("answers draft_published (also for a stale revision) and leaves the draft unchanged", async () => {
    const { contactId, draftId } = await publishedDraft();
    for (const expected of [1, 7]) {
      const outcome = await save({ contact_id: contactId, draft_id: draftId, expected_revision: expected, text: "edited afterwards" }, ctx(DIALOGUE));
      expect(outcome.isError).toBe(true);
      expect(result(outcome)).toMatchObject({ status: "draft_published" });
      expect(outcome.telemetry).toMatchObject({ tool_result: "draft_published" });
    }
    const row = await db().prepare("SELECT body, revision FROM owner_drafts WHERE draft_id = ?").bind(draftId).first();
    expect(row).toEqual({ body: "the published text", revision: 1 });
  });

  it("an unpublished draft still saves and still reports revision conflicts", async () => {
    const { contactId } = await openDialogue("edit freely");
    const draftId = await draftFor(contactId);
    expect(result(await save({ contact_id: contactId, draft_id: draftId, expected_revision: 1, text: "second" }, ctx(DIALOGUE)))).toMatchObject({
      status: "draft_saved",
      revision: 2,
    });
    expect(result(await save({ contact_id: contactId, draft_id: draftId, expected_revision: 1, text: "stale" }, ctx(DIALOGUE)))).toMatchObject({
      status: "revision_conflict",
      current_revision: 2,
    });
  });

  it("with DIALOGUE_ENABLED off (dependent flags set or not) a published draft still answers draft_published, and no C.1 table is written", async () => {
    const C1_WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(dialogue_\w+|dialogues)\b/i;
    for (const flags of [{}, { DIALOGUE_REPLIES_ENABLED: "true", DIALOGUE_READ_RECEIPTS_ENABLED: "true" }, { DIALOGUE_ENABLED: "TRUE" }]) {
      const { contactId, draftId } = await publishedDraft();
      const recorder = faultyD1(db());
      const outcome = await save({ contact_id: contactId, draft_id: draftId, expected_revision: 1, text: "edited while the dialogue is off" }, ctx(flags, recorder));
      expect(result(outcome), JSON.stringify(flags)).toMatchObject({ status: "draft_published" });
      expect(outcome.telemetry).toMatchObject({ tool_result: "draft_published" });
      expect(await db().prepare("SELECT body, revision FROM owner_drafts WHERE draft_id = ?").bind(draftId).first()).toEqual({
        body: "the published text",
        revision: 1,
      });
      // The guard only reads: is there a dialogue_replies (0007)? the update of owner_drafts checks it; the reply is looked up.
      expect(touchedC1(recorder).map((statement) => statement.sql.split(/\s+/).slice(0, 2).join(" "))).toEqual([
        "SELECT EXISTS",
        "UPDATE owner_drafts",
        "SELECT draft_id,",
      ]);
      expect(recorder.statements.filter((statement) => C1_WRITE.test(statement.sql))).toEqual([]);

      const unpublished = await draftFor(contactId, "still private");
      expect(result(await save({ contact_id: contactId, draft_id: unpublished, expected_revision: 1, text: "edited" }, ctx(flags)))).toMatchObject({
        status: "draft_saved",
        revision: 2,
      });
    }
  });
});
