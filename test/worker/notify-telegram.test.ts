/**
 * The Telegram adapter (05 §6–§7): message content in both preview modes,
 * the excerpt rules, the length budget, fields that must never appear, and
 * the closed result that never carries an answer body.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { excerpt, formatMessage, sendTelegramMessage, type MessageModel } from "../../worker/notify/telegram";
import { connectV2 } from "../helpers/mcp";
import { db } from "../helpers/db";
import { fakeTelegram } from "../fakes/telegram";
import { addContact, addObservation, clock, cron, forceOutboxRow, outboxRow, resetNotifyTables, TOKEN, CHAT_ID } from "./notify-harness";

beforeEach(async () => {
  clock.reset();
  await resetNotifyTables();
});

const contactModel = (overrides: Partial<Extract<MessageModel, { kind: "contact" }>> = {}): MessageModel => ({
  kind: "contact",
  contactId: "mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
  createdAt: "2026-05-01T10:00:00.000Z",
  hasReplyChannel: true,
  isFollowUp: false,
  outboxId: "nt_0123456789abcdef0123456789abcdef",
  attempts: 1,
  excerptSource: "Hello Alexander,\nplease look at this.",
  ...overrides,
});

const goalModel: MessageModel = {
  kind: "observation",
  observationId: "ob_00112233445566778899aabbccddeeff",
  createdAt: "2026-05-01T11:00:00.000Z",
  hasBlocker: false,
  hasTried: true,
  outboxId: "nt_ffffffffffffffffffffffff89abcdef",
  attempts: 3,
  excerptSource: "  deploy a worker\twith D1  ",
};

describe("message content (05 §7)", () => {
  it("contact message: the lines of 05 §7 plus the read line right after ref", () => {
    expect(formatMessage(contactModel(), "excerpt").split("\n")).toEqual([
      "MAGNT · new contact",
      "id: mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
      "received: 2026-05-01T10:00:00.000Z",
      "reply channel: yes · follow-up: no",
      "ref: 89abcdef#1",
      "read: magnt review contacts mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
      "",
      "Hello Alexander, please look at this.",
    ]);
    expect(formatMessage(contactModel({ hasReplyChannel: false, isFollowUp: true }), "excerpt")).toContain("reply channel: no · follow-up: yes");
  });

  it("goal message", () => {
    expect(formatMessage(goalModel, "excerpt").split("\n")).toEqual([
      "MAGNT · searched goal",
      "id: ob_00112233445566778899aabbccddeeff",
      "observed: 2026-05-01T11:00:00.000Z",
      "blocker: no · tried: yes",
      "ref: 89abcdef#3",
      "",
      "deploy a worker with D1",
    ]);
  });

  it("metadata_only carries no excerpt and no empty line", () => {
    expect(formatMessage(contactModel(), "metadata_only").split("\n")).toHaveLength(6);
    expect(formatMessage(contactModel(), "metadata_only")).not.toContain("Hello");
    expect(formatMessage(goalModel, "metadata_only")).not.toContain("deploy");
    expect(formatMessage(goalModel, "metadata_only").split("\n").at(-1)).toBe("ref: 89abcdef#3");
  });

  it("stays within the ~700 code-point budget in the worst case", () => {
    const worst = formatMessage(contactModel({ attempts: 8, excerptSource: "😀".repeat(5000) }), "excerpt");
    expect(Array.from(worst).length).toBeLessThanOrEqual(700);
    expect(Array.from(formatMessage({ ...goalModel, excerptSource: "я".repeat(5000) }, "excerpt")).length).toBeLessThanOrEqual(700);
  });
});

describe("excerpt rules (05 §7)", () => {
  it.each([
    ["trims", "  hello  ", "hello"],
    ["line breaks become spaces", "a\nb\r\nc\u2028d\u2029e", "a b  c d e"],
    ["control characters become spaces", "a\u0000b\u0007c\u001bd\u007fe\u0085f\tg", "a b c d e f g"],
    ["bidi controls become spaces", "a\u202eb\u2066c\u200fd", "a b c d"],
    ["the Arabic letter mark too (the shared class of display-controls.ts)", "a\u061cb\u200ec\u202ad", "a b c d"],
    ["exactly 300 code points stay whole", "x".repeat(300), "x".repeat(300)],
    ["301 code points → 299 + …", "x".repeat(301), `${"x".repeat(299)}…`],
    ["surrogate pairs count once and are never split", "😀".repeat(301), `${"😀".repeat(299)}…`],
    ["300 emoji are not cut", "😀".repeat(300), "😀".repeat(300)],
    ["a lone surrogate becomes U+FFFD", "a\ud800b", "a\ufffdb"],
    ["only controls → empty", "\n\t\u0000", ""],
  ])("%s", (_label, source, expected) => {
    expect(excerpt(source)).toBe(expected);
  });

  it("cuts after cleaning, so whitespace never counts twice", () => {
    const cut = excerpt(`   ${"a".repeat(400)}`);
    expect(cut.startsWith("a")).toBe(true);
    expect(Array.from(cut)).toHaveLength(300);
  });

  it("an empty excerpt leaves no dangling empty line", () => {
    expect(formatMessage(contactModel({ excerptSource: "  \n " }), "excerpt").endsWith("\n")).toBe(false);
  });
});

describe("through a cron run", () => {
  it("a contact left with the official MCP client arrives with no forbidden field", async () => {
    const telegram = fakeTelegram();
    await cron();
    // The tool stamps the real time; the run's clock must be past it.
    clock.ms = Date.now() - 1000;
    await db().prepare("UPDATE notification_state SET activated_at = ?").bind(clock.iso()).run();
    const client = await connectV2("auto");
    const secret = (label: string) => `CANARY${label}${crypto.randomUUID().replaceAll("-", "")}`;
    const fields = {
      summary: `Summary ${secret("summary")}`,
      reply_to: secret("replyto"),
      operator: secret("operator"),
      agent_identity: secret("agent"),
      found_via: secret("foundvia"),
      intent: secret("intent"),
      what_you_need_from_human: secret("need"),
    };
    const result = await client.callTool({ name: "propose_contact", arguments: { ...fields, submission_id: crypto.randomUUID() } });
    await client.close();
    const receipt = result.structuredContent as { contact_id: string };
    clock.ms = Date.now() + 1000;

    expect(await cron()).toMatchObject({ delivered: 1 });
    const text = telegram.texts()[0]!;
    expect(text).toContain(`id: ${receipt.contact_id}`);
    expect(text).toContain(`read: magnt review contacts ${receipt.contact_id}`);
    expect(text).toContain("reply channel: yes · follow-up: no");
    expect(text).toContain(fields.summary);
    for (const key of ["reply_to", "operator", "agent_identity", "found_via", "intent", "what_you_need_from_human"] as const) {
      expect(text).not.toContain(fields[key]);
    }
    expect(text).not.toContain("test-client-v2");
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(CHAT_ID);
  });

  it.each([
    ["metadata_only", false],
    ["METADATA_ONLY", true],
    ["excerpt", true],
    [undefined, true],
  ])("TELEGRAM_PREVIEW_MODE=%j → excerpt included: %s", async (mode, included) => {
    const telegram = fakeTelegram();
    await cron();
    const summary = `CANARYsummary${crypto.randomUUID()}`;
    const goal = `CANARYgoal${crypto.randomUUID()}`;
    await addContact({ createdAt: clock.iso(1), summary });
    const observation = await addObservation({ createdAt: clock.iso(2), goal, blocker: "b" });
    await forceOutboxRow("observation", observation, { createdAt: clock.iso(2) });
    clock.advance(5);
    expect(await cron({ TELEGRAM_PREVIEW_MODE: mode })).toMatchObject({ delivered: 2 });
    const [contactText, goalText] = telegram.texts();
    expect(contactText!.includes(summary)).toBe(included);
    expect(goalText!.includes(goal)).toBe(included);
    expect(goalText).toContain("blocker: yes · tried: no");
    expect(await outboxRow(observation)).toMatchObject({ state: "delivered" });
  });
});

describe("the adapter's result", () => {
  const target = { apiOrigin: "https://api.telegram.org", token: TOKEN, chatId: CHAT_ID, previewMode: "excerpt" as const };

  it.each([
    [{ status: 500, body: "CANARYbody500 internal" }, { ok: false, kind: "http_5xx", httpStatus: 500 }],
    [{ status: 401, body: '{"ok":false,"description":"CANARYunauthorized"}' }, { ok: false, kind: "http_4xx", httpStatus: 401 }],
    [{ status: 429, retryAfter: 7, body: '{"ok":false,"description":"CANARYslow","parameters":{"retry_after":7}}' }, { ok: false, kind: "http_429", httpStatus: 429, retryAfterSeconds: 7 }],
    [{ status: 301, location: "https://evil.example/" }, { ok: false, kind: "redirect", httpStatus: 301 }],
    ["ok_false", { ok: false, kind: "bad_response", httpStatus: 200 }],
    ["ok", { ok: true, messageId: 1000 }],
  ] as const)("is a closed value without bodies or texts (%j)", async (answer, expected) => {
    const telegram = fakeTelegram();
    telegram.queue(answer);
    const result = await sendTelegramMessage(target, contactModel(), { timeoutMs: 50 });
    expect(result).toEqual(expected);
    expect(JSON.stringify(result)).not.toContain("CANARY");
  });
});
