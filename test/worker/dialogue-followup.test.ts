/**
 * Case B of `propose_contact` (07 §3) and the attempt limits (07 §5.3): the
 * right token joins the dialogue; a wrong token, an unknown contact, a contact
 * without a dialogue and a revoked dialogue give the same bytes as each other
 * and as `fetch_contact_reply`, and store nothing; only wrong tokens are
 * counted; the right token is never refused; a new hour starts afresh; a
 * wrong attempt takes the public-write budget before it writes its counter
 * row (300 random wrong fetches from one address add at most the budget's
 * rows) while the right token never touches it; the public-write limit and
 * storage faults still apply.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { countRows, db, selectRows } from "../helpers/db";
import { fakeRateLimiter, faultyD1 } from "../fakes/faulty-d1";
import { call, DIALOGUE_ON, fetchReply, insertReply, openDialogue, propose, sha256Hex, type Structured } from "./dialogue-harness";

const WRONG = `dt_${"w".repeat(43)}`;

async function attemptsOf(contactId: string): Promise<number> {
  const rows = await selectRows<{ failures: number }>(
    "SELECT failures FROM dialogue_fetch_attempts WHERE key_hash = ?",
    await sha256Hex(`dialogue:${contactId.toLowerCase()}`),
  );
  return rows.reduce((sum, row) => sum + row.failures, 0);
}

describe("follow-ups with the right token (07 §3 case B)", () => {
  it("joins the same dialogue as follow_up, issues no new token, and the old token keeps working", async () => {
    const { contactId, token, dialogueId } = await openDialogue("first message");
    const logs = captureConsole();
    const answer = await propose({ summary: "second message", previous_contact_id: contactId.toUpperCase().replace("MC_", "Mc_"), dialogue_token: token, is_test: true });
    expect(answer.isError).toBe(false);
    expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "joined" } });
    expect(Object.keys(answer.structured!.dialogue)).toEqual(["status", "message"]);
    expect(answer.text).not.toContain(token);
    const [membership] = await selectRows<Structured>("SELECT * FROM dialogue_contacts WHERE contact_id = ?", answer.structured!.contact_id);
    expect(membership).toMatchObject({ dialogue_id: dialogueId, role: "follow_up" });
    expect(await countRows("dialogues", "dialogue_id = ?", dialogueId)).toBe(1);
    expect(assertValidEvent(logs.events()[0])).toMatchObject({
      tool_result: "accepted_for_human_review",
      dialogue_token_issued: false,
      dialogue_joined: true,
      has_previous_contact: true,
    });

    // A follow-up of the follow-up, and a fetch through the new contact, with the same token.
    const third = await propose({ summary: "third", previous_contact_id: answer.structured!.contact_id, dialogue_token: token, is_test: true });
    expect(third.structured!.dialogue.status).toBe("joined");
    await insertReply(dialogueId, contactId, "reply");
    expect((await fetchReply({ contact_id: third.structured!.contact_id, dialogue_token: token })).structured!.status).toBe("reply_delivered");
  });

  it("an identical retry of a follow-up answers joined with duplicate: true and stores nothing new", async () => {
    const { contactId, token } = await openDialogue("root");
    const args = { summary: "follow-up retried", previous_contact_id: contactId, dialogue_token: token, submission_id: crypto.randomUUID(), is_test: true };
    const first = (await propose(args)).structured!;
    const again = (await propose(args)).structured!;
    expect(again).toMatchObject({ contact_id: first.contact_id, duplicate: true, dialogue: { status: "joined" } });
    expect(await countRows("dialogue_contacts", "contact_id = ?", first.contact_id)).toBe(1);
  });
});

describe("refused follow-ups (07 §3 case B step 1)", () => {
  it("wrong token, unknown contact, contact without dialogue and revoked dialogue: byte-identical to fetch's dialogue_not_found, nothing stored", async () => {
    const { contactId, token } = await openDialogue("guarded");
    const plain = (await propose({ summary: "no dialogue" }, {})).structured!;
    const revoked = await openDialogue("revoked");
    await db().prepare("UPDATE dialogues SET revoked_at = ? WHERE dialogue_id = ?").bind(new Date().toISOString(), revoked.dialogueId).run();
    const contacts = await countRows("contacts");
    const memberships = await countRows("dialogue_contacts");

    const logs = captureConsole();
    const refusals = [
      await propose({ summary: "x", previous_contact_id: contactId, dialogue_token: WRONG }),
      await propose({ summary: "x", previous_contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: token }),
      await propose({ summary: "x", previous_contact_id: plain.contact_id, dialogue_token: token }),
      await propose({ summary: "x", previous_contact_id: revoked.contactId, dialogue_token: revoked.token }),
    ];
    const fetched = await fetchReply({ contact_id: contactId, dialogue_token: WRONG });
    for (const refusal of [...refusals, fetched]) {
      expect(refusal.isError).toBe(true);
      expect(refusal.text).toBe(fetched.text);
    }
    expect(fetched.structured).toEqual({ status: "dialogue_not_found", message: expect.any(String) });
    expect(await countRows("contacts")).toBe(contacts);
    expect(await countRows("dialogue_contacts")).toBe(memberships);
    const events = logs.events();
    for (const event of events) assertValidEvent(event);
    expect(events.slice(0, 4).map((event) => [event.tool_result, event.rate_limited])).toEqual(Array(4).fill(["dialogue_not_found", false]));
    expect(events.slice(0, 4).every((event) => event.contact_id === undefined)).toBe(true);
  });
});

describe("attempt limits (07 §5.3)", () => {
  it("the 11th wrong attempt in an hour is rate_limited; the right token is served meanwhile and never counted", async () => {
    const { contactId, token, dialogueId } = await openDialogue("limit me");
    await insertReply(dialogueId, contactId, "still yours");
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      const tool = attempt % 2 === 0 ? fetchReply : (args: Record<string, unknown>) => propose({ summary: "guess", previous_contact_id: args.contact_id, dialogue_token: args.dialogue_token });
      expect((await tool({ contact_id: contactId, dialogue_token: WRONG })).structured!.status).toBe("dialogue_not_found");
    }
    expect(await attemptsOf(contactId)).toBe(10);

    const logs = captureConsole();
    const limited = await fetchReply({ contact_id: contactId, dialogue_token: WRONG });
    expect(limited.isError).toBe(true);
    expect(Object.keys(limited.structured!)).toEqual(["status", "retry_after_s", "message"]);
    expect(limited.structured).toMatchObject({ status: "rate_limited" });
    expect(limited.structured!.retry_after_s).toBeGreaterThanOrEqual(1);
    expect(limited.structured!.retry_after_s).toBeLessThanOrEqual(3600);
    const limitedFollowUp = await propose({ summary: "guess", previous_contact_id: contactId, dialogue_token: WRONG });
    expect(limitedFollowUp.structured).toMatchObject({ status: "rate_limited" });
    expect(logs.events().map((event) => event.tool_result)).toEqual(["rate_limited", "rate_limited"]);
    expect(logs.events()[1]).toMatchObject({ rate_limited: false });

    // The right token: served, joined, and not counted.
    const before = await attemptsOf(contactId);
    expect((await fetchReply({ contact_id: contactId, dialogue_token: token })).structured!.status).toBe("reply_delivered");
    expect((await propose({ summary: "rightful follow-up", previous_contact_id: contactId, dialogue_token: token, is_test: true })).structured!.dialogue.status).toBe("joined");
    expect(await attemptsOf(contactId)).toBe(before);
  });

  it("an unknown contact id is limited the same way, and the next hour's window starts afresh", async () => {
    const unknown = `mc_${crypto.randomUUID()}`;
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      expect((await fetchReply({ contact_id: unknown, dialogue_token: WRONG })).structured!.status).toBe("dialogue_not_found");
    }
    expect((await fetchReply({ contact_id: unknown.toUpperCase().replace("MC_", "mc_"), dialogue_token: WRONG })).structured!.status).toBe("rate_limited");
    // Move the counted window one hour back: the current hour has no failures yet.
    const key = await sha256Hex(`dialogue:${unknown}`);
    const [row] = await selectRows<{ window_start: string }>("SELECT window_start FROM dialogue_fetch_attempts WHERE key_hash = ?", key);
    expect(row!.window_start).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
    const previousHour = new Date(Date.parse(row!.window_start) - 3_600_000).toISOString();
    await db().prepare("UPDATE dialogue_fetch_attempts SET window_start = ? WHERE key_hash = ?").bind(previousHour, key).run();
    expect((await fetchReply({ contact_id: unknown, dialogue_token: WRONG })).structured!.status).toBe("dialogue_not_found");
  });
});

describe("wrong attempts take the public-write budget before they write (01 §14, 07 §5.3)", () => {
  it("300 random wrong fetches from one address add at most the budget's 20 rows; the right token still fetches at once", async () => {
    const { contactId, token, dialogueId } = await openDialogue("budget me");
    await insertReply(dialogueId, contactId, "still yours");
    const limiter = fakeRateLimiter(); // 20 per key, the default of wrangler.jsonc
    const overrides = { ...DIALOGUE_ON, PUBLIC_WRITES: limiter };
    const options = { headers: { "cf-connecting-ip": "203.0.113.17" } };
    const wrongFetch = (contact_id: string) => call("fetch_contact_reply", { contact_id, dialogue_token: WRONG }, overrides, options);
    const rowsBefore = await countRows("dialogue_fetch_attempts");
    const logs = captureConsole();

    const answers = [];
    for (let batch = 0; batch < 10; batch += 1) {
      answers.push(...(await Promise.all(Array.from({ length: 30 }, () => wrongFetch(`mc_${crypto.randomUUID()}`)))));
    }
    expect((await countRows("dialogue_fetch_attempts")) - rowsBefore).toBeLessThanOrEqual(20);
    expect(limiter.keys).toHaveLength(300);
    expect(new Set(limiter.keys).size).toBe(1);
    const refused = answers.filter((answer) => answer.structured?.status === "rate_limited");
    expect(answers.filter((answer) => answer.structured?.status === "dialogue_not_found")).toHaveLength(20);
    expect(refused).toHaveLength(280);
    for (const answer of refused) {
      expect(answer.isError).toBe(true);
      expect(answer.structured).toEqual({ status: "rate_limited", retry_after_s: 60, message: refused[0]!.structured!.message });
    }
    const events = logs.events();
    for (const event of events) assertValidEvent(event);
    expect(events.filter((event) => event.tool_result === "rate_limited" && event.rate_limited === true)).toHaveLength(280);
    expect(events.filter((event) => event.tool_result === "dialogue_not_found" && event.rate_limited === false)).toHaveLength(20);

    // A wrong token for a real contact, budget spent: refused the same way, and nothing is counted.
    const known = await wrongFetch(contactId);
    expect(known.structured).toEqual(refused[0]!.structured);
    expect(await attemptsOf(contactId)).toBe(0);
    // The attempt limit's own refusal has the same status, fields and message.
    for (let attempt = 0; attempt <= 10; attempt += 1) await fetchReply({ contact_id: contactId, dialogue_token: WRONG });
    const attemptLimited = (await fetchReply({ contact_id: contactId, dialogue_token: WRONG })).structured!;
    expect(Object.keys(attemptLimited)).toEqual(Object.keys(refused[0]!.structured!));
    expect(attemptLimited).toMatchObject({ status: "rate_limited", message: refused[0]!.structured!.message });

    // The right token, same address, budget long spent: served at once, and the budget is never consulted.
    const consulted = limiter.keys.length;
    const right = await call("fetch_contact_reply", { contact_id: contactId, dialogue_token: token }, overrides, options);
    expect(right.structured).toMatchObject({ status: "reply_delivered", reply: { text: "still yours" } });
    expect(limiter.keys).toHaveLength(consulted);
  }, 60_000); // 300 door calls: room for a slow shared machine, not a timing assertion

  it("a wrong follow-up is charged once (propose_contact took the budget up front), and a right fetch never", async () => {
    const { contactId, token } = await openDialogue("charged once");
    const limiter = fakeRateLimiter();
    const overrides = { ...DIALOGUE_ON, PUBLIC_WRITES: limiter };
    const wrongFollowUp = await propose({ summary: "guess", previous_contact_id: contactId, dialogue_token: WRONG }, overrides);
    expect(wrongFollowUp.structured).toMatchObject({ status: "dialogue_not_found" });
    expect(limiter.keys).toHaveLength(1);
    expect((await fetchReply({ contact_id: contactId, dialogue_token: token }, overrides)).structured).toMatchObject({ status: "no_reply_pending" });
    expect(limiter.keys).toHaveLength(1);
    expect((await fetchReply({ contact_id: contactId, dialogue_token: WRONG }, overrides)).structured).toMatchObject({ status: "dialogue_not_found" });
    expect(limiter.keys).toHaveLength(2);
    expect(await attemptsOf(contactId)).toBe(2);
  });
});

describe("limits and faults around case B", () => {
  it("the public-write limit applies before the token is checked: nothing counted, nothing stored", async () => {
    const { contactId, token } = await openDialogue("public limit");
    const limiter = fakeRateLimiter({ limit: 0 });
    const answer = await propose({ summary: "over the limit", previous_contact_id: contactId, dialogue_token: WRONG }, { ...DIALOGUE_ON, PUBLIC_WRITES: limiter });
    expect(answer.structured).toMatchObject({ status: "rate_limited", retry_after_s: 60 });
    expect(await attemptsOf(contactId)).toBe(0);
    const right = await propose({ summary: "over the limit", previous_contact_id: contactId, dialogue_token: token }, { ...DIALOGUE_ON, PUBLIC_WRITES: limiter });
    expect(right.structured).toMatchObject({ status: "rate_limited", retry_after_s: 60 });
  });

  it("a failing batch is not_saved with no receipt and no token; a failing lookup is not_saved / storage_error", async () => {
    const { contactId, token } = await openDialogue("faults");
    const contacts = await countRows("contacts");
    const batchFails = { ...DIALOGUE_ON, CONTACTS: faultyD1(env.CONTACTS!, { failBatches: true, message: "CANARYd1batch" }) };
    for (const args of [{ summary: "new dialogue" }, { summary: "follow-up", previous_contact_id: contactId, dialogue_token: token }]) {
      const answer = await propose(args, batchFails);
      expect(answer.structured).toEqual({ status: "not_saved", code: "storage_unavailable", message: expect.any(String) });
      expect(answer.text).not.toContain("dt_");
    }
    expect(await countRows("contacts")).toBe(contacts);

    const lookupFails = { ...DIALOGUE_ON, CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /FROM dialogue_contacts dc JOIN dialogues/ }) };
    expect((await propose({ summary: "follow-up", previous_contact_id: contactId, dialogue_token: token }, lookupFails)).structured!.status).toBe("not_saved");
    expect((await fetchReply({ contact_id: contactId, dialogue_token: token }, lookupFails)).structured).toEqual({ status: "storage_error", message: expect.any(String) });
    const claimFails = { ...DIALOGUE_ON, CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /UPDATE dialogue_replies/ }) };
    expect((await fetchReply({ contact_id: contactId, dialogue_token: token }, claimFails)).structured!.status).toBe("storage_error");
  });

});
