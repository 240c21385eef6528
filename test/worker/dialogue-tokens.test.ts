/**
 * Dialogue tokens and case A of `propose_contact` (07 §2–§3) in the real
 * runtime: issuance with the official clients, the derivation recomputed from
 * the stored dialogue id, only the hash stored, identical retries returning the
 * same token, key change and revocation, 50 concurrent identical submissions,
 * contacts from before the flag, and the fail-closed key.
 */
import { describe, expect, it } from "vitest";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { countRows, db, selectRows } from "../helpers/db";
import {
  base64url,
  call,
  connectV1,
  connectV2,
  DIALOGUE_ON,
  dialogueIdOf,
  expectedToken,
  fetchReply,
  insertReply,
  KEY_BYTES,
  openDialogue,
  OTHER_KEY,
  propose,
  sha256Hex,
  TOKEN_KEY,
  type Structured,
} from "./dialogue-harness";

const TOKEN = /^dt_[A-Za-z0-9_-]{43}$/;

describe("case A: a new dialogue and its token (07 §2, §3)", () => {
  it("issues a dt_ token with both official clients; the receipt keeps its fields and adds dialogue last", async () => {
    for (const client of [await connectV2("auto", DIALOGUE_ON), await connectV1(DIALOGUE_ON)]) {
      const answer = (await client.callTool({ name: "propose_contact", arguments: { summary: "Hello from a client", is_test: true } }))
        .structuredContent as Structured;
      expect(Object.keys(answer)).toEqual(["status", "contact_id", "received_at", "duplicate", "review_status", "message", "continuation", "dialogue"]);
      expect(answer).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "token_issued" } });
      expect(Object.keys(answer.dialogue)).toEqual(["status", "dialogue_token", "message"]);
      expect(answer.dialogue.dialogue_token).toMatch(TOKEN);
      await client.close();
    }
  });

  it("derives the token as HMAC-SHA256(key, dialogue_id) and stores only its SHA-256", async () => {
    const logs = captureConsole();
    const { contactId, token, dialogueId } = await openDialogue("derive me");
    expect(dialogueId).toMatch(/^dg_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(token).toBe(await expectedToken(dialogueId, KEY_BYTES));

    const [dialogue] = await selectRows<Structured>("SELECT * FROM dialogues WHERE dialogue_id = ?", dialogueId);
    expect(dialogue).toMatchObject({ token_hash: await sha256Hex(token), root_contact_id: contactId, revoked_at: null });
    const [membership] = await selectRows<Structured>("SELECT * FROM dialogue_contacts WHERE contact_id = ?", contactId);
    expect(membership).toMatchObject({ dialogue_id: dialogueId, role: "root" });
    // The token itself is in no column of any table.
    for (const table of ["contacts", "dialogues", "dialogue_contacts", "dialogue_replies", "dialogue_owner_reads", "dialogue_fetch_attempts"]) {
      const rows = await selectRows(`SELECT * FROM ${table}`);
      expect(JSON.stringify(rows), table).not.toContain(token);
      expect(JSON.stringify(rows), table).not.toContain(token.slice(3));
    }

    const event = assertValidEvent(logs.events()[0]);
    expect(event).toMatchObject({ tool_result: "accepted_for_human_review", dialogue_token_issued: true, dialogue_joined: false, rate_limited: false });
    expect(JSON.stringify(logs.lines())).not.toContain(token);
    expect(JSON.stringify(logs.lines())).not.toContain(dialogueId);
  });

  it("an identical retry returns the same token with token_issued and duplicate: true; nothing new is stored", async () => {
    const args = { summary: "retry me", submission_id: crypto.randomUUID(), is_test: true };
    const first = (await propose(args)).structured!;
    const logs = captureConsole();
    const second = (await propose({ ...args, summary: "  retry me  " })).structured!;
    expect(second).toMatchObject({ contact_id: first.contact_id, duplicate: true, dialogue: { status: "token_issued", dialogue_token: first.dialogue.dialogue_token } });
    expect(second.dialogue).toEqual(first.dialogue);
    expect(await countRows("dialogues", "root_contact_id = ?", first.contact_id)).toBe(1);
    expect(await countRows("dialogue_contacts", "contact_id = ?", first.contact_id)).toBe(1);
    expect(logs.events()[0]).toMatchObject({ duplicate: true, dialogue_token_issued: true });
  });

  it("50 concurrent identical submissions → one contact, one dialogue, the same token everywhere, one duplicate: false", async () => {
    const args = { summary: "fifty at once", submission_id: crypto.randomUUID(), is_test: true };
    const answers = await Promise.all(Array.from({ length: 50 }, () => propose(args)));
    const receipts = answers.map((answer) => answer.structured!);
    expect(receipts.every((receipt) => receipt.status === "accepted_for_human_review")).toBe(true);
    expect(new Set(receipts.map((receipt) => receipt.contact_id)).size).toBe(1);
    expect(receipts.filter((receipt) => receipt.duplicate === false)).toHaveLength(1);
    expect(receipts.every((receipt) => receipt.dialogue.status === "token_issued")).toBe(true);
    expect(new Set(receipts.map((receipt) => receipt.dialogue.dialogue_token)).size).toBe(1);
    const contactId = receipts[0]!.contact_id as string;
    expect(await countRows("contacts", "submission_id = ?", args.submission_id)).toBe(1);
    expect(await countRows("dialogues", "root_contact_id = ?", contactId)).toBe(1);
    expect(await countRows("dialogue_contacts", "contact_id = ?", contactId)).toBe(1);
  });

  it("after a key change, or after revocation, the identical retry answers token_previously_issued (no token)", async () => {
    const args = { summary: "key rotation", submission_id: crypto.randomUUID(), is_test: true };
    const first = (await propose(args)).structured!;
    const rotated = (await propose(args, { ...DIALOGUE_ON, DIALOGUE_TOKEN_KEY: OTHER_KEY })).structured!;
    expect(rotated).toMatchObject({ duplicate: true, dialogue: { status: "token_previously_issued" } });
    expect(Object.keys(rotated.dialogue)).toEqual(["status", "message"]);
    // The old token still works for fetching under the new key: verification compares stored hashes.
    const fetched = await fetchReply({ contact_id: first.contact_id, dialogue_token: first.dialogue.dialogue_token }, { ...DIALOGUE_ON, DIALOGUE_TOKEN_KEY: OTHER_KEY });
    expect(fetched.structured).toMatchObject({ status: "no_reply_pending" });

    await db().prepare("UPDATE dialogues SET revoked_at = ? WHERE root_contact_id = ?").bind(new Date().toISOString(), first.contact_id).run();
    const revoked = (await propose(args)).structured!;
    expect(revoked).toMatchObject({ duplicate: true, dialogue: { status: "token_previously_issued" } });
    expect(JSON.stringify(revoked)).not.toContain(first.dialogue.dialogue_token);
  });

  it("an identical retry re-issues the token only within 15 minutes of the first answer; after that token_previously_issued, from any address", async () => {
    const args = { summary: "a message anyone could reproduce", submission_id: crypto.randomUUID(), is_test: true };
    const from = (address: string) => ({ headers: { "cf-connecting-ip": address } });
    const first = (await call("propose_contact", args, DIALOGUE_ON, from("198.51.100.7"))).structured!;
    const token = first.dialogue.dialogue_token as string;
    const dialogueId = await dialogueIdOf(first.contact_id);
    await insertReply(dialogueId, first.contact_id, "for the first client only");
    // The window's clock is the dialogue's stored creation time; move it back instead of waiting.
    const openedMinutesAgo = (minutes: number) =>
      db().prepare("UPDATE dialogues SET created_at = ? WHERE dialogue_id = ?").bind(new Date(Date.now() - minutes * 60_000).toISOString(), dialogueId).run();

    await openedMinutesAgo(14);
    const inside = (await call("propose_contact", args, DIALOGUE_ON, from("203.0.113.66"))).structured!;
    expect(inside).toMatchObject({ contact_id: first.contact_id, duplicate: true });
    expect(inside.dialogue).toEqual(first.dialogue);

    await openedMinutesAgo(16);
    const logs = captureConsole();
    const late = await call("propose_contact", args, DIALOGUE_ON, from("203.0.113.66"));
    expect(late.structured).toMatchObject({ contact_id: first.contact_id, duplicate: true, dialogue: { status: "token_previously_issued" } });
    expect(Object.keys(late.structured!.dialogue)).toEqual(["status", "message"]);
    expect(late.text).not.toContain(token);
    expect(late.text).not.toContain("dt_");
    expect(assertValidEvent(logs.events()[0])).toMatchObject({ duplicate: true, dialogue_token_issued: false });
    expect(await countRows("dialogues", "root_contact_id = ?", first.contact_id)).toBe(1);

    // The first client's token keeps working: it, and only it, gets the owner's reply.
    const fetched = await fetchReply({ contact_id: first.contact_id, dialogue_token: token });
    expect(fetched.structured).toMatchObject({ status: "reply_delivered", reply: { text: "for the first client only" } });
  });

  it("the tool description, the submission_id field and the receipt say submission_id must be a fresh random UUID kept private", async () => {
    const client = await connectV2("auto", DIALOGUE_ON);
    const tool = (await client.listTools()).tools.find((entry) => entry.name === "propose_contact")!;
    await client.close();
    const field = (tool.inputSchema.properties as Record<string, { description?: string }>).submission_id!.description!;
    const args = { summary: "tell me about submission_id", submission_id: crypto.randomUUID(), is_test: true };
    const { dialogue: issued, contact_id } = (await propose(args)).structured!;
    await db().prepare("UPDATE dialogues SET created_at = ? WHERE root_contact_id = ?").bind("2026-01-01T00:00:00.000Z", contact_id).run();
    const { dialogue: previously } = (await propose(args)).structured!;
    expect(previously.status).toBe("token_previously_issued");
    for (const text of [tool.description!, field, issued.message as string]) {
      if (text !== field) expect(text).toContain("submission_id");
      expect(text).toContain("fresh random UUID");
      expect(text).toContain("private");
      expect(text).toContain("15 minutes");
    }
    expect(previously.message).toContain("15 minutes");
    expect(previously.message).toContain("fresh random submission_id");
  });

  it("a contact stored while the flag was off answers not_in_dialogue on an identical retry with the flag on", async () => {
    const args = { summary: "before the dialogue", submission_id: crypto.randomUUID(), is_test: true };
    const off = (await propose(args, {})).structured!;
    expect(off.dialogue).toBeUndefined();
    expect(await countRows("dialogue_contacts", "contact_id = ?", off.contact_id)).toBe(0);
    const on = (await propose(args)).structured!;
    expect(on).toMatchObject({ contact_id: off.contact_id, duplicate: true, dialogue: { status: "not_in_dialogue" } });
    expect(await countRows("dialogues", "root_contact_id = ?", off.contact_id)).toBe(0);
  });

  it("different content under the same submission_id is still a conflict, and creates no dialogue", async () => {
    const submission_id = crypto.randomUUID();
    const first = (await propose({ summary: "original", submission_id })).structured!;
    const dialogues = await countRows("dialogues");
    const conflict = await propose({ summary: "different", submission_id });
    expect(conflict.isError).toBe(true);
    expect(conflict.structured).toEqual({ status: "submission_conflict", message: expect.any(String) });
    expect(await countRows("dialogues")).toBe(dialogues);
    expect(await dialogueIdOf(first.contact_id)).toMatch(/^dg_/);
  });

  it("rejects dialogue_token without previous_contact_id as invalid_value on dialogue_token, storing nothing", async () => {
    const logs = captureConsole();
    const before = await countRows("contacts");
    const answer = await propose({ summary: "token alone", dialogue_token: `dt_${"A".repeat(43)}` });
    expect(answer.isError).toBe(true);
    expect(await countRows("contacts")).toBe(before);
    expect(assertValidEvent(logs.events()[0])).toMatchObject({
      tool_result: "invalid_arguments",
      validation_status: "invalid",
      validation_field: "dialogue_token",
      validation_code: "invalid_value",
    });
  });
});

describe("fail closed without a valid DIALOGUE_TOKEN_KEY (07 §2)", () => {
  const BAD_KEYS: [string, string | undefined][] = [
    ["missing", undefined],
    ["empty", ""],
    ["not base64url", "not+base64/url=".repeat(4)],
    ["31 bytes", base64url(KEY_BYTES.slice(0, 31))],
    ["truncated base64url", TOKEN_KEY.slice(0, 41)],
    ["spaces", ` ${TOKEN_KEY}`],
  ];

  it.each(BAD_KEYS)("key %s → propose_contact not_saved with no row, fetch storage_error, telemetry dialogue_misconfigured", async (_label, key) => {
    const overrides = { DIALOGUE_ENABLED: "true", DIALOGUE_TOKEN_KEY: key };
    const contacts = await countRows("contacts");
    const dialogues = await countRows("dialogues");
    const attempts = await countRows("dialogue_fetch_attempts");
    const logs = captureConsole();
    const saved = await propose({ summary: "fail closed", is_test: true }, overrides);
    expect(saved.isError).toBe(true);
    expect(saved.structured).toEqual({ status: "not_saved", code: "storage_unavailable", message: expect.any(String) });
    expect(await countRows("contacts")).toBe(contacts);
    expect(await countRows("dialogues")).toBe(dialogues);

    const fetched = await fetchReply({ contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: `dt_${"B".repeat(43)}` }, overrides);
    expect(fetched.isError).toBe(true);
    expect(fetched.structured).toEqual({ status: "storage_error", message: expect.any(String) });
    const events = logs.events();
    for (const event of events) assertValidEvent(event);
    expect(events.map((event) => event.tool_result)).toEqual(["dialogue_misconfigured", "dialogue_misconfigured"]);
    expect(await countRows("dialogue_fetch_attempts")).toBe(attempts);
  });
});
