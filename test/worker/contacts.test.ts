/**
 * `propose_contact` (02 §5): receipts only after a read-back, exact idempotency,
 * validation that stores nothing, storage faults reported as not_saved, the
 * lazy 0001 table, the public-write rate limit, telemetry and privacy.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { CONTACTS_SCHEMA_0001 } from "../../worker/storage/contacts/schema-0001";
import migration0001 from "../../migrations/0001_contacts.sql?raw";
import { callDoor, captureAnalytics, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { countRows, selectRows } from "../helpers/db";
import { callToolModern, connectV1, connectV2 } from "../helpers/mcp";
import { assertNoCanaryInTelemetry, Canaries } from "../helpers/privacy";
import { fakeRateLimiter, faultyD1 } from "../fakes/faulty-d1";

type Structured = Record<string, any>;

async function propose(args: unknown, options: Parameters<typeof callToolModern>[2] = {}) {
  const { result, message, response } = await callToolModern("propose_contact", args, options);
  return { result, message, response, structured: result?.structuredContent as Structured | undefined };
}

describe("receipts", () => {
  it("stores trimmed values and returns a receipt read back from storage", async () => {
    const submission_id = crypto.randomUUID().toUpperCase();
    const logs = captureConsole();
    const { structured, result } = await propose({
      summary: "  Hello Alexander  ",
      intent: " research ",
      what_you_need_from_human: "a reply",
      agent_identity: "agent-x",
      operator: "ACME",
      reply_to: "agent@example.com",
      found_via: "search",
      previous_contact_id: `MC_${crypto.randomUUID().toUpperCase()}`,
      submission_id,
      is_test: true,
    });
    expect(result!.isError).toBeFalsy();
    expect(structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, review_status: "pending" });
    expect(Object.keys(structured!)).toEqual(["status", "contact_id", "received_at", "duplicate", "review_status", "message", "continuation"]);
    expect(JSON.parse(result!.content[0]!.text)).toEqual(structured);

    const [row] = await selectRows<Structured>("SELECT * FROM contacts WHERE contact_id = ?", structured!.contact_id);
    expect(row).toMatchObject({
      summary: "Hello Alexander",
      intent: "research",
      review_status: "pending",
      self_reported_test: 1,
      submission_id: submission_id.toLowerCase(),
      created_at: structured!.received_at,
      client_name: "raw-modern",
      client_version: "1.0.0",
      protocol_version: "2026-07-28",
    });
    expect(row!.previous_contact_id).toMatch(/^mc_[0-9a-f-]{36}$/);
    expect(row!.payload_hash).toMatch(/^[0-9a-f]{64}$/);

    const event = assertValidEvent(logs.events()[0]);
    expect(event).toMatchObject({
      tool_name: "propose_contact",
      tool_result: "accepted_for_human_review",
      contact_id: structured!.contact_id,
      duplicate: false,
      has_reply_channel: true,
      has_previous_contact: true,
      self_reported_test: true,
      rate_limited: false,
      validation_status: "valid",
      outcome: "success",
    });
  });

  it("hashes the canonical content exactly as specified", async () => {
    const { structured } = await propose({ summary: "Hash me", reply_to: " x@y.z ", is_test: false });
    const [row] = await selectRows<Structured>("SELECT payload_hash FROM contacts WHERE contact_id = ?", structured!.contact_id);
    const canonical = JSON.stringify({
      summary: "Hash me", intent: null, what_you_need_from_human: null, agent_identity: null, operator: null,
      reply_to: "x@y.z", found_via: null, previous_contact_id: null, self_reported_test: 0,
    });
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
    expect(row!.payload_hash).toBe([...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join(""));
  });

  it("records client metadata for both eras", async () => {
    const modern = await connectV2("auto");
    const modernReceipt = (await modern.callTool({ name: "propose_contact", arguments: { summary: "modern era" } })).structuredContent as Structured;
    const legacy = await connectV1();
    const legacyReceipt = (await legacy.callTool({ name: "propose_contact", arguments: { summary: "legacy era" } })).structuredContent as Structured;
    const [modernRow] = await selectRows<Structured>("SELECT * FROM contacts WHERE contact_id = ?", modernReceipt.contact_id);
    const [legacyRow] = await selectRows<Structured>("SELECT * FROM contacts WHERE contact_id = ?", legacyReceipt.contact_id);
    expect(modernRow).toMatchObject({ client_name: "test-client-v2", client_version: "2.4.0", protocol_version: "2026-07-28", self_reported_test: 0 });
    // A 2025 client names itself only on initialize; later calls carry just the version header.
    expect(legacyRow).toMatchObject({ client_name: null, client_version: null, protocol_version: "2025-11-25" });
    await modern.close();
    await legacy.close();
  });
});

describe("idempotency", () => {
  it("returns the same receipt with duplicate: true for an identical retry", async () => {
    const args = { summary: "retry me", submission_id: crypto.randomUUID(), is_test: true };
    const first = (await propose(args)).structured!;
    const logs = captureConsole();
    const second = (await propose({ ...args, summary: "  retry me " })).structured!;
    expect(second).toMatchObject({ status: "accepted_for_human_review", contact_id: first.contact_id, received_at: first.received_at, duplicate: true });
    expect(await countRows("contacts", "submission_id = ?", args.submission_id)).toBe(1);
    expect(logs.events()[0]).toMatchObject({ tool_result: "accepted_for_human_review", duplicate: true });
  });

  it("answers different content under the same submission_id with submission_conflict and changes nothing", async () => {
    const submission_id = crypto.randomUUID();
    const first = (await propose({ summary: "original", submission_id })).structured!;
    const [before] = await selectRows("SELECT * FROM contacts WHERE submission_id = ?", submission_id);
    const total = await countRows("contacts");
    const logs = captureConsole();
    const { result, structured } = await propose({ summary: "different", submission_id });
    expect(result!.isError).toBe(true);
    expect(structured).toMatchObject({ status: "submission_conflict" });
    expect(structured).not.toHaveProperty("contact_id");
    expect(await countRows("contacts")).toBe(total);
    expect(await selectRows("SELECT * FROM contacts WHERE submission_id = ?", submission_id)).toEqual([before]);
    expect(first.contact_id).toBe((before as Structured).contact_id);
    expect(logs.events()[0]).toMatchObject({ tool_result: "submission_conflict", outcome: "tool_error" });
  });

  it("treats calls without submission_id as independent submissions", async () => {
    const a = (await propose({ summary: "same text" })).structured!;
    const b = (await propose({ summary: "same text" })).structured!;
    expect(a.contact_id).not.toBe(b.contact_id);
    expect(b.duplicate).toBe(false);
  });

  it("50 concurrent identical retries → one row, one receipt, exactly one duplicate: false", async () => {
    const args = { summary: "concurrent", submission_id: crypto.randomUUID() };
    const results = await Promise.all(Array.from({ length: 50 }, () => propose(args)));
    const receipts = results.map((result) => result.structured!);
    expect(new Set(receipts.map((receipt) => receipt.contact_id)).size).toBe(1);
    expect(receipts.map((receipt) => receipt.status)).toEqual(Array.from({ length: 50 }, () => "accepted_for_human_review"));
    expect(receipts.filter((receipt) => receipt.duplicate === false)).toHaveLength(1);
    expect(await countRows("contacts", "submission_id = ?", args.submission_id)).toBe(1);
  });

  it("50 concurrent calls with one submission_id and two contents → one row; the loser's answers are conflicts", async () => {
    const submission_id = crypto.randomUUID();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) => propose({ summary: index % 2 === 0 ? "content A" : "content B", submission_id })),
    );
    expect(await countRows("contacts", "submission_id = ?", submission_id)).toBe(1);
    const [stored] = await selectRows<Structured>("SELECT contact_id, summary FROM contacts WHERE submission_id = ?", submission_id);
    results.forEach((result, index) => {
      const mine = index % 2 === 0 ? "content A" : "content B";
      if (mine === stored!.summary) {
        expect(result.structured).toMatchObject({ status: "accepted_for_human_review", contact_id: stored!.contact_id });
      } else {
        expect(result.structured).toMatchObject({ status: "submission_conflict" });
      }
    });
    expect(results.filter((result) => result.structured!.duplicate === false)).toHaveLength(1);
  });
});

describe("validation (01 §11)", () => {
  it.each([
    ["blank summary", { summary: " " }, "summary", "empty_value"],
    ["missing summary", {}, "summary", "missing_required"],
    ["4001-character summary", { summary: "x".repeat(4001) }, "summary", "too_long"],
    ["unknown key", { summary: "hi", colour: "blue" }, "arguments", "unknown_field"],
    ["string is_test", { summary: "hi", is_test: "true" }, "is_test", "invalid_type"],
    ["numeric summary", { summary: 42 }, "summary", "invalid_type"],
    ["bad previous_contact_id", { summary: "hi", previous_contact_id: "mc_123" }, "previous_contact_id", "invalid_format"],
    ["bad submission_id", { summary: "hi", submission_id: "not-a-uuid" }, "submission_id", "invalid_format"],
    ["161-character intent", { summary: "hi", intent: "i".repeat(161) }, "intent", "too_long"],
  ])("%s → tool error, no row, %s/%s", async (_label, args, field, code) => {
    const before = await countRows("contacts");
    const logs = captureConsole();
    const { result } = await propose(args);
    expect(result!.isError).toBe(true);
    expect(await countRows("contacts")).toBe(before);
    const event = assertValidEvent(logs.events()[0]);
    expect(event).toMatchObject({
      tool_result: "invalid_arguments",
      validation_status: "invalid",
      validation_field: field,
      validation_code: code,
      outcome: "tool_error",
    });
  });

  it("accepts exactly 4000 characters after trimming", async () => {
    const { structured } = await propose({ summary: `  ${"x".repeat(4000)}  ` });
    expect(structured!.status).toBe("accepted_for_human_review");
  });

  it("counts each unknown key once, deduplicates issues and keeps names out of telemetry", async () => {
    const logs = captureConsole();
    await propose({ summary: "", secretKeyOne: 1, secretKeyTwo: 2, is_test: "x", reply_to: "" });
    const event = logs.events()[0]!;
    expect(event.validation_issue_count).toBe(5);
    // Validator order: declared keys in schema order, then the unknown keys.
    expect(event.validation_issues).toEqual([
      { field: "summary", code: "empty_value" },
      { field: "reply_to", code: "empty_value" },
      { field: "is_test", code: "invalid_type" },
      { field: "arguments", code: "unknown_field" },
    ]);
    expect(logs.lines().join("\n")).not.toContain("secretKey");
  });

  it("treats non-object arguments as invalid_type of `arguments`, rejected by the SDK as invalid params", async () => {
    const before = await countRows("contacts");
    const logs = captureConsole();
    const { message } = await propose("just a string");
    expect(message.error?.code).toBe(-32602);
    expect(await countRows("contacts")).toBe(before);
    expect(logs.events()[0]).toMatchObject({
      validation_status: "invalid",
      validation_field: "arguments",
      validation_code: "invalid_type",
      tool_result: "invalid_arguments",
      outcome: "protocol_error",
    });
  });
});

describe("storage faults → not_saved (02 §5.3)", () => {
  const NOT_SAVED = { status: "not_saved", code: "storage_unavailable" };

  it("without a CONTACTS binding", async () => {
    const logs = captureConsole();
    const { structured, result } = await propose({ summary: "no binding" }, { overrides: { CONTACTS: undefined } });
    expect(result!.isError).toBe(true);
    expect(structured).toMatchObject(NOT_SAVED);
    expect(structured).not.toHaveProperty("contact_id");
    expect(logs.events()[0]).toMatchObject({ tool_result: "storage_unavailable", self_reported_test: false });
  });

  it.each([
    ["a failing insert", { failWhen: /^INSERT INTO contacts/ }],
    ["an insert that does not report success", { failWhen: /^INSERT INTO contacts/, unsuccessful: true }],
    ["a failing read-back", { failWhen: /^SELECT contact_id/ }],
    ["a failing table creation", { failWhen: /^CREATE TABLE/ }],
  ])("with %s", async (_label, plan) => {
    const canaries = new Canaries();
    const faulty = faultyD1(env.CONTACTS!, { ...plan, message: canaries.make("d1error") });
    const logs = captureConsole();
    const analytics = captureAnalytics();
    const summary = canaries.make("summary");
    const { structured } = await propose({ summary }, { overrides: { CONTACTS: faulty } });
    expect(structured).toMatchObject(NOT_SAVED);
    expect(structured).not.toHaveProperty("contact_id");
    expect(logs.events()[0]).toMatchObject({ tool_result: "storage_unavailable" });
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });
  });

  it("with the insert lost (read-back finds no row)", async () => {
    // The insert "succeeds" but writes nothing: the read-back must refuse a receipt.
    const lost = faultyD1(env.CONTACTS!, { pretendWhen: /^INSERT INTO contacts/ });
    const { structured } = await propose({ summary: "lost" }, { overrides: { CONTACTS: lost } });
    expect(structured).toMatchObject(NOT_SAVED);
    expect(lost.statements.map((statement) => statement.sql.split(" ")[0])).toEqual(["CREATE", "INSERT", "SELECT"]);
  });
});

describe("lazy 0001 (02 §5.3 step 2, 09 §2)", () => {
  it("embeds migration 0001 byte for byte, as a single statement", () => {
    expect(CONTACTS_SCHEMA_0001).toBe(migration0001);
    expect(CONTACTS_SCHEMA_0001.trim().split(";").filter((part) => part.trim() !== "")).toHaveLength(1);
  });

  it("creates contacts on an empty database once, and retries after a failed creation", async () => {
    await env.CONTACTS!.prepare("DROP TABLE IF EXISTS contacts").run();
    const failing = faultyD1(env.CONTACTS!, { failNth: 1 });
    expect((await propose({ summary: "first" }, { overrides: { CONTACTS: failing } })).structured).toMatchObject(NOT_SAVED_SHAPE);
    expect((await propose({ summary: "second" }, { overrides: { CONTACTS: failing } })).structured!.status).toBe("accepted_for_human_review");
    expect((await propose({ summary: "third" }, { overrides: { CONTACTS: failing } })).structured!.status).toBe("accepted_for_human_review");
    const creations = failing.statements.filter((statement) => statement.sql.startsWith("CREATE TABLE"));
    expect(creations).toHaveLength(2); // failed once, succeeded once, then memoised
    expect(await countRows("contacts", "summary IN ('second', 'third')")).toBe(2);
  });

  it("creates no other table lazily", async () => {
    const recorder = faultyD1(env.CONTACTS!, {});
    await propose({ summary: "watch the SQL" }, { overrides: { CONTACTS: recorder } });
    const created = recorder.statements.filter((statement) => /^\s*CREATE/i.test(statement.sql));
    // A fresh binding gets exactly one lazy creation, and it is 0001 itself.
    expect(created.map((statement) => statement.sql)).toEqual([CONTACTS_SCHEMA_0001]);
  });
});

const NOT_SAVED_SHAPE = { status: "not_saved", code: "storage_unavailable" };

describe("public-write rate limit (01 §14)", () => {
  it("refuses the 21st write from one address within the period and writes nothing", async () => {
    const limiter = fakeRateLimiter({ limit: 20 });
    const headers = { "cf-connecting-ip": "203.0.113.7" };
    const batch = crypto.randomUUID();
    const results = [];
    for (let index = 0; index < 20; index += 1) {
      results.push(await propose({ summary: `limited ${batch} ${index}` }, { overrides: { PUBLIC_WRITES: limiter }, headers }));
    }
    expect(results.map((result) => result.structured?.status)).toEqual(Array.from({ length: 20 }, () => "accepted_for_human_review"));
    expect(await countRows("contacts", "summary LIKE ?", `limited ${batch} %`)).toBe(20);
    const logs = captureConsole();
    const refused = await propose({ summary: "one too many" }, { overrides: { PUBLIC_WRITES: limiter }, headers });
    expect(refused.result!.isError).toBe(true);
    expect(refused.structured).toMatchObject({ status: "rate_limited", retry_after_s: 60 });
    expect(await countRows("contacts", "summary = 'one too many'")).toBe(0);
    expect(logs.events()[0]).toMatchObject({ tool_result: "rate_limited", rate_limited: true });
    // Another address is unaffected.
    const other = await propose({ summary: "other address" }, { overrides: { PUBLIC_WRITES: limiter }, headers: { "cf-connecting-ip": "198.51.100.1" } });
    expect(other.structured!.status).toBe("accepted_for_human_review");
  });

  it("keys the limiter by a salted daily hash, never the address, and never logs either", async () => {
    const canaries = new Canaries();
    const address = canaries.make("address");
    const limiter = fakeRateLimiter();
    const logs = captureConsole();
    const analytics = captureAnalytics();
    await propose({ summary: "keyed" }, { overrides: { PUBLIC_WRITES: limiter }, headers: { "cf-connecting-ip": address } });
    expect(limiter.keys).toHaveLength(1);
    const day = new Date().toISOString().slice(0, 10);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`magnt/public-writes/v1\n${day}\n${address}`));
    const expected = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
    expect(limiter.keys[0]).toBe(expected);
    canaries.track("rateLimitKey", expected);
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });
  });

  it("does not limit when the binding throws or is absent", async () => {
    const throwing = fakeRateLimiter({ throws: true });
    expect((await propose({ summary: "binding throws" }, { overrides: { PUBLIC_WRITES: throwing } })).structured!.status).toBe("accepted_for_human_review");
    expect((await propose({ summary: "no binding" })).structured!.status).toBe("accepted_for_human_review");
  });

  it("is not consulted for invalid calls", async () => {
    const limiter = fakeRateLimiter();
    await propose({ summary: "" }, { overrides: { PUBLIC_WRITES: limiter } });
    expect(limiter.keys).toHaveLength(0);
  });

  it("30 concurrent contacts from one address with limit 20 → exactly 20 rows and receipts, exactly 10 rate_limited", async () => {
    const limiter = fakeRateLimiter({ limit: 20 });
    const batch = crypto.randomUUID();
    const headers = { "cf-connecting-ip": "203.0.113.30" };
    const logs = captureConsole();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, index) => propose({ summary: `flood ${batch} ${index}` }, { overrides: { PUBLIC_WRITES: limiter }, headers })),
    );
    const statuses = results.map((result) => result.structured?.status);
    expect(statuses.filter((status) => status === "accepted_for_human_review")).toHaveLength(20);
    expect(statuses.filter((status) => status === "rate_limited")).toHaveLength(10);
    for (const result of results.filter((result) => result.structured?.status === "rate_limited")) {
      expect(result.result!.isError).toBe(true);
      expect(result.structured).toEqual({ status: "rate_limited", retry_after_s: 60, message: expect.any(String) });
    }
    expect([...limiter.counts.values()]).toEqual([30]);
    expect(await countRows("contacts", "summary LIKE ?", `flood ${batch} %`)).toBe(20);
    expect(logs.events().map((event) => event.rate_limited).sort()).toEqual([...Array(10).fill(true), ...Array(20).fill(false)].sort());
  });
});

describe("privacy canary over every propose_contact path (10 §3)", () => {
  const TEXT_FIELDS = ["summary", "intent", "what_you_need_from_human", "agent_identity", "operator", "reply_to", "found_via"] as const;

  function cannedArgs(canaries: Canaries, prefix: string) {
    return Object.fromEntries(TEXT_FIELDS.map((field) => [field, canaries.make(`${prefix}${field}`).slice(0, field === "intent" ? 150 : 190)]));
  }

  it("valid, duplicate, conflict, invalid, rate-limited and storage failure never log a field nor write it to Analytics Engine", async () => {
    const canaries = new Canaries();
    const logs = captureConsole();
    const analytics = captureAnalytics();
    const submission_id = canaries.track("submission_id", crypto.randomUUID());
    const previous_contact_id = canaries.track("previous_contact_id", `mc_${crypto.randomUUID()}`);
    const args: Record<string, string> = { ...cannedArgs(canaries, "ok"), submission_id, previous_contact_id };
    const accepted = await propose(args);
    expect(accepted.structured!.status).toBe("accepted_for_human_review");
    await propose(args);
    await propose({ ...cannedArgs(canaries, "conflict"), submission_id });
    await propose({ ...cannedArgs(canaries, "invalid"), [canaries.make("unknownKeyName")]: canaries.make("unknownValue") });
    await propose({ ...cannedArgs(canaries, "limited") }, { overrides: { PUBLIC_WRITES: fakeRateLimiter({ limit: 0 }) } });
    await propose({ ...cannedArgs(canaries, "nobinding") }, { overrides: { CONTACTS: undefined } });
    await propose(
      { ...cannedArgs(canaries, "failing") },
      { overrides: { CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /^INSERT/, message: canaries.make("d1message") }) } },
    );
    expect(logs.events()).toHaveLength(7);
    expect(analytics.points).toHaveLength(7);
    for (const event of logs.events()) assertValidEvent(event);
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });
    // The canaries did reach storage on the accepted path.
    const [row] = await selectRows<Structured>("SELECT summary FROM contacts WHERE submission_id = ?", submission_id);
    expect(row!.summary).toBe(args.summary);
  });
});

describe("no CONTACTS → storage flags via the probe", () => {
  it("still serves the door", async () => {
    expect((await callDoor("/__magnt_probe", undefined, { CONTACTS: undefined })).status).toBe(200);
  });
});
