/**
 * The dialogue's privacy and its off switch (07 §1, §8, 10 §3): canaries in
 * every text field, the token key, the issued token (and so its hash), the
 * dialogue id, reply ids and reply text never reach a log line or an Analytics
 * Engine point on any path, failures included; with DIALOGUE_ENABLED off no
 * C.1 table is touched and fetch_contact_reply is an unknown tool.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { captureAnalytics, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { assertNoCanaryInTelemetry, Canaries } from "../helpers/privacy";
import { faultyD1 } from "../fakes/faulty-d1";
import { call, dialogueIdOf, fetchReply, insertReply, propose, type Structured } from "./dialogue-harness";

describe("privacy canaries (07 §8)", () => {
  it("no token, key, hash, dialogue id, reply id or text in any log line or analytics point", async () => {
    const canaries = new Canaries();
    const key = canaries.make("dialoguetokenkeysecret");
    const overrides = { DIALOGUE_ENABLED: "true", DIALOGUE_READ_RECEIPTS_ENABLED: "true", DIALOGUE_TOKEN_KEY: key };
    const logs = captureConsole();
    const analytics = captureAnalytics();

    const opened = (
      await propose(
        {
          summary: canaries.make("summary"),
          intent: canaries.make("intent"),
          what_you_need_from_human: canaries.make("need"),
          agent_identity: canaries.make("identity"),
          operator: canaries.make("operator"),
          reply_to: canaries.make("replyto"),
          found_via: canaries.make("foundvia"),
          submission_id: canaries.track("submission", crypto.randomUUID()),
        },
        overrides,
      )
    ).structured!;
    const token = canaries.track("token", opened.dialogue.dialogue_token as string);
    const dialogueId = canaries.track("dialogue_id", await dialogueIdOf(opened.contact_id));
    const reply = await insertReply(dialogueId, opened.contact_id, canaries.make("replytext"));
    canaries.track("reply_id", reply.replyId);

    const followUp = await propose({ summary: canaries.make("followup"), previous_contact_id: opened.contact_id, dialogue_token: token }, overrides);
    expect(followUp.structured!.dialogue.status).toBe("joined");
    const wrongToken = canaries.track("wrong_token", `dt_${"Q".repeat(43)}`);
    await propose({ summary: canaries.make("refused"), previous_contact_id: opened.contact_id, dialogue_token: wrongToken }, overrides);
    const delivered = await fetchReply({ contact_id: opened.contact_id, dialogue_token: token }, overrides);
    expect(delivered.structured!.reply.text).toBe(canaries.all().find((value) => value.includes("replytext")));
    await fetchReply({ contact_id: opened.contact_id, dialogue_token: token, reply_id: reply.replyId }, overrides);
    await fetchReply({ contact_id: opened.contact_id, dialogue_token: token }, overrides);
    await fetchReply({ contact_id: opened.contact_id, dialogue_token: wrongToken }, overrides);
    await fetchReply({ contact_id: opened.contact_id, dialogue_token: token, reply_id: `rp_${crypto.randomUUID()}` }, overrides);
    await propose({ summary: canaries.make("unknownfield"), [canaries.make("unknownkey")]: "x" }, overrides);
    const d1Canary = canaries.make("d1error");
    await fetchReply({ contact_id: opened.contact_id, dialogue_token: token }, { ...overrides, CONTACTS: faultyD1(env.CONTACTS!, { failWhen: /dialogue_replies/, message: d1Canary }) });
    await propose({ summary: canaries.make("batchfault") }, { ...overrides, CONTACTS: faultyD1(env.CONTACTS!, { failBatches: true, message: d1Canary }) });
    await propose({ summary: canaries.make("badkey") }, { ...overrides, DIALOGUE_TOKEN_KEY: `${key.slice(0, 20)}!` });

    const events = logs.events();
    for (const event of events) assertValidEvent(event);
    expect(events.map((event) => event.tool_result)).toEqual([
      "accepted_for_human_review",
      "accepted_for_human_review",
      "dialogue_not_found",
      "reply_delivered",
      "reply_delivered",
      "no_reply_pending",
      "dialogue_not_found",
      "reply_not_found",
      "invalid_arguments",
      "storage_error",
      "storage_unavailable",
      "dialogue_misconfigured",
    ]);
    for (const event of events.filter((candidate) => candidate.tool_name === "fetch_contact_reply")) {
      expect(event.contact_id).toBeUndefined();
    }
    await assertNoCanaryInTelemetry(canaries, { logs, analytics });
  });
});

describe("DIALOGUE_ENABLED off (07 §1)", () => {
  it("propose_contact touches no C.1 table and answers exactly as without a key", async () => {
    const recorder = faultyD1(env.CONTACTS!);
    const args = { summary: "flag off", submission_id: crypto.randomUUID(), is_test: true };
    const first = await propose(args, { CONTACTS: recorder, DIALOGUE_TOKEN_KEY: "A".repeat(43), DIALOGUE_ENABLED: "TRUE" });
    const retry = await propose(args, { CONTACTS: recorder });
    expect(first.structured!.dialogue).toBeUndefined();
    expect(Object.keys(first.structured!)).toEqual(["status", "contact_id", "received_at", "duplicate", "review_status", "message", "continuation"]);
    expect(retry.text).toBe(first.text.replace('"duplicate":false', '"duplicate":true'));
    expect(recorder.statements.length).toBeGreaterThan(0);
    expect(recorder.statements.filter((statement) => /dialogue/i.test(statement.sql))).toEqual([]);
  });

  it("fetch_contact_reply is an unknown tool, and propose_contact refuses dialogue_token as an unknown field", async () => {
    const fetched = await call("fetch_contact_reply", { contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: `dt_${"A".repeat(43)}` }, {});
    const unknown = await call("no_such_tool", {}, {});
    expect(fetched.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(fetched.error ?? fetched.result).replaceAll("fetch_contact_reply", "no_such_tool")).toBe(JSON.stringify(unknown.error ?? unknown.result));
    const logs = captureConsole();
    const withToken = await propose({ summary: "x", previous_contact_id: `mc_${crypto.randomUUID()}`, dialogue_token: `dt_${"A".repeat(43)}` }, {});
    expect(withToken.isError).toBe(true);
    expect(logs.events()[0]).toMatchObject({ tool_result: "invalid_arguments", validation_field: "arguments", validation_code: "unknown_field" });
    expect((withToken.structured as Structured | undefined)?.dialogue).toBeUndefined();
  });
});
