/**
 * Concurrency on every write path (issue 14, 10 §4), each case fired together
 * with `Promise.all` against one real local D1:
 *   - 100 identical retries of propose_contact (plain and with a dialogue) and
 *     of contribute_task_signal → one row each, identical receipts, exactly one
 *     `duplicate: false` / `accepted`;
 *   - 100 conflicting submissions under one submission id → one row, every
 *     other answer `submission_conflict`;
 *   - overlapping cron runs (same clock, and a second run that finds the first
 *     one's lease expired) → no row sent twice (fake Telegram counts);
 *   - concurrent fetch_contact_reply on a dialogue with k pending replies →
 *     every reply newly delivered exactly once, none skipped;
 *   - concurrent owner_save_draft at one revision, owner_publish_reply of one
 *     draft, and a publish racing a save → one winner, the text published is
 *     the text reviewed;
 *   - concurrent redemptions of one authorization code, and concurrent refreshes
 *     with one refresh token → exactly one token response; the refresh family
 *     is revoked as 06 §3.5 says (handlers on core's real D1 spent ledger);
 *   - 30 concurrent contributions from one address with the write limit at 20.
 */
import { createScheduledController } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runScheduled } from "../../worker/notify/index";
import { fakeRateLimiter } from "../fakes/faulty-d1";
import { fakeTelegram } from "../fakes/telegram";
import { doorEnv } from "../helpers/door";
import { countRows, db, selectRows } from "../helpers/db";
import { callToolModern } from "../helpers/mcp";
import { exchange, harness, link, refresh, token, type TokenSet } from "../helpers/owner";
import { DIALOGUE_ON, expectedToken, insertReply, openDialogue } from "./dialogue-harness";
import { addContact, clock, cron, NOTIFY_ON, outbox, pinActivation, resetNotifyTables } from "./notify-harness";
import { ownerStack, ownerTool } from "./owner-stack";

type Structured = Record<string, any>;
const N = 100;

async function call(name: string, args: unknown, overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const { result } = await callToolModern(name, args, { overrides, headers });
  return { structured: result!.structuredContent as Structured, isError: result!.isError === true };
}

const together = <T>(count: number, make: (index: number) => Promise<T>) => Promise.all(Array.from({ length: count }, (_, index) => make(index)));

describe("write-once submissions under concurrency (02 §5.3, 03 §8.2)", () => {
  it(`${N} identical propose_contact retries → one row, one receipt, exactly one duplicate: false`, async () => {
    const args = { summary: "concurrent hello", reply_to: "agent@example.com", submission_id: crypto.randomUUID(), is_test: true };
    const answers = await together(N, () => call("propose_contact", args));
    expect(await countRows("contacts", "submission_id = ?", args.submission_id)).toBe(1);
    const [row] = await selectRows<Structured>("SELECT contact_id, created_at FROM contacts WHERE submission_id = ?", args.submission_id);
    for (const answer of answers) {
      expect(answer.isError).toBe(false);
      expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", contact_id: row!.contact_id, received_at: row!.created_at });
    }
    expect(answers.filter((answer) => answer.structured.duplicate === false)).toHaveLength(1);
    // Identical receipts: apart from `duplicate`, every answer is the same object.
    const strip = ({ duplicate: _duplicate, message: _message, ...rest }: Structured) => rest;
    expect(new Set(answers.map((answer) => JSON.stringify(strip(answer.structured)))).size).toBe(1);
  });

  it(`${N} conflicting propose_contact under one submission id → one row; the other ${N - 1} are submission_conflict`, async () => {
    const submission_id = crypto.randomUUID();
    const answers = await together(N, (index) => call("propose_contact", { summary: `content number ${index}`, submission_id, is_test: true }));
    expect(await countRows("contacts", "submission_id = ?", submission_id)).toBe(1);
    const [row] = await selectRows<Structured>("SELECT contact_id, summary FROM contacts WHERE submission_id = ?", submission_id);
    const winner = Number(/content number (\d+)/.exec(row!.summary)![1]);
    answers.forEach((answer, index) => {
      if (index === winner) expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", contact_id: row!.contact_id, duplicate: false });
      else {
        expect(answer.isError).toBe(true);
        expect(answer.structured).toEqual({ status: "submission_conflict", message: expect.any(String) });
      }
    });
  });

  it(`${N} identical propose_contact with the dialogue on → one contact, one dialogue, the same token in every answer`, async () => {
    const args = { summary: "concurrent dialogue", submission_id: crypto.randomUUID(), is_test: true };
    const dialoguesBefore = await countRows("dialogues");
    const answers = await together(N, () => call("propose_contact", args, DIALOGUE_ON));
    expect(await countRows("contacts", "submission_id = ?", args.submission_id)).toBe(1);
    expect(await countRows("dialogues")).toBe(dialoguesBefore + 1);
    const [row] = await selectRows<Structured>(
      "SELECT c.contact_id, dc.dialogue_id, dc.role FROM contacts c JOIN dialogue_contacts dc ON dc.contact_id = c.contact_id WHERE c.submission_id = ?",
      args.submission_id,
    );
    expect(row!.role).toBe("root");
    const tokenOfDialogue = await expectedToken(row!.dialogue_id);
    for (const answer of answers) {
      expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", contact_id: row!.contact_id, dialogue: { status: "token_issued", dialogue_token: tokenOfDialogue } });
    }
    expect(answers.filter((answer) => answer.structured.duplicate === false)).toHaveLength(1);
  });

  it(`${N} identical contribute_task_signal retries → one row; one accepted, ${N - 1} duplicate, one signal_id`, async () => {
    const args = { goal: "concurrent goal", learned: "one row only", submission_id: crypto.randomUUID(), is_test: true };
    const answers = await together(N, () => call("contribute_task_signal", args));
    expect(await countRows("task_signals", "submission_id = ?", args.submission_id)).toBe(1);
    const [row] = await selectRows<Structured>("SELECT signal_id FROM task_signals WHERE submission_id = ?", args.submission_id);
    expect(answers.filter((answer) => answer.structured.status === "accepted")).toHaveLength(1);
    expect(answers.filter((answer) => answer.structured.status === "duplicate")).toHaveLength(N - 1);
    for (const answer of answers) expect(answer.structured.signal_id).toBe(row!.signal_id);
  });

  it(`${N} conflicting contribute_task_signal under one submission id → one row; the rest submission_conflict`, async () => {
    const submission_id = crypto.randomUUID();
    const answers = await together(N, (index) => call("contribute_task_signal", { goal: `goal number ${index}`, submission_id, is_test: true }));
    expect(await countRows("task_signals", "submission_id = ?", submission_id)).toBe(1);
    expect(answers.filter((answer) => answer.structured.status === "accepted")).toHaveLength(1);
    const conflicts = answers.filter((answer) => answer.structured.status === "submission_conflict");
    expect(conflicts).toHaveLength(N - 1);
    for (const answer of conflicts) expect(answer.isError).toBe(true);
  });

  it("30 concurrent contributions from one address with PUBLIC_WRITES at 20 → exactly 20 rows; every other answer rate_limited", async () => {
    const limiter = fakeRateLimiter({ limit: 20 });
    const batch = crypto.randomUUID();
    const answers = await together(30, (index) =>
      call("contribute_task_signal", { goal: `flood ${batch} ${index}`, is_test: true }, { PUBLIC_WRITES: limiter }, { "cf-connecting-ip": "203.0.113.99" }),
    );
    expect(await countRows("task_signals", "goal LIKE ?", `flood ${batch} %`)).toBe(20);
    expect(answers.filter((answer) => answer.structured.status === "accepted")).toHaveLength(20);
    const limited = answers.filter((answer) => answer.structured.status === "rate_limited");
    expect(limited).toHaveLength(10);
    for (const answer of limited) expect(answer.isError).toBe(true);
  });
});

describe("overlapping cron runs (05 §5 step 4, step 9)", () => {
  /** Telegram answers ok after a short pause, so the runs really interleave; sends are counted per outbox row. */
  function slowTelegram() {
    const telegram = fakeTelegram();
    let messageId = 5000;
    telegram.fallback = () =>
      new Promise<Response>((resolve) =>
        setTimeout(() => {
          messageId += 1;
          resolve(Response.json({ ok: true, result: { message_id: messageId } }));
        }, 3),
      );
    return {
      telegram,
      /** Sends per outbox row, by the delivery reference every message carries (05 §7). */
      sendsPerRow(): Map<string, number> {
        const counts = new Map<string, number>();
        for (const text of telegram.texts()) {
          const ref = /ref: ([0-9a-f]{8})#/.exec(text)?.[1];
          expect(ref, "a message without its delivery reference").toBeDefined();
          counts.set(ref!, (counts.get(ref!) ?? 0) + 1);
        }
        return counts;
      },
    };
  }

  async function seedContacts(count: number): Promise<void> {
    clock.reset();
    await resetNotifyTables();
    await pinActivation(clock.iso(-3600));
    for (let index = 0; index < count; index += 1) await addContact({ createdAt: clock.iso(-3000 + index) });
  }

  it("two runs at once, round after round: one holds the lease, every contact is sent exactly once", async () => {
    const { telegram, sendsPerRow } = slowTelegram();
    await seedContacts(12);
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round += 1) {
      const events = await Promise.all([cron(), cron()]);
      outcomes.push(...events.map((event) => event.outcome).sort());
      clock.advance(60);
    }
    expect(outcomes.filter((outcome) => outcome === "ok")).toHaveLength(4);
    expect(outcomes.filter((outcome) => outcome === "lease_busy")).toHaveLength(4);
    const rows = await outbox();
    expect(rows).toHaveLength(12);
    expect(rows.every((row) => row.state === "delivered" && row.attempts === 1)).toBe(true);
    expect(telegram.requests).toHaveLength(12);
    expect([...sendsPerRow().values()].every((count) => count === 1)).toBe(true);
    expect(new Set(rows.map((row) => row.outbox_id.slice(-8)))).toEqual(new Set(sendsPerRow().keys()));
  });

  it("a second run that finds the first one's lease expired takes over; the first stops (lease_lost); no row is sent twice", async () => {
    const { telegram, sendsPerRow } = slowTelegram();
    await seedContacts(5);
    const env = doorEnv({ ...NOTIFY_ON });
    const start = clock.ms;
    // Run A's clock stands still; run B's clock is 56 s later: A's 55 s lease has expired for B.
    const runA = runScheduled(createScheduledController({ cron: "* * * * *", scheduledTime: start }), env, "monolith", {
      now: () => new Date(start),
      telegramTimeoutMs: 50,
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const runB = runScheduled(createScheduledController({ cron: "* * * * *", scheduledTime: start + 56_000 }), env, "monolith", {
      now: () => new Date(start + 56_000),
      telegramTimeoutMs: 50,
    });
    const [a, b] = await Promise.all([runA, runB]);
    expect(a.delivered + b.delivered).toBe(5);
    expect(b.outcome).toBe("ok");
    expect(["ok", "lease_lost"]).toContain(a.outcome);
    expect(telegram.requests).toHaveLength(5);
    expect([...sendsPerRow().values()].every((count) => count === 1)).toBe(true);
    expect((await outbox()).every((row) => row.state === "delivered")).toBe(true);
  });
});

describe("concurrent fetch_contact_reply (07 §5.2 step 4)", () => {
  it("20 concurrent fetches with 5 pending replies → each reply newly delivered exactly once, 15 none pending, none skipped", async () => {
    const { contactId, token, dialogueId } = await openDialogue("five replies please");
    const replies = [];
    for (let index = 0; index < 5; index += 1) replies.push(await insertReply(dialogueId, contactId, `reply ${index}`));
    const answers = await together(20, () => call("fetch_contact_reply", { contact_id: contactId, dialogue_token: token }, DIALOGUE_ON));
    const delivered = answers.filter((answer) => answer.structured.status === "reply_delivered");
    expect(delivered.every((answer) => answer.structured.redelivered === false)).toBe(true);
    const ids = delivered.map((answer) => answer.structured.reply.reply_id as string);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    expect([...ids].sort()).toEqual(replies.map((reply) => reply.replyId).sort());
    expect(answers.filter((answer) => answer.structured.status === "no_reply_pending")).toHaveLength(15);
    // Each delivered answer carries the text of the reply it names, and the mark the store kept.
    for (const answer of delivered) {
      const [row] = await selectRows<Structured>("SELECT body, fetched_at FROM dialogue_replies WHERE reply_id = ?", answer.structured.reply.reply_id);
      expect(answer.structured.reply.text).toBe(row!.body);
      expect(answer.structured.fetched_at).toBe(row!.fetched_at);
    }
    const after = await call("fetch_contact_reply", { contact_id: contactId, dialogue_token: token }, DIALOGUE_ON);
    expect(after.structured.status).toBe("no_reply_pending");
    expect(after.structured.delivered_replies.map((entry: Structured) => entry.reply_id).sort()).toEqual([...ids].sort());
  });

  it("fetches racing the publication of new replies never skip one: every reply is delivered exactly once in the end", async () => {
    const { contactId, token, dialogueId } = await openDialogue("replies arrive while fetching");
    const published: string[] = [];
    const fetches: Promise<{ structured: Structured }>[] = [];
    for (let index = 0; index < 6; index += 1) {
      published.push((await insertReply(dialogueId, contactId, `late reply ${index}`)).replyId);
      fetches.push(call("fetch_contact_reply", { contact_id: contactId, dialogue_token: token }, DIALOGUE_ON));
      fetches.push(call("fetch_contact_reply", { contact_id: contactId, dialogue_token: token }, DIALOGUE_ON));
    }
    const first = await Promise.all(fetches);
    const delivered = first.filter((answer) => answer.structured.status === "reply_delivered").map((answer) => answer.structured.reply.reply_id as string);
    // Whatever the first wave missed, sequential fetches now deliver, each once.
    for (;;) {
      const next = await call("fetch_contact_reply", { contact_id: contactId, dialogue_token: token }, DIALOGUE_ON);
      if (next.structured.status !== "reply_delivered") break;
      delivered.push(next.structured.reply.reply_id);
    }
    expect(delivered).toHaveLength(6);
    expect([...delivered].sort()).toEqual([...published].sort());
  });
});

describe("owner writes under concurrency (06 §6.3, 07 §4.1)", () => {
  async function ownerSession(scope = "owner.read owner.write owner.publish") {
    const h = harness();
    h.time.now = Date.now();
    const tokens = await exchange(h, await link(h, { scope }));
    const stack = ownerStack(h.env);
    return { h, tokens, run: (name: string, args: unknown) => ownerTool(stack, tokens.access_token, name, args) };
  }

  async function draftOf(contactId: string, body: string): Promise<string> {
    const draftId = `dr_${crypto.randomUUID()}`;
    const now = new Date().toISOString();
    await db().prepare("INSERT INTO owner_drafts (draft_id, contact_id, body, revision, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)").bind(draftId, contactId, body, now, now).run();
    return draftId;
  }

  it("20 concurrent saves at one revision → exactly one draft_saved (revision 2), 19 revision_conflict; the stored text is the winner's", async () => {
    const { run } = await ownerSession();
    const contactId = await addContact({ createdAt: new Date().toISOString() });
    const draftId = await draftOf(contactId, "first text");
    const answers = await together(20, (index) => run("owner_save_draft", { contact_id: contactId, draft_id: draftId, expected_revision: 1, text: `edit ${index}` }));
    const saved = answers.filter((answer) => answer.structured?.status === "draft_saved");
    expect(saved).toHaveLength(1);
    expect(saved[0]!.structured).toMatchObject({ revision: 2 });
    expect(answers.filter((answer) => answer.structured?.status === "revision_conflict")).toHaveLength(19);
    const winner = answers.indexOf(saved[0]!);
    expect(await selectRows("SELECT body, revision FROM owner_drafts WHERE draft_id = ?", draftId)).toEqual([{ body: `edit ${winner}`, revision: 2 }]);
  });

  it("20 concurrent publications of one draft → one reply_published, 19 already_published with the same reply, one row", async () => {
    const { run } = await ownerSession();
    const { contactId } = await openDialogue("publish once");
    const draftId = await draftOf(contactId, "the reviewed reply");
    const answers = await together(20, () => run("owner_publish_reply", { draft_id: draftId, expected_revision: 1 }));
    expect(await countRows("dialogue_replies", "draft_id = ?", draftId)).toBe(1);
    const [row] = await selectRows<Structured>("SELECT reply_id, body FROM dialogue_replies WHERE draft_id = ?", draftId);
    expect(row!.body).toBe("the reviewed reply");
    expect(answers.filter((answer) => answer.structured?.status === "reply_published")).toHaveLength(1);
    expect(answers.filter((answer) => answer.structured?.status === "already_published")).toHaveLength(19);
    for (const answer of answers) expect(answer.structured!.reply_id).toBe(row!.reply_id);
  });

  it("a publication racing saves publishes exactly the reviewed revision, or nothing", async () => {
    const { run } = await ownerSession();
    const { contactId } = await openDialogue("publish while editing");
    const draftId = await draftOf(contactId, "reviewed revision 1");
    const [publish, ...saves] = await Promise.all([
      run("owner_publish_reply", { draft_id: draftId, expected_revision: 1 }),
      ...Array.from({ length: 5 }, (_, index) => run("owner_save_draft", { contact_id: contactId, draft_id: draftId, expected_revision: 1, text: `late edit ${index}` })),
    ]);
    const replies = await selectRows<Structured>("SELECT body, draft_revision FROM dialogue_replies WHERE draft_id = ?", draftId);
    if (publish!.structured?.status === "reply_published") {
      expect(replies).toEqual([{ body: "reviewed revision 1", draft_revision: 1 }]);
      // Once published the draft is immutable: no save reports success after the publication.
      const [draft] = await selectRows<Structured>("SELECT body, revision FROM owner_drafts WHERE draft_id = ?", draftId);
      const savedCount = saves.filter((answer) => answer.structured?.status === "draft_saved").length;
      expect(savedCount).toBeLessThanOrEqual(1);
      if (savedCount === 0) expect(draft).toEqual({ body: "reviewed revision 1", revision: 1 });
    } else {
      expect(publish!.structured).toMatchObject({ status: "revision_conflict" });
      expect(replies).toEqual([]);
    }
  });
});

describe("owner OAuth under concurrency (06 §3.5)", () => {
  it("10 concurrent redemptions of one authorization code → exactly one token response", async () => {
    const h = harness();
    h.time.now = Date.now();
    const linked = await link(h);
    const form = { grant_type: "authorization_code", code: linked.code, redirect_uri: linked.redirectUri, client_id: linked.clientId, code_verifier: linked.verifier };
    const answers = await together(10, () => token(h, form));
    const statuses = answers.map((answer) => answer.response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(9);
    for (const answer of answers.filter((item) => item.response.status === 400)) {
      expect(((await answer.response.json()) as Structured).error).toBe("invalid_grant");
    }
  });

  it("10 concurrent refreshes with one refresh token → exactly one succeeds; the reuse revokes the family, so its new refresh token is refused too", async () => {
    const h = harness();
    h.time.now = Date.now();
    const linked = await link(h, { scope: "owner.read owner.write" });
    const tokens = await exchange(h, linked);
    const familiesBefore = await countRows("owner_oauth_spent", "kind = 'family'");
    const answers = await together(10, () => refresh(h, linked.clientId, tokens.refresh_token));
    const winners = answers.filter((answer) => answer.response.status === 200);
    expect(winners).toHaveLength(1);
    const losers = answers.filter((answer) => answer.response.status !== 200);
    expect(losers).toHaveLength(9);
    for (const answer of losers) {
      expect(answer.response.status).toBe(400);
      expect(((await answer.response.json()) as Structured).error).toBe("invalid_grant");
    }
    // 06 §3.5: a spent jti presented again revokes its family (`family:<fam>` spent) …
    expect(await countRows("owner_oauth_spent", "kind = 'family'")).toBe(familiesBefore + 1);
    expect(await countRows("owner_oauth_spent", "kind = 'refresh'")).toBeGreaterThanOrEqual(1);
    // … so the refresh token the winner received is refused as well, and the owner must link again.
    const issued = (await winners[0]!.response.json()) as TokenSet;
    const next = await refresh(h, linked.clientId, issued.refresh_token);
    expect(next.response.status).toBe(400);
    expect(await next.response.json()).toMatchObject({ error: "invalid_grant" });
    // The access token already issued stays valid until it expires (06 §3.5, residual validity).
    const { run } = { run: (name: string, args: unknown) => ownerTool(ownerStack(h.env), issued.access_token, name, args) };
    expect((await run("owner_list_contacts", { limit: 1 })).structured).toMatchObject({ status: "ok" });
  });
});
