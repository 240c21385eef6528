/**
 * The cron run of 05 §5 against the real local D1 and the fake Telegram of
 * 10 §2: configuration checks, the activation and chat pins, discovery, the
 * lease, the per-run limits and every row of the state machine of 05 §4.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { fakeTelegram } from "../fakes/telegram";
import { faultyD1 } from "../fakes/faulty-d1";
import { captureConsole } from "../helpers/door";
import { countRows, db, selectRows } from "../helpers/db";
import { CLEANUP_BATCH_ROWS, CLEANUP_BATCHES_PER_RUN } from "../../worker/notify/cleanup";
import {
  addContact,
  addObservation,
  CHAT_ID,
  clock,
  cron,
  forceOutboxRow,
  outbox,
  outboxRow,
  resetNotifyTables,
  state,
  TOKEN,
} from "./notify-harness";

beforeEach(async () => {
  clock.reset();
  await resetNotifyTables();
});

describe("switches and configuration (05 §5 steps 1–2)", () => {
  it("reads and writes nothing while the flag is not exactly \"true\"", async () => {
    for (const value of [undefined, "TRUE", " true", "true ", "1", "yes", ""]) {
      const faulty = faultyD1(db());
      const event = await cron({ TELEGRAM_NOTIFICATIONS_ENABLED: value, CONTACTS: faulty });
      expect(event.outcome).toBe("disabled");
      expect(faulty.statements).toEqual([]);
    }
    expect(await state()).toBeUndefined();
  });

  it.each([
    ["no D1 binding", { CONTACTS: undefined }],
    ["no token", { TELEGRAM_BOT_TOKEN: undefined }],
    ["no chat id", { TELEGRAM_OWNER_CHAT_ID: undefined }],
    ["an empty token", { TELEGRAM_BOT_TOKEN: "" }],
    ["a token that could add path segments", { TELEGRAM_BOT_TOKEN: "123:abc/../../evil" }],
    ["a chat id that is not an id", { TELEGRAM_OWNER_CHAT_ID: "12 34" }],
  ])("is misconfigured with %s: nothing read, nothing sent", async (_label, overrides) => {
    const telegram = fakeTelegram();
    await addContact({ createdAt: clock.iso() });
    const faulty = faultyD1(db());
    const event = await cron({ CONTACTS: faulty, ...overrides });
    expect(event.outcome).toBe("misconfigured");
    expect(faulty.statements).toEqual([]);
    expect(telegram.requests).toEqual([]);
  });

  it.each([
    "https://evil.example",
    "http://evil.example",
    "https://localhost:8443",
    "http://127.0.0.1:9000/",
    "http://127.0.0.1:9000/path",
    "http://127.0.0.1:9000?x=1",
    "http://user@127.0.0.1:9000",
    "http://LOCALHOST:9000",
    "http://127.0.0.2:9000",
    "http://[::1]:7000/",
    "http://0.0.0.0:9000",
    "https://api.telegram.org/",
    "",
    "not a url",
  ])("refuses TELEGRAM_API_ORIGIN=%j as misconfigured (loopback http origins only)", async (origin) => {
    const telegram = fakeTelegram();
    await addContact({ createdAt: clock.iso() });
    const event = await cron({ TELEGRAM_API_ORIGIN: origin });
    expect(event.outcome).toBe("misconfigured");
    expect(telegram.requests).toEqual([]);
    expect(await countRows("notification_outbox")).toBe(0);
  });

  it.each([
    ["http://127.0.0.1:9000", "127.0.0.1:9000"],
    ["http://localhost:8081", "localhost:8081"],
    ["http://[::1]:7000", "[::1]:7000"],
    ["http://localhost", "localhost"],
    ["https://api.telegram.org", "api.telegram.org"],
  ])("sends to the loopback stand-in %s", async (origin, host) => {
    const standIn = fakeTelegram(host);
    await cron({ TELEGRAM_API_ORIGIN: origin });
    await addContact({ createdAt: clock.iso(1) });
    clock.advance(2);
    const event = await cron({ TELEGRAM_API_ORIGIN: origin });
    expect(event).toMatchObject({ outcome: "ok", delivered: 1 });
    expect(standIn.requests).toHaveLength(1);
    expect(standIn.requests[0]!.url).toBe(`${origin}/bot${TOKEN}/sendMessage`);
  });
});

describe("delivery of a new contact", () => {
  it("sends exactly one message, records it, and sends nothing on the next run", async () => {
    const telegram = fakeTelegram();
    const first = await cron();
    expect(first).toMatchObject({ outcome: "ok", discovered: 0, attempted: 0 });
    const contactId = await addContact({ createdAt: clock.iso(5), replyTo: "mailto:someone@example.com" });
    clock.advance(60);

    const event = await cron();
    expect(event).toMatchObject({ outcome: "ok", discovered: 1, attempted: 1, delivered: 1, retried: 0, failed: 0, skipped: 0 });
    expect(telegram.requests).toHaveLength(1);
    const request = telegram.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(request.contentType).toBe("application/json");
    expect(request.redirect).toBe("manual");
    expect(request.body).toEqual({ chat_id: Number(CHAT_ID), text: expect.any(String), link_preview_options: { is_disabled: true } });
    expect(request.body).not.toHaveProperty("parse_mode");

    const row = (await outboxRow(contactId))!;
    expect(row).toMatchObject({
      source_kind: "contact",
      state: "delivered",
      attempts: 1,
      delivered_at: clock.iso(),
      telegram_message_id: 1000,
      last_error_code: null,
      last_http_status: null,
    });
    expect(row.outbox_id).toMatch(/^nt_[0-9a-f]{32}$/);
    expect(request.body.text).toContain(`ref: ${row.outbox_id.slice(-8)}#1`);

    clock.advance(60);
    const again = await cron();
    expect(again).toMatchObject({ outcome: "ok", discovered: 0, attempted: 0, delivered: 0 });
    expect(telegram.requests).toHaveLength(1);
    expect((await state())!.lease_id).toBeNull();
  });

  it("clears the error fields of a row that failed before", async () => {
    const telegram = fakeTelegram();
    await cron();
    const contactId = await addContact({ createdAt: clock.iso(1) });
    clock.advance(2);
    telegram.queue({ status: 500 });
    expect(await cron()).toMatchObject({ retried: 1 });
    expect(await outboxRow(contactId)).toMatchObject({ state: "retry_wait", last_error_code: "http_5xx", last_http_status: 500 });
    expect((await state())!.consecutive_failures).toBe(1);
    clock.advance(60);
    expect(await cron()).toMatchObject({ delivered: 1 });
    expect(await outboxRow(contactId)).toMatchObject({ state: "delivered", attempts: 2, last_error_code: null, last_http_status: null });
    expect((await state())!.consecutive_failures).toBe(0);
  });
});

describe("activation pin and test rows", () => {
  it("pins the activation time on the first enabled run and never moves it", async () => {
    fakeTelegram();
    const before = await addContact({ createdAt: clock.iso(-3600) });
    await cron();
    const pinned = (await state())!.activated_at;
    expect(pinned).toBe(clock.iso());
    clock.advance(600);
    await cron();
    expect((await state())!.activated_at).toBe(pinned);
    expect(await outboxRow(before)).toBeUndefined();
  });

  it("never enqueues or sends a contact or observation created before activation; a forced one is skipped", async () => {
    const telegram = fakeTelegram();
    const oldContact = await addContact({ createdAt: clock.iso(-10) });
    const oldObservation = await addObservation({ createdAt: clock.iso(-5) });
    await cron();
    expect(await countRows("notification_outbox")).toBe(0);
    const forcedContact = await forceOutboxRow("contact", oldContact, { createdAt: clock.iso(-10) });
    const forcedObservation = await forceOutboxRow("observation", oldObservation, { createdAt: clock.iso(-5) });
    clock.advance(60);
    const event = await cron();
    expect(event).toMatchObject({ attempted: 2, skipped: 2, delivered: 0 });
    expect(telegram.requests).toEqual([]);
    for (const id of [forcedContact, forcedObservation]) {
      const [row] = await selectRows<{ state: string; last_error_code: string }>("SELECT * FROM notification_outbox WHERE outbox_id = ?", id);
      expect(row).toMatchObject({ state: "skipped", last_error_code: "before_activation" });
    }
  });

  it("never enqueues a test contact; a forced test row is skipped as test_source", async () => {
    const telegram = fakeTelegram();
    await cron();
    const testContact = await addContact({ createdAt: clock.iso(1), test: true });
    const testObservation = await addObservation({ createdAt: clock.iso(1), test: true });
    clock.advance(60);
    expect(await cron()).toMatchObject({ discovered: 0, attempted: 0 });
    await forceOutboxRow("contact", testContact, { createdAt: clock.iso() });
    await forceOutboxRow("observation", testObservation, { createdAt: clock.iso() });
    clock.advance(1);
    expect(await cron()).toMatchObject({ attempted: 2, skipped: 2 });
    expect(telegram.requests).toEqual([]);
    expect((await outbox()).map((row) => [row.state, row.last_error_code])).toEqual([
      ["skipped", "test_source"],
      ["skipped", "test_source"],
    ]);
  });

  it("skips a row whose source is gone as source_missing", async () => {
    const telegram = fakeTelegram();
    await cron();
    await forceOutboxRow("contact", `mc_${crypto.randomUUID()}`, { createdAt: clock.iso(1) });
    await forceOutboxRow("observation", "ob_00000000000000000000000000000000", { createdAt: clock.iso(1) });
    clock.advance(2);
    expect(await cron()).toMatchObject({ attempted: 2, skipped: 2 });
    expect(telegram.requests).toEqual([]);
    expect((await outbox()).every((row) => row.state === "skipped" && row.last_error_code === "source_missing")).toBe(true);
  });
});

describe("per-run limits (05 §5 steps 6 and 9)", () => {
  it("discovers at most 100 contacts and sends at most 5 per run, oldest first", async () => {
    const telegram = fakeTelegram();
    await cron();
    const ids: string[] = [];
    for (let i = 0; i < 120; i += 1) ids.push(await addContact({ createdAt: clock.iso(1 + i / 1000) }));
    clock.advance(10);

    expect(await cron()).toMatchObject({ discovered: 100, attempted: 5, delivered: 5 });
    expect(await countRows("notification_outbox")).toBe(100);
    expect(telegram.texts().map((text) => /id: (mc_\S+)/.exec(text)![1])).toEqual(ids.slice(0, 5));

    clock.advance(60);
    expect(await cron()).toMatchObject({ discovered: 20, attempted: 5, delivered: 5 });
    expect(await countRows("notification_outbox")).toBe(120);
    expect(telegram.requests).toHaveLength(10);
    expect(telegram.texts().map((text) => /id: (mc_\S+)/.exec(text)![1])).toEqual(ids.slice(0, 10));
  });
});

describe("the lease (05 §5 step 4, step 9)", () => {
  it("two overlapping runs never send the same row twice", async () => {
    const telegram = fakeTelegram();
    await cron();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push(await addContact({ createdAt: clock.iso(1 + i) }));
    clock.advance(10);
    const events = await Promise.all([cron(), cron(), cron()]);
    expect(events.map((event) => event.outcome).sort()).toEqual(["lease_busy", "lease_busy", "ok"]);
    expect(events.reduce((sum, event) => sum + event.delivered, 0)).toBe(3);
    expect(telegram.requests).toHaveLength(3);
    expect(new Set(telegram.texts()).size).toBe(3);
    clock.advance(60);
    await Promise.all([cron(), cron()]);
    expect(telegram.requests).toHaveLength(3);
  });

  it("waits for an unexpired lease held by another run and takes an expired one", async () => {
    const telegram = fakeTelegram();
    await cron();
    await addContact({ createdAt: clock.iso(1) });
    clock.advance(2);
    await db().prepare("UPDATE notification_state SET lease_id = 'other', lease_expires_at = ? WHERE id = 1").bind(clock.iso(30)).run();
    expect(await cron()).toMatchObject({ outcome: "lease_busy", discovered: 0 });
    expect(telegram.requests).toEqual([]);
    expect((await state())!.lease_id).toBe("other");
    clock.advance(30);
    expect(await cron()).toMatchObject({ outcome: "ok", delivered: 1 });
    expect((await state())!.lease_id).toBeNull();
  });

  it("stops with lease_lost when the lease is taken away between two sends", async () => {
    const telegram = fakeTelegram();
    await cron();
    await addContact({ createdAt: clock.iso(1) });
    const second = await addContact({ createdAt: clock.iso(2) });
    clock.advance(10);
    telegram.queue(async () => {
      await db().prepare("UPDATE notification_state SET lease_id = 'thief' WHERE id = 1").run();
      return Response.json({ ok: true, result: { message_id: 1 } });
    });
    expect(await cron()).toMatchObject({ outcome: "lease_lost", attempted: 1, delivered: 1 });
    expect(telegram.requests).toHaveLength(1);
    expect(await outboxRow(second)).toMatchObject({ state: "pending", attempts: 0 });
    expect((await state())!.lease_id).toBe("thief");
  });

  it("stops with lease_lost when its own lease expired during the run", async () => {
    const telegram = fakeTelegram();
    await cron();
    await addContact({ createdAt: clock.iso(1) });
    const second = await addContact({ createdAt: clock.iso(2) });
    clock.advance(10);
    telegram.queue(() => {
      clock.advance(56);
      return Response.json({ ok: true, result: { message_id: 7 } });
    });
    expect(await cron()).toMatchObject({ outcome: "lease_lost", delivered: 1 });
    expect(telegram.requests).toHaveLength(1);
    expect(await outboxRow(second)).toMatchObject({ state: "pending" });
  });
});

describe("chat pin (05 §5 step 5)", () => {
  it("pins the first chat, stops on a different chat until the pin is cleared", async () => {
    const telegram = fakeTelegram();
    await cron();
    const pinned = (await state())!.owner_chat_hash;
    expect(pinned).toMatch(/^[0-9a-f]{64}$/);
    await addContact({ createdAt: clock.iso(1) });
    clock.advance(10);
    expect(await cron({ TELEGRAM_OWNER_CHAT_ID: "555000111" })).toMatchObject({ outcome: "chat_mismatch", discovered: 0, attempted: 0 });
    expect(telegram.requests).toEqual([]);
    expect(await state()).toMatchObject({ owner_chat_hash: pinned, lease_id: null });

    await db().prepare("UPDATE notification_state SET owner_chat_hash = NULL WHERE id = 1").run();
    expect(await cron({ TELEGRAM_OWNER_CHAT_ID: "555000111" })).toMatchObject({ outcome: "ok", delivered: 1 });
    expect(telegram.requests[0]!.body.chat_id).toBe(555000111);
    expect((await state())!.owner_chat_hash).not.toBe(pinned);
  });
});

describe("state machine (05 §4)", () => {
  async function oneDueContact(): Promise<string> {
    await cron();
    const id = await addContact({ createdAt: clock.iso(1) });
    clock.advance(2);
    return id;
  }

  it.each([
    ["http_5xx", { status: 500 }, 500],
    ["http_5xx", { status: 503 }, 503],
    ["http_4xx", { status: 400 }, 400],
    ["redirect", { status: 302, location: "https://elsewhere.example/steal" }, 302],
    ["bad_response", "ok_false", 200],
    ["bad_response", "no_message_id", 200],
    ["bad_response", "not_json", 200],
    ["bad_response", "huge", 200],
    ["network", "network", null],
    ["timeout", "hang", null],
  ] as const)("%s (%j) → retry_wait after delay(1)", async (code, answer, status) => {
    const telegram = fakeTelegram();
    const id = await oneDueContact();
    telegram.queue(answer);
    const event = await cron();
    expect(event).toMatchObject({ outcome: "ok", attempted: 1, retried: 1, delivered: 0, failed: 0 });
    expect(telegram.requests).toHaveLength(1);
    expect(await outboxRow(id)).toMatchObject({
      state: "retry_wait",
      attempts: 1,
      last_attempt_at: clock.iso(),
      next_attempt_at: clock.iso(60),
      last_error_code: code,
      last_http_status: status,
    });
    expect((await state())!.backoff_until).toBeNull();
    // Not due before the delay; due after it.
    clock.advance(59);
    expect(await cron()).toMatchObject({ attempted: 0 });
    clock.advance(1);
    expect(await cron()).toMatchObject({ delivered: 1 });
  });

  it("follows delay(n) = min(60 × 2^(n−1), 3600) and fails on the eighth failed attempt, keeping the error fields", async () => {
    const telegram = fakeTelegram();
    telegram.fallback = { status: 500 };
    const id = await oneDueContact();
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      const event = await cron();
      expect(event.attempted).toBe(1);
      const row = (await outboxRow(id))!;
      expect(row.attempts).toBe(attempt);
      if (attempt < 8) {
        expect(row.state).toBe("retry_wait");
        delays.push((Date.parse(row.next_attempt_at) - clock.ms) / 1000);
        clock.ms = Date.parse(row.next_attempt_at);
      } else {
        expect(event).toMatchObject({ failed: 1, retried: 0 });
        expect(row).toMatchObject({ state: "failed", last_error_code: "http_5xx", last_http_status: 500 });
      }
    }
    expect(delays).toEqual([60, 120, 240, 480, 960, 1920, 3600]);
    clock.advance(7200);
    expect(await cron()).toMatchObject({ attempted: 0 });
    expect(telegram.requests).toHaveLength(8);
    expect((await state())!.consecutive_failures).toBe(8);

    // Manual requeue (09 §4) puts it back.
    await db().prepare("UPDATE notification_outbox SET state = 'pending', attempts = 0, next_attempt_at = ? WHERE outbox_id = ? AND state = 'failed'").bind(clock.iso(), (await outboxRow(id))!.outbox_id).run();
    telegram.fallback = "ok";
    expect(await cron()).toMatchObject({ delivered: 1 });
  });

  it.each([
    [30, 30],
    [0, 1],
    [99_999, 3600],
    ["soon", 60],
  ])("429 with retry_after %j → retry_wait until a global backoff of %i s, and the run stops", async (retryAfter, seconds) => {
    const telegram = fakeTelegram();
    await cron();
    const first = await addContact({ createdAt: clock.iso(1) });
    const second = await addContact({ createdAt: clock.iso(2) });
    clock.advance(10);
    telegram.queue({ status: 429, retryAfter });
    expect(await cron()).toMatchObject({ outcome: "ok", attempted: 1, retried: 1 });
    expect(telegram.requests).toHaveLength(1);
    expect(await outboxRow(first)).toMatchObject({ state: "retry_wait", next_attempt_at: clock.iso(seconds), last_error_code: "http_429", last_http_status: 429 });
    expect(await outboxRow(second)).toMatchObject({ state: "pending", attempts: 0 });
    expect((await state())!.backoff_until).toBe(clock.iso(seconds));

    if (seconds > 1) {
      clock.advance(seconds - 1);
      expect(await cron()).toMatchObject({ outcome: "backoff", attempted: 0 });
      clock.advance(1);
    } else {
      clock.advance(seconds);
    }
    expect(await cron()).toMatchObject({ outcome: "ok", delivered: 2 });
    expect(telegram.requests).toHaveLength(3);
  });

  it("429 without retry_after backs off 60 s", async () => {
    const telegram = fakeTelegram();
    const id = await oneDueContact();
    telegram.queue({ status: 429 });
    await cron();
    expect(await outboxRow(id)).toMatchObject({ state: "retry_wait", next_attempt_at: clock.iso(60), last_error_code: "http_429" });
    expect((await state())!.backoff_until).toBe(clock.iso(60));
  });

  it.each([401, 403, 404])("HTTP %i sets a one-hour global backoff and stops the run", async (status) => {
    const telegram = fakeTelegram();
    await cron();
    const first = await addContact({ createdAt: clock.iso(1) });
    await addContact({ createdAt: clock.iso(2) });
    clock.advance(10);
    telegram.queue({ status });
    expect(await cron()).toMatchObject({ attempted: 1, retried: 1 });
    expect(await outboxRow(first)).toMatchObject({ state: "retry_wait", last_error_code: "http_4xx", last_http_status: status, next_attempt_at: clock.iso(60) });
    expect((await state())!.backoff_until).toBe(clock.iso(3600));
    clock.advance(3599);
    expect(await cron()).toMatchObject({ outcome: "backoff", attempted: 0 });
    expect(telegram.requests).toHaveLength(1);
    clock.advance(1);
    expect(await cron()).toMatchObject({ outcome: "ok", delivered: 2 });
  });

  it("stops a run after three failures", async () => {
    const telegram = fakeTelegram();
    telegram.fallback = { status: 500 };
    await cron();
    for (let i = 0; i < 5; i += 1) await addContact({ createdAt: clock.iso(1 + i) });
    clock.advance(10);
    expect(await cron()).toMatchObject({ attempted: 3, retried: 3 });
    expect(telegram.requests).toHaveLength(3);
    expect((await outbox()).map((row) => row.state)).toEqual(["retry_wait", "retry_wait", "retry_wait", "pending", "pending"]);
  });

  it("recovers a stale sending row as interrupted (attempt already counted) and leaves a fresh one alone", async () => {
    const telegram = fakeTelegram();
    await cron();
    const stale = await addContact({ createdAt: clock.iso(1) });
    const staleLast = await addContact({ createdAt: clock.iso(2) });
    const fresh = await addContact({ createdAt: clock.iso(3) });
    clock.advance(300);
    await forceOutboxRow("contact", stale, { createdAt: clock.iso(-299), state: "sending", attempts: 2, lastAttemptAt: clock.iso(-121) });
    await forceOutboxRow("contact", staleLast, { createdAt: clock.iso(-298), state: "sending", attempts: 8, lastAttemptAt: clock.iso(-200) });
    await forceOutboxRow("contact", fresh, { createdAt: clock.iso(-297), state: "sending", attempts: 1, lastAttemptAt: clock.iso(-60) });

    const event = await cron();
    expect(event).toMatchObject({ discovered: 0, attempted: 1, delivered: 1 });
    expect(await outboxRow(stale)).toMatchObject({ state: "delivered", attempts: 3, last_error_code: null });
    expect(await outboxRow(staleLast)).toMatchObject({ state: "failed", attempts: 8, last_error_code: "interrupted" });
    expect(await outboxRow(fresh)).toMatchObject({ state: "sending", attempts: 1 });
    expect(telegram.texts()[0]).toContain("#3");
  });

  it("marks a recovered row retry_wait / interrupted with next_attempt_at = now", async () => {
    const telegram = fakeTelegram();
    telegram.fallback = { status: 500 };
    await cron();
    const stale = await addContact({ createdAt: clock.iso(1) });
    clock.advance(300);
    await forceOutboxRow("contact", stale, { createdAt: clock.iso(-299), state: "sending", attempts: 2, lastAttemptAt: clock.iso(-121) });
    // Backoff keeps the run from sending, so the recovered state is visible as written.
    await db().prepare("UPDATE notification_state SET backoff_until = ? WHERE id = 1").bind(clock.iso(10)).run();
    expect(await cron()).toMatchObject({ outcome: "backoff" });
    expect(await outboxRow(stale)).toMatchObject({ state: "retry_wait", attempts: 2, next_attempt_at: clock.iso(), last_error_code: "interrupted" });
    expect(telegram.requests).toEqual([]);
  });

  it("still discovers while a global backoff holds back the sending", async () => {
    const telegram = fakeTelegram();
    await cron();
    await db().prepare("UPDATE notification_state SET backoff_until = ? WHERE id = 1").bind(clock.iso(600)).run();
    const id = await addContact({ createdAt: clock.iso(1) });
    clock.advance(2);
    expect(await cron()).toMatchObject({ outcome: "backoff", discovered: 1, attempted: 0 });
    expect(await outboxRow(id)).toMatchObject({ state: "pending" });
    expect((await state())!.lease_id).toBeNull();
    expect(telegram.requests).toEqual([]);
  });
});

describe("goal rows (05 §5 steps 7 and 9)", () => {
  it("sends every due contact row before any goal row, even a newer one", async () => {
    const telegram = fakeTelegram();
    await cron();
    for (let i = 0; i < 5; i += 1) {
      const id = await addObservation({ createdAt: clock.iso(1 + i) });
      await forceOutboxRow("observation", id, { createdAt: clock.iso(1 + i) });
    }
    const contact = await addContact({ createdAt: clock.iso(30) });
    clock.advance(60);
    expect(await cron()).toMatchObject({ attempted: 5, delivered: 5, discovered: 1 });
    expect(telegram.texts()[0]).toContain(`id: ${contact}`);
    expect(telegram.texts().slice(1).every((text) => text.startsWith("MAGNT · searched goal"))).toBe(true);
    expect(await countRows("notification_outbox", "source_kind = 'observation' AND state = 'pending'")).toBe(1);
  });

  it("keeps the 20 oldest pending goal rows and skips the rest as overflow", async () => {
    const telegram = fakeTelegram();
    await cron();
    const ids: string[] = [];
    for (let i = 0; i < 25; i += 1) {
      const id = await addObservation({ createdAt: clock.iso(1 + i) });
      await forceOutboxRow("observation", id, { createdAt: clock.iso(1 + i) });
      ids.push(id);
    }
    const contact = await addContact({ createdAt: clock.iso(40) });
    clock.advance(60);
    const event = await cron();
    expect(event).toMatchObject({ overflow_skipped: 5, attempted: 5, delivered: 5, skipped: 0 });
    const rows = await outbox();
    const byId = new Map(rows.map((row) => [row.source_id, row]));
    expect(ids.slice(20).map((id) => [byId.get(id)!.state, byId.get(id)!.last_error_code])).toEqual(Array(5).fill(["skipped", "overflow"]));
    expect(byId.get(contact)!.state).toBe("delivered");
    expect(ids.slice(0, 4).every((id) => byId.get(id)!.state === "delivered")).toBe(true);
    expect(ids.slice(4, 20).every((id) => byId.get(id)!.state === "pending")).toBe(true);
    expect(telegram.requests).toHaveLength(5);
  });

  it("never caps contact rows", async () => {
    fakeTelegram();
    await cron();
    for (let i = 0; i < 30; i += 1) await addContact({ createdAt: clock.iso(1 + i) });
    clock.advance(60);
    expect(await cron()).toMatchObject({ discovered: 30, overflow_skipped: 0, delivered: 5 });
    expect(await countRows("notification_outbox", "state = 'pending'")).toBe(25);
  });
});

describe("hourly cleanup (05 §5.1)", () => {
  async function createCleanupTables() {
    await db().batch([
      db().prepare("CREATE TABLE IF NOT EXISTS dialogue_fetch_attempts (key_hash TEXT NOT NULL, window_start TEXT NOT NULL, failures INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (key_hash, window_start))"),
      db().prepare("CREATE TABLE IF NOT EXISTS owner_oauth_spent (id TEXT PRIMARY KEY, kind TEXT NOT NULL, expires_at TEXT NOT NULL)"),
      db().prepare("DELETE FROM dialogue_fetch_attempts"),
      db().prepare("DELETE FROM owner_oauth_spent"),
    ]);
    const minuteZero = new Date(clock.ms);
    minuteZero.setUTCMinutes(0, 0, 0);
    clock.ms = minuteZero.getTime();
    await db().batch([
      db().prepare("INSERT INTO dialogue_fetch_attempts (key_hash, window_start) VALUES ('old', ?), ('new', ?)").bind(clock.iso(-3 * 3600), clock.iso(-3600)),
      db().prepare("INSERT INTO owner_oauth_spent (id, kind, expires_at) VALUES ('gone', 'code', ?), ('kept', 'code', ?)").bind(clock.iso(-1), clock.iso(60)),
    ]);
  }

  async function dropCleanupTables() {
    await db().batch([db().prepare("DROP TABLE IF EXISTS dialogue_fetch_attempts"), db().prepare("DROP TABLE IF EXISTS owner_oauth_spent")]);
  }

  it("deletes expired rows at minute 0 whatever the flags, and nothing else", async () => {
    await createCleanupTables();
    const contact = await addContact({ createdAt: clock.iso(-10) });
    const event = await cron({ TELEGRAM_NOTIFICATIONS_ENABLED: undefined });
    expect(event.outcome).toBe("disabled");
    expect((await selectRows<{ key_hash: string }>("SELECT key_hash FROM dialogue_fetch_attempts")).map((row) => row.key_hash)).toEqual(["new"]);
    expect((await selectRows<{ id: string }>("SELECT id FROM owner_oauth_spent")).map((row) => row.id)).toEqual(["kept"]);
    expect(await countRows("contacts", "contact_id = ?", contact)).toBe(1);
    await dropCleanupTables();
  });

  it("drains a backlog of 100 000 expired rows per table over several runs; no statement deletes more than one batch", async () => {
    await createCleanupTables();
    const BACKLOG = 100_000;
    // One statement per table seeds the backlog: all expired, besides the one live row of each table.
    await db()
      .prepare(
        `INSERT INTO dialogue_fetch_attempts (key_hash, window_start, failures)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT 'backlog' || i, ?, 1 FROM n`,
      )
      .bind(BACKLOG, clock.iso(-5 * 3600))
      .run();
    await db()
      .prepare(
        `INSERT INTO owner_oauth_spent (id, kind, expires_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT 'backlog' || i, 'refresh', ? FROM n`,
      )
      .bind(BACKLOG, clock.iso(-5 * 3600))
      .run();
    const expired = async () => ({
      attempts: await countRows("dialogue_fetch_attempts", "window_start < ?", clock.iso(-2 * 3600)),
      spent: await countRows("owner_oauth_spent", "expires_at < ?", clock.iso()),
    });
    expect(await expired()).toEqual({ attempts: BACKLOG + 1, spent: BACKLOG + 1 });

    const perRun = CLEANUP_BATCH_ROWS * CLEANUP_BATCHES_PER_RUN;
    let runs = 0;
    while (runs < 100) {
      const recorder = faultyD1(db());
      expect((await cron({ TELEGRAM_NOTIFICATIONS_ENABLED: undefined, CONTACTS: recorder })).outcome).toBe("disabled");
      runs += 1;
      for (const table of ["dialogue_fetch_attempts", "owner_oauth_spent"]) {
        const deletes = recorder.statements.filter((statement) => statement.sql.startsWith(`DELETE FROM ${table}`));
        expect(deletes.length).toBeGreaterThan(0);
        expect(deletes.length).toBeLessThanOrEqual(CLEANUP_BATCHES_PER_RUN);
        for (const statement of deletes) expect(statement.changes).toBeLessThanOrEqual(CLEANUP_BATCH_ROWS);
      }
      expect(recorder.statements.every((statement) => statement.changes !== undefined && statement.changes <= CLEANUP_BATCH_ROWS)).toBe(true);
      const left = await expired();
      if (left.attempts === 0 && left.spent === 0) break;
      // No run deleted more than its bound (batches per run × batch size).
      expect(left.attempts).toBeGreaterThanOrEqual(Math.max(0, BACKLOG + 1 - runs * perRun));
      expect(left.spent).toBeGreaterThanOrEqual(Math.max(0, BACKLOG + 1 - runs * perRun));
    }
    expect(await expired()).toEqual({ attempts: 0, spent: 0 });
    expect(runs).toBe(Math.ceil((BACKLOG + 1) / perRun));
    expect((await selectRows<{ key_hash: string }>("SELECT key_hash FROM dialogue_fetch_attempts")).map((row) => row.key_hash)).toEqual(["new"]);
    expect((await selectRows<{ id: string }>("SELECT id FROM owner_oauth_spent")).map((row) => row.id)).toEqual(["kept"]);
    await dropCleanupTables();
  }, 60_000); // a 200 000-row backlog: room for a slow shared machine, not a timing assertion

  it("leaves them alone at any other minute, and ignores missing tables", async () => {
    await createCleanupTables();
    await cron({ TELEGRAM_NOTIFICATIONS_ENABLED: undefined }, { scheduledTime: clock.ms + 60_000 });
    expect(await countRows("dialogue_fetch_attempts")).toBe(2);
    expect(await countRows("owner_oauth_spent")).toBe(2);
    await dropCleanupTables();
    const event = await cron({ TELEGRAM_NOTIFICATIONS_ENABLED: undefined });
    expect(event.outcome).toBe("disabled");
  });
});

describe("the scheduled event (05 §8)", () => {
  it("is exactly one content-free line per run with integer counts", async () => {
    fakeTelegram();
    const logs = captureConsole();
    await cron();
    await addContact({ createdAt: clock.iso(1) });
    clock.advance(5);
    await cron();
    const lines = logs.lines();
    expect(lines).toHaveLength(2);
    const event = JSON.parse(lines[1]!) as Record<string, unknown>;
    expect(Object.keys(event)).toEqual([
      "event_id", "time", "role", "event_type", "outcome", "discovered", "attempted", "delivered", "retried", "failed", "skipped",
      "overflow_skipped", "duration_ms",
    ]);
    expect(event).toMatchObject({ role: "monolith", event_type: "scheduled", outcome: "ok", discovered: 1, attempted: 1, delivered: 1 });
    for (const key of ["discovered", "attempted", "delivered", "retried", "failed", "skipped", "overflow_skipped", "duration_ms"]) {
      expect(Number.isInteger(event[key])).toBe(true);
    }
  });
});
