/**
 * `fetch_contact_reply` (07 §5–§6) in the real runtime: one undelivered reply
 * per call, oldest first, marked delivered with its time; "none pending";
 * re-reading by reply_id without touching fetched_at; identical refusals for a
 * wrong token and an unknown contact; concurrent fetches delivering each reply
 * exactly once; read receipts only with their flag. Replies are inserted in D1
 * directly (owner publishing is registered on the owner server).
 */
import { describe, expect, it } from "vitest";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { db, selectRows } from "../helpers/db";
import {
  connectV2,
  DIALOGUE_ON,
  fetchReply,
  insertReply,
  openDialogue,
  propose,
  RECEIPTS_ON,
  type Structured,
} from "./dialogue-harness";

describe("one reply per fetch, oldest first (07 §5.2)", () => {
  it("delivers two replies one at a time with the official client, then says none pending", async () => {
    const { contactId, token, dialogueId } = await openDialogue("two replies please");
    const first = await insertReply(dialogueId, contactId, "First reply text");
    const second = await insertReply(dialogueId, contactId, "Second reply text");
    const client = await connectV2("auto", DIALOGUE_ON);

    const one = (await client.callTool({ name: "fetch_contact_reply", arguments: { contact_id: contactId.toUpperCase().replace("MC_", "mc_"), dialogue_token: token } }))
      .structuredContent as Structured;
    expect(Object.keys(one)).toEqual([
      "status", "contact_id", "reply", "fetched_at", "redelivered", "more_pending", "delivered_replies", "content_label",
    ]);
    expect(one).toMatchObject({
      status: "reply_delivered",
      contact_id: contactId,
      reply: { reply_id: first.replyId, in_reply_to: contactId, published_at: first.publishedAt, text: "First reply text" },
      redelivered: false,
      more_pending: true,
      content_label: "owner_reply",
    });
    const [stored] = await selectRows<Structured>("SELECT fetched_at FROM dialogue_replies WHERE reply_id = ?", first.replyId);
    expect(one.fetched_at).toBe(stored!.fetched_at);
    expect(one.fetched_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(one.delivered_replies).toEqual([{ reply_id: first.replyId, in_reply_to: contactId, published_at: first.publishedAt, fetched_at: one.fetched_at }]);

    const two = (await client.callTool({ name: "fetch_contact_reply", arguments: { contact_id: contactId, dialogue_token: token } })).structuredContent as Structured;
    expect(two).toMatchObject({ status: "reply_delivered", reply: { reply_id: second.replyId, text: "Second reply text" }, more_pending: false });
    expect(two.delivered_replies.map((entry: Structured) => entry.reply_id)).toEqual([second.replyId, first.replyId]);

    const logs = captureConsole();
    const none = await client.callTool({ name: "fetch_contact_reply", arguments: { contact_id: contactId, dialogue_token: token } });
    expect(none.isError).toBeFalsy();
    expect(none.structuredContent).toEqual({ status: "no_reply_pending", contact_id: contactId, more_pending: false, delivered_replies: two.delivered_replies });
    expect(assertValidEvent(logs.events()[0])).toMatchObject({
      tool_name: "fetch_contact_reply",
      tool_result: "no_reply_pending",
      redelivered: false,
      more_pending: false,
      read_receipts_included: false,
    });
    await client.close();
  });

  it("any contact of the dialogue works, and replies to every message of it come oldest first", async () => {
    const { contactId, token, dialogueId } = await openDialogue("root message");
    const followUp = (await propose({ summary: "second message", previous_contact_id: contactId, dialogue_token: token, is_test: true })).structured!;
    expect(followUp.dialogue.status).toBe("joined");
    const older = await insertReply(dialogueId, followUp.contact_id, "answer to the follow-up", "2026-01-01T00:00:00.000Z");
    const newer = await insertReply(dialogueId, contactId, "answer to the root", "2026-01-02T00:00:00.000Z");
    const a = (await fetchReply({ contact_id: followUp.contact_id, dialogue_token: token })).structured!;
    const b = (await fetchReply({ contact_id: contactId, dialogue_token: token })).structured!;
    expect(a.reply).toMatchObject({ reply_id: older.replyId, in_reply_to: followUp.contact_id });
    expect(b.reply).toMatchObject({ reply_id: newer.replyId, in_reply_to: contactId });
  });

  it("re-reads a delivered reply by reply_id with redelivered: true and leaves fetched_at unchanged", async () => {
    const { contactId, token, dialogueId } = await openDialogue("re-read");
    const reply = await insertReply(dialogueId, contactId, "read me twice");
    const first = (await fetchReply({ contact_id: contactId, dialogue_token: token })).structured!;
    const logs = captureConsole();
    const again = await fetchReply({ contact_id: contactId, dialogue_token: token, reply_id: reply.replyId.toUpperCase().replace("RP_", "rp_") });
    expect(again.isError).toBe(false);
    expect(again.structured).toMatchObject({
      status: "reply_delivered",
      reply: { reply_id: reply.replyId, text: "read me twice" },
      fetched_at: first.fetched_at,
      redelivered: true,
      more_pending: false,
    });
    const [stored] = await selectRows<Structured>("SELECT fetched_at FROM dialogue_replies WHERE reply_id = ?", reply.replyId);
    expect(stored!.fetched_at).toBe(first.fetched_at);
    expect(logs.events()[0]).toMatchObject({ tool_result: "reply_delivered", redelivered: true });
  });

  it("an undelivered, foreign or unknown reply_id → reply_not_found; nothing is claimed", async () => {
    const mine = await openDialogue("mine");
    const theirs = await openDialogue("theirs");
    const pending = await insertReply(mine.dialogueId, mine.contactId, "not yet delivered");
    const foreign = await insertReply(theirs.dialogueId, theirs.contactId, "someone else's");
    await fetchReply({ contact_id: theirs.contactId, dialogue_token: theirs.token });
    for (const replyId of [pending.replyId, foreign.replyId, `rp_${crypto.randomUUID()}`]) {
      const answer = await fetchReply({ contact_id: mine.contactId, dialogue_token: mine.token, reply_id: replyId });
      expect(answer.isError).toBe(true);
      expect(answer.structured).toEqual({ status: "reply_not_found", message: expect.any(String) });
    }
    const [row] = await selectRows<Structured>("SELECT fetched_at FROM dialogue_replies WHERE reply_id = ?", pending.replyId);
    expect(row!.fetched_at).toBeNull();
  });
});

describe("refusals are indistinguishable (07 §5.4)", () => {
  it("wrong token, unknown contact, contact without dialogue and revoked dialogue give byte-identical answers", async () => {
    const { contactId, token, dialogueId } = await openDialogue("guard me");
    await insertReply(dialogueId, contactId, "secret reply");
    const plain = (await propose({ summary: "no dialogue" }, {})).structured!;
    const revoked = await openDialogue("revoke me");
    await db().prepare("UPDATE dialogues SET revoked_at = ? WHERE dialogue_id = ?").bind(new Date().toISOString(), revoked.dialogueId).run();
    const wrongToken = `dt_${"x".repeat(43)}`;

    const answers = [
      await fetchReply({ contact_id: contactId, dialogue_token: wrongToken }),
      await fetchReply({ contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: token }),
      await fetchReply({ contact_id: plain.contact_id, dialogue_token: token }),
      await fetchReply({ contact_id: revoked.contactId, dialogue_token: revoked.token }),
      await fetchReply({ contact_id: contactId, dialogue_token: revoked.token }),
    ];
    for (const answer of answers) {
      expect(answer.isError).toBe(true);
      expect(answer.text).toBe(answers[0]!.text);
      expect(answer.structured).toEqual(answers[0]!.structured);
    }
    expect(answers[0]!.structured).toEqual({ status: "dialogue_not_found", message: expect.any(String) });
    const [row] = await selectRows<Structured>("SELECT fetched_at FROM dialogue_replies WHERE dialogue_id = ?", dialogueId);
    expect(row!.fetched_at).toBeNull();
  });
});

describe("concurrency (07 §5.2 step 4, 10 §4)", () => {
  it("10 concurrent fetches with 3 unread replies → exactly 3 deliveries, each reply once, 7 none pending", async () => {
    const { contactId, token, dialogueId } = await openDialogue("concurrent fetches");
    const replies = [
      await insertReply(dialogueId, contactId, "r1"),
      await insertReply(dialogueId, contactId, "r2"),
      await insertReply(dialogueId, contactId, "r3"),
    ];
    const answers = await Promise.all(Array.from({ length: 10 }, () => fetchReply({ contact_id: contactId, dialogue_token: token })));
    const delivered = answers.filter((answer) => answer.structured?.status === "reply_delivered");
    expect(delivered).toHaveLength(3);
    expect(answers.filter((answer) => answer.structured?.status === "no_reply_pending")).toHaveLength(7);
    expect(delivered.map((answer) => answer.structured!.reply.reply_id).sort()).toEqual(replies.map((reply) => reply.replyId).sort());
    const stored = await selectRows<Structured>("SELECT fetched_at FROM dialogue_replies WHERE dialogue_id = ?", dialogueId);
    expect(stored.every((row) => row.fetched_at !== null)).toBe(true);
  });
});

describe("read receipts (07 §6)", () => {
  it("with the receipts flag the visitor sees each message, newest first, and whether the owner read it", async () => {
    const { contactId, token, dialogueId } = await openDialogue("receipts root", {}, RECEIPTS_ON);
    const followUp = (await propose({ summary: "receipts follow-up", previous_contact_id: contactId, dialogue_token: token, is_test: true }, RECEIPTS_ON)).structured!;
    await db().prepare("INSERT INTO dialogue_owner_reads (contact_id, read_at) VALUES (?, ?)").bind(contactId, "2026-02-01T10:00:00.000Z").run();
    await insertReply(dialogueId, contactId, "with receipts");

    const logs = captureConsole();
    const answer = (await fetchReply({ contact_id: contactId, dialogue_token: token }, RECEIPTS_ON)).structured!;
    expect(Object.keys(answer).at(-1)).toBe("read_receipts");
    expect(answer.read_receipts).toEqual([
      { contact_id: followUp.contact_id, received_at: followUp.received_at, read_by_owner: false, read_at: null },
      { contact_id: contactId, received_at: expect.any(String), read_by_owner: true, read_at: "2026-02-01T10:00:00.000Z" },
    ]);
    expect(logs.events()[0]).toMatchObject({ tool_result: "reply_delivered", read_receipts_included: true });

    const none = (await fetchReply({ contact_id: contactId, dialogue_token: token }, RECEIPTS_ON)).structured!;
    expect(none).toMatchObject({ status: "no_reply_pending", read_receipts: answer.read_receipts });
    const without = (await fetchReply({ contact_id: contactId, dialogue_token: token })).structured!;
    expect(without.read_receipts).toBeUndefined();
  });
});
