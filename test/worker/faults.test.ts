/**
 * Fault injection at every write step of the system (issue 14, 10 §2): one
 * table-driven suite over test/worker/fault-table.ts. Each row names a
 * statement or batch; each runs twice — the statement (or batch) resolving
 * `success: false`, and throwing — with an error text that carries a canary.
 *
 * For every row and mode the suite checks, besides the row's specified answer
 * and its storage afterwards (including the recovery of the next call):
 *   - the fault fired (no row can pass vacuously);
 *   - nothing half-written: the database afterwards equals the database at the
 *     moment of the fault — the failed statement wrote nothing and nothing ran
 *     after it (the cron run's lease release excepted);
 *   - nothing previously stored lost or altered: tables the step does not
 *     write are byte-identical, and no row of the others disappeared (but
 *     the expired rows the hourly cleanup deletes by design, `mayDelete`:
 *     that scenario checks every live row stayed);
 *   - no receipt without a stored row: every id in the answer is stored;
 *   - no D1 error text and no visitor text in any log line or Analytics
 *     Engine point.
 * And docs/reliability.md prints exactly the rows of the table.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import reliabilityDoc from "../../docs/reliability.md?raw";
import { faultPoint, snapshotDatabase, type DatabaseSnapshot, type FaultMode } from "../fakes/fault-point";
import { fakeTelegram, type FakeTelegram } from "../fakes/telegram";
import type { FakeAnalytics } from "../fakes/analytics";
import { captureAnalytics, captureConsole, type ConsoleCapture } from "../helpers/door";
import { countRows, db, selectRows } from "../helpers/db";
import { callToolModern } from "../helpers/mcp";
import { Canaries } from "../helpers/privacy";
import { exchange, harness, link, refresh, type Harness, type Linked, type TokenSet } from "../helpers/owner";
import { DIALOGUE_ON, expectedToken, insertReply, openDialogue, sha256Hex } from "./dialogue-harness";
import { CLEANUP_BATCH_ROWS } from "../../worker/notify/cleanup";
import { D1_RETRY, useRetryTiming } from "../../worker/storage/d1-retry";
import { FAULT_TABLE, faultTableBlockOf, faultTableMarkdown, type FaultRow } from "./fault-table";
import { addContact, addObservation, clock, cron, forceOutboxRow, outbox, pinActivation, resetNotifyTables } from "./notify-harness";
import { ownerStack, ownerTokenRequest, ownerTool } from "./owner-stack";

type Structured = Record<string, any>;
type Overrides = Record<string, unknown>;

/** What a step answered, in a form every generic check can read. */
interface Answer {
  /** The whole answer as text (ids are looked up in it). */
  readonly text: string;
  readonly structured?: Structured | undefined;
  readonly isError?: boolean;
  readonly status?: number;
  readonly outcome?: string;
}

interface Run {
  readonly canaries: Canaries;
  readonly logs: ConsoleCapture;
  readonly analytics: FakeAnalytics;
  /** Scenario state from `setup`. */
  readonly state: Record<string, any>;
}

interface Scenario {
  /** Prepares the rows the step needs, on the real database. */
  setup(run: Run): Promise<Record<string, any>>;
  /** Runs the step once with `faulty` as the database. */
  act(faulty: D1Database, run: Run): Promise<Answer>;
  /** The specified answer. */
  expectAnswer(answer: Answer, run: Run): void | Promise<void>;
  /** Storage afterwards and the next call's recovery, on the real database. */
  afterwards(run: Run, answer: Answer): Promise<void>;
}

// ---------------------------------------------------------------- public door calls

async function tool(name: string, args: unknown, overrides: Overrides): Promise<Answer> {
  const { result, message } = await callToolModern(name, args, { overrides });
  return { text: JSON.stringify(message), structured: result?.structuredContent as Structured | undefined, isError: result?.isError === true };
}

const NOT_SAVED = { status: "not_saved", code: "storage_unavailable" };

function expectNotSaved(answer: Answer): void {
  expect(answer.isError).toBe(true);
  expect(answer.structured).toMatchObject(NOT_SAVED);
  expect(answer.structured).not.toHaveProperty("contact_id");
  expect(answer.structured).not.toHaveProperty("dialogue");
}

function expectStatusError(status: string) {
  return (answer: Answer) => {
    expect(answer.isError).toBe(true);
    expect(answer.structured).toEqual({ status, message: expect.any(String) });
  };
}

/** The event of the request (the only door event in the run). */
function eventOf(run: Run): Structured {
  const events = run.logs.events() as unknown as Structured[];
  expect(events).toHaveLength(1);
  return events[0]!;
}

function contactScenario(kind: "absent" | "stored"): Scenario {
  return {
    async setup({ canaries }) {
      return {
        args: { summary: canaries.make("summary"), reply_to: canaries.make("replyTo"), submission_id: crypto.randomUUID(), is_test: true },
      };
    },
    act: (faulty, { state }) => tool("propose_contact", state.args, { CONTACTS: faulty }),
    expectAnswer(answer, run) {
      expectNotSaved(answer);
      expect(eventOf(run)).toMatchObject({ tool_result: "storage_unavailable", outcome: "tool_error" });
    },
    async afterwards({ state }) {
      const stored = await selectRows<Structured>("SELECT * FROM contacts WHERE submission_id = ?", state.args.submission_id);
      expect(stored).toHaveLength(kind === "stored" ? 1 : 0);
      const retry = await tool("propose_contact", state.args, {});
      expect(retry.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: kind === "stored" });
      if (kind === "stored") expect(retry.structured!.contact_id).toBe(stored[0]!.contact_id);
      expect(await countRows("contacts", "submission_id = ?", state.args.submission_id)).toBe(1);
    },
  };
}

function dialogueOpenScenario(kind: "absent" | "stored"): Scenario {
  return {
    async setup({ canaries }) {
      // Dialogues left without their contact by earlier scenarios (the cron ones empty `contacts`): this step must add none.
      const orphans = await countRows("dialogues", "root_contact_id NOT IN (SELECT contact_id FROM contacts)");
      return { args: { summary: canaries.make("summary"), submission_id: crypto.randomUUID(), is_test: true }, orphans };
    },
    act: (faulty, { state }) => tool("propose_contact", state.args, { ...DIALOGUE_ON, CONTACTS: faulty }),
    expectAnswer: (answer) => expectNotSaved(answer),
    async afterwards({ state }) {
      const contacts = await selectRows<Structured>("SELECT contact_id FROM contacts WHERE submission_id = ?", state.args.submission_id);
      expect(contacts).toHaveLength(kind === "stored" ? 1 : 0);
      if (kind === "stored") {
        const membership = await selectRows<Structured>(
          "SELECT dc.role, d.dialogue_id FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id WHERE dc.contact_id = ?",
          contacts[0]!.contact_id,
        );
        expect(membership).toEqual([{ role: "root", dialogue_id: expect.any(String) }]);
        const retry = await tool("propose_contact", state.args, DIALOGUE_ON);
        expect(retry.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: true, dialogue: { status: "token_issued" } });
        expect(retry.structured!.dialogue.dialogue_token).toBe(await expectedToken(membership[0]!.dialogue_id));
      } else {
        expect(await countRows("dialogues", "root_contact_id NOT IN (SELECT contact_id FROM contacts)")).toBe(state.orphans);
        const retry = await tool("propose_contact", state.args, DIALOGUE_ON);
        expect(retry.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "token_issued" } });
      }
    },
  };
}

function signalScenario(kind: "absent" | "stored"): Scenario {
  return {
    async setup({ canaries }) {
      return { args: { goal: canaries.make("goal"), learned: canaries.make("learned"), submission_id: crypto.randomUUID(), is_test: true } };
    },
    act: (faulty, { state }) => tool("contribute_task_signal", state.args, { CONTACTS: faulty }),
    expectAnswer(answer, run) {
      expectStatusError("storage_error")(answer);
      expect(eventOf(run)).toMatchObject({ tool_result: "storage_error" });
    },
    async afterwards({ state }) {
      const stored = await selectRows<Structured>("SELECT signal_id FROM task_signals WHERE submission_id = ?", state.args.submission_id);
      expect(stored).toHaveLength(kind === "stored" ? 1 : 0);
      const retry = await tool("contribute_task_signal", state.args, {});
      expect(retry.structured).toMatchObject({ status: kind === "stored" ? "duplicate" : "accepted" });
      if (kind === "stored") expect(retry.structured!.signal_id).toBe(stored[0]!.signal_id);
    },
  };
}

function observationScenario(withOutbox: boolean): Scenario {
  const flags: Overrides = withOutbox ? { TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: "true" } : {};
  return {
    async setup({ canaries }) {
      if (withOutbox) {
        await resetNotifyTables();
        await pinActivation(new Date(Date.now() - 3_600_000).toISOString());
      }
      return { args: { goal: `deploy a worker ${canaries.make("goal")}`, blocker: canaries.make("blocker") } };
    },
    act: (faulty, { state }) => tool("search_shared_experience", state.args, { ...flags, CONTACTS: faulty }),
    expectAnswer(answer, run) {
      expect(answer.isError).toBe(false);
      expect(["matches_found", "no_relevant_experience"]).toContain(answer.structured!.status);
      expect(eventOf(run)).toMatchObject({ observed_task_saved: false, outcome: "success" });
    },
    async afterwards({ state }) {
      expect(await countRows("observed_task_signals", "goal = ?", state.args.goal)).toBe(0);
      if (withOutbox) {
        expect(await countRows("notification_outbox")).toBe(0);
        // The control: the same search without the fault stores both rows.
        await tool("search_shared_experience", state.args, flags);
        expect(await countRows("observed_task_signals", "goal = ?", state.args.goal)).toBe(1);
        expect(await countRows("notification_outbox", "source_kind = 'observation'")).toBe(1);
      }
    },
  };
}

// ---------------------------------------------------------------- the cron run

/**
 * A run with work on every transition: a test contact forced into the outbox
 * (skipped), two new contacts (discovered; one delivered, one failing), a row
 * at its eighth attempt (failed), a stale `sending` row (recovered, delivered)
 * and 21 pending goal rows (one capped).
 */
async function busyCron(canaries: Canaries, telegram: FakeTelegram): Promise<Record<string, any>> {
  clock.reset();
  await resetNotifyTables();
  await pinActivation(clock.iso(-600));
  const text = (label: string) => canaries.make(label);
  const skipped = await addContact({ createdAt: clock.iso(-500), test: true, summary: text("testSummary") });
  await forceOutboxRow("contact", skipped, { createdAt: clock.iso(-500) });
  const delivered = await addContact({ createdAt: clock.iso(-400), summary: text("summary"), replyTo: text("replyTo") });
  const retried = await addContact({ createdAt: clock.iso(-300), summary: text("retriedSummary") });
  const failing = await addContact({ createdAt: clock.iso(-250) });
  await forceOutboxRow("contact", failing, { createdAt: clock.iso(-250), state: "retry_wait", attempts: 7, nextAttemptAt: clock.iso(-10) });
  const stale = await addContact({ createdAt: clock.iso(-200) });
  await forceOutboxRow("contact", stale, { createdAt: clock.iso(-200), state: "sending", attempts: 1, lastAttemptAt: clock.iso(-300) });
  for (let index = 0; index < 21; index += 1) {
    const observation = await addObservation({ createdAt: clock.iso(-100 + index), goal: text(`goal${index}`) });
    await forceOutboxRow("observation", observation, { createdAt: clock.iso(-100 + index) });
  }
  telegram.queue("ok", { status: 500, body: text("telegramBody") }, { status: 500 });
  return { skipped, delivered, retried, failing, stale };
}

/** Telegram sends before each cron fault point, in the busy run's order (skip, ok, 500, 500, ok). */
const SENDS_BEFORE_FAULT: Record<string, number> = {
  "cron-ensure-state": 0,
  "cron-acquire-lease": 0,
  "cron-pin-chat": 0,
  "cron-discover": 0,
  "cron-recover-stale": 0,
  "cron-cap-goals": 0,
  "cron-claim": 0,
  "cron-mark-skipped": 0,
  "cron-mark-delivered": 1,
  "cron-record-delivery": 1,
  "cron-mark-retry": 2,
  "cron-record-failure": 2,
  "cron-mark-failed": 3,
  "cron-release-lease": 4,
  "cron-cleanup": 4,
  "cron-cleanup-batch": 4,
};

/** The rows the hourly cleanup must never delete: spent ids not yet expired, attempt windows of the last two hours. */
async function liveCleanupRows(): Promise<unknown[]> {
  return [
    await selectRows("SELECT * FROM owner_oauth_spent WHERE expires_at >= ? ORDER BY id", clock.iso()),
    await selectRows("SELECT * FROM dialogue_fetch_attempts WHERE window_start >= ? ORDER BY key_hash, window_start", clock.iso(-2 * 3600)),
  ];
}

function cronScenario(id: string): Scenario {
  const cleanup = id === "cron-cleanup" || id === "cron-cleanup-batch";
  const expectedOutcome = id === "cron-release-lease" || cleanup ? "ok" : "storage_error";
  return {
    async setup({ canaries }) {
      const telegram = fakeTelegram();
      const rows = await busyCron(canaries, telegram);
      if (id === "cron-cleanup") {
        await db().prepare("INSERT INTO owner_oauth_spent (id, kind, expires_at) VALUES (?, 'code', ?)").bind(`expired${crypto.randomUUID()}`, clock.iso(-60)).run();
      }
      if (id === "cron-cleanup-batch") {
        // One batch and one row more, so the run needs a second batch — the one that fails.
        await db()
          .prepare(
            `INSERT INTO owner_oauth_spent (id, kind, expires_at)
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT 'expired' || ? || i, 'code', ? FROM n`,
          )
          .bind(CLEANUP_BATCH_ROWS + 1, crypto.randomUUID(), clock.iso(-60))
          .run();
      }
      return { telegram, rows, live: await liveCleanupRows() };
    },
    async act(faulty, { state }) {
      const minuteZero = clock.ms - new Date(clock.ms).getUTCMinutes() * 60_000;
      const event = await cron({ CONTACTS: faulty }, cleanup ? { scheduledTime: minuteZero } : {});
      return { text: JSON.stringify(event), outcome: event.outcome, structured: event as unknown as Structured };
    },
    expectAnswer(answer, { state, logs }) {
      expect(answer.outcome).toBe(expectedOutcome);
      expect(logs.lines()).toHaveLength(1);
      expect(state.telegram.requests).toHaveLength(SENDS_BEFORE_FAULT[id]!);
    },
    async afterwards({ state }) {
      const sources = async () => [await selectRows("SELECT * FROM contacts ORDER BY contact_id"), await selectRows("SELECT * FROM observed_task_signals ORDER BY observation_id")];
      const before = await sources();
      if (id === "cron-release-lease") {
        clock.advance(10);
        expect((await cron()).outcome).toBe("lease_busy");
        clock.advance(60);
        expect((await cron()).outcome).toBe("ok");
      } else if (cleanup) {
        expect(await countRows("owner_oauth_spent", "expires_at < ?", clock.iso())).toBe(1);
        expect(await liveCleanupRows()).toEqual(state.live);
        const event = await cron({}, { scheduledTime: clock.ms - new Date(clock.ms).getUTCMinutes() * 60_000 + 3_600_000 });
        expect(event.outcome).toBe("ok");
        expect(await countRows("owner_oauth_spent", "expires_at < ?", clock.iso())).toBe(0);
      } else {
        // The next runs (after the lease and the stale window) recover: nothing stays stuck in `sending`.
        clock.advance(180);
        expect((await cron()).outcome).toBe("ok");
        clock.advance(180);
        expect((await cron()).outcome).toBe("ok");
        expect((await outbox()).filter((row) => row.state === "sending")).toEqual([]);
        // Every new contact got its outbox row; the test contact was never sent.
        for (const contact of [state.rows.delivered, state.rows.retried]) expect(await countRows("notification_outbox", "source_id = ?", contact)).toBe(1);
        expect(state.telegram.texts().join("\n")).not.toContain(state.rows.skipped);
        const skipped = (await outbox()).find((row) => row.source_id === state.rows.skipped)!;
        expect(skipped.state).toBe("skipped");
      }
      expect(await sources()).toEqual(before);
    },
  };
}

// ---------------------------------------------------------------- fetch_contact_reply

function fetchScenario(id: "fetch-delivery-mark" | "fetch-after-mark" | "fetch-attempt-counter"): Scenario {
  return {
    async setup({ canaries }) {
      const dialogue = await openDialogue(canaries.make("summary"));
      canaries.track("dialogueToken", dialogue.token);
      const reply = await insertReply(dialogue.dialogueId, dialogue.contactId, canaries.make("replyText"));
      return { ...dialogue, reply };
    },
    act(faulty, { state }) {
      const token = id === "fetch-attempt-counter" ? `dt_${"w".repeat(43)}` : state.token;
      return tool("fetch_contact_reply", { contact_id: state.contactId, dialogue_token: token }, { ...DIALOGUE_ON, CONTACTS: faulty });
    },
    expectAnswer(answer, run) {
      expectStatusError("storage_error")(answer);
      expect(answer.text).not.toContain(run.state.reply.replyId);
    },
    async afterwards({ state }) {
      const [row] = await selectRows<Structured>("SELECT fetched_at FROM dialogue_replies WHERE reply_id = ?", state.reply.replyId);
      const args = { contact_id: state.contactId, dialogue_token: state.token };
      if (id === "fetch-delivery-mark") {
        expect(row!.fetched_at).toBeNull();
        const next = await tool("fetch_contact_reply", args, DIALOGUE_ON);
        expect(next.structured).toMatchObject({ status: "reply_delivered", redelivered: false, reply: { reply_id: state.reply.replyId } });
      } else if (id === "fetch-after-mark") {
        expect(row!.fetched_at).not.toBeNull();
        const next = await tool("fetch_contact_reply", args, DIALOGUE_ON);
        expect(next.structured).toMatchObject({ status: "no_reply_pending" });
        expect(next.structured!.delivered_replies.map((entry: Structured) => entry.reply_id)).toEqual([state.reply.replyId]);
        const reread = await tool("fetch_contact_reply", { ...args, reply_id: state.reply.replyId }, DIALOGUE_ON);
        expect(reread.structured).toMatchObject({ status: "reply_delivered", redelivered: true, fetched_at: row!.fetched_at });
      } else {
        const keyHash = await sha256Hex(`dialogue:${state.contactId}`);
        expect(await countRows("dialogue_fetch_attempts", "key_hash = ?", keyHash)).toBe(0);
        const wrong = await tool("fetch_contact_reply", { ...args, dialogue_token: `dt_${"w".repeat(43)}` }, DIALOGUE_ON);
        expect(wrong.structured).toMatchObject({ status: "dialogue_not_found" });
        expect(await selectRows("SELECT failures FROM dialogue_fetch_attempts WHERE key_hash = ?", keyHash)).toEqual([{ failures: 1 }]);
        expect(row!.fetched_at).toBeNull();
      }
    },
  };
}

// ---------------------------------------------------------------- owner tools and OAuth (through the owner stack)

const ALL_SCOPES = "owner.read owner.write owner.publish";

/** A linked owner with tokens, through the OAuth handlers on the real ledger, at the real clock. */
async function ownerSession(): Promise<{ h: Harness; linked: Linked; tokens: TokenSet }> {
  const h = harness();
  h.time.now = Date.now();
  const linked = await link(h, { scope: ALL_SCOPES });
  return { h, linked, tokens: await exchange(h, linked) };
}

async function insertDraft(contactId: string, body: string): Promise<string> {
  const draftId = `dr_${crypto.randomUUID()}`;
  const now = new Date().toISOString();
  await db()
    .prepare("INSERT INTO owner_drafts (draft_id, contact_id, body, revision, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)")
    .bind(draftId, contactId, body, now, now)
    .run();
  return draftId;
}

function ownerScenario(
  prepare: (run: Run) => Promise<Record<string, any>>,
  name: string,
  args: (state: Record<string, any>) => unknown,
  afterwards: (run: Run, call: (toolName: string, toolArgs: unknown) => ReturnType<typeof ownerTool>) => Promise<void>,
): Scenario {
  return {
    async setup(run) {
      const session = await ownerSession();
      run.canaries.track("accessToken", session.tokens.access_token);
      run.canaries.track("refreshToken", session.tokens.refresh_token);
      return { ...session, ...(await prepare(run)) };
    },
    async act(faulty, { state, analytics }) {
      const answer = await ownerTool(ownerStack(state.h.env, { coreDb: faulty, analytics }), state.tokens.access_token, name, args(state));
      return { text: answer.text, structured: answer.structured, isError: answer.isError, status: answer.status };
    },
    expectAnswer(answer, { logs }) {
      expect(answer.status).toBe(200);
      expectStatusError("storage_error")(answer);
      const events = logs.events() as unknown as Structured[];
      expect(events.map((event) => event.event_type).sort()).toEqual(["http", "owner_mcp_request"]);
      expect(events.find((event) => event.event_type === "owner_mcp_request")).toMatchObject({ tool_name: name, tool_result: "storage_error" });
    },
    afterwards: (run) => afterwards(run, (toolName, toolArgs) => ownerTool(ownerStack(run.state.h.env), run.state.tokens.access_token, toolName, toolArgs)),
  };
}

const ownerContact = async ({ canaries }: Run) => ({
  contactId: await addContact({ createdAt: new Date().toISOString(), summary: canaries.make("summary") }),
  text: canaries.make("draftText"),
});

const ownerDialogue = async ({ canaries }: Run) => {
  const dialogue = await openDialogue(canaries.make("summary"));
  canaries.track("dialogueToken", dialogue.token);
  const body = canaries.make("draftBody");
  return { ...dialogue, body, draftId: await insertDraft(dialogue.contactId, body) };
};

function oauthScenario(kind: "code" | "refresh" | "family"): Scenario {
  const form = (state: Record<string, any>): Record<string, string> =>
    kind === "code"
      ? { grant_type: "authorization_code", code: state.linked.code, redirect_uri: state.linked.redirectUri, client_id: state.linked.clientId, code_verifier: state.linked.verifier }
      : { grant_type: "refresh_token", refresh_token: state.refreshToken, client_id: state.linked.clientId };
  return {
    async setup({ canaries }) {
      const h = harness();
      h.time.now = Date.now();
      const linked = await link(h, { scope: "owner.read owner.write" });
      canaries.track("code", linked.code);
      canaries.track("verifier", linked.verifier);
      if (kind === "code") return { h, linked };
      const tokens = await exchange(h, linked);
      canaries.track("refreshToken", tokens.refresh_token);
      if (kind === "refresh") return { h, linked, refreshToken: tokens.refresh_token };
      // Rotate once, so presenting the first refresh token again is a reuse.
      const rotated = await refresh(h, linked.clientId, tokens.refresh_token);
      expect(rotated.response.status).toBe(200);
      const next = (await rotated.response.json()) as TokenSet;
      canaries.track("rotatedRefreshToken", next.refresh_token);
      return { h, linked, refreshToken: tokens.refresh_token, rotated: next.refresh_token, families: await countRows("owner_oauth_spent", "kind = 'family'") };
    },
    async act(faulty, { state, analytics }) {
      const response = await ownerTokenRequest(ownerStack(state.h.env, { coreDb: faulty, analytics }), form(state));
      const text = await response.text();
      return { text, status: response.status, structured: JSON.parse(text) as Structured };
    },
    expectAnswer(answer, run) {
      expect(answer.status).toBe(503);
      expect(answer.structured).toEqual({ error: "temporarily_unavailable", error_description: expect.any(String) });
      expect(eventOf(run)).toMatchObject({ event_type: "http", owner_step: kind === "code" ? "token_code" : "token_refresh", outcome: "core_unavailable" });
    },
    async afterwards({ state }) {
      const stack = ownerStack(state.h.env);
      if (kind === "family") {
        expect(await countRows("owner_oauth_spent", "kind = 'family'")).toBe(state.families);
        const reuse = await ownerTokenRequest(stack, form(state));
        expect(reuse.status).toBe(400);
        expect(((await reuse.json()) as Structured).error).toBe("invalid_grant");
        expect(await countRows("owner_oauth_spent", "kind = 'family'")).toBe(state.families + 1);
        const afterRevocation = await ownerTokenRequest(stack, { ...form(state), refresh_token: state.rotated });
        expect(afterRevocation.status).toBe(400);
        return;
      }
      const retry = await ownerTokenRequest(stack, form(state));
      expect(retry.status).toBe(200);
      expect(await retry.json()).toMatchObject({ token_type: "Bearer", access_token: expect.any(String), refresh_token: expect.any(String) });
    },
  };
}

// ---------------------------------------------------------------- the scenarios, one per row

const SCENARIOS: Record<string, Scenario> = {
  "contact-lazy-table": contactScenario("absent"),
  "contact-insert": contactScenario("absent"),
  "contact-read-back": contactScenario("stored"),
  "dialogue-open-batch": dialogueOpenScenario("absent"),
  "dialogue-open-read-back": dialogueOpenScenario("stored"),
  "dialogue-follow-up-batch": {
    async setup({ canaries }) {
      const dialogue = await openDialogue(canaries.make("rootSummary"));
      canaries.track("dialogueToken", dialogue.token);
      return {
        ...dialogue,
        args: { summary: canaries.make("summary"), previous_contact_id: dialogue.contactId, dialogue_token: dialogue.token, submission_id: crypto.randomUUID(), is_test: true },
      };
    },
    act: (faulty, { state }) => tool("propose_contact", state.args, { ...DIALOGUE_ON, CONTACTS: faulty }),
    expectAnswer: (answer) => expectNotSaved(answer),
    async afterwards({ state }) {
      expect(await countRows("contacts", "submission_id = ?", state.args.submission_id)).toBe(0);
      expect(await countRows("dialogue_contacts", "dialogue_id = ?", state.dialogueId)).toBe(1);
      const retry = await tool("propose_contact", state.args, DIALOGUE_ON);
      expect(retry.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "joined" } });
      expect(await countRows("dialogue_contacts", "dialogue_id = ?", state.dialogueId)).toBe(2);
    },
  },
  "signal-insert": signalScenario("absent"),
  "signal-read-back": signalScenario("stored"),
  "observation-insert": observationScenario(false),
  "observation-outbox-batch": observationScenario(true),
  ...Object.fromEntries(Object.keys(SENDS_BEFORE_FAULT).map((id) => [id, cronScenario(id)])),
  "fetch-delivery-mark": fetchScenario("fetch-delivery-mark"),
  "fetch-after-mark": fetchScenario("fetch-after-mark"),
  "fetch-attempt-counter": fetchScenario("fetch-attempt-counter"),
  "owner-draft-insert": ownerScenario(ownerContact, "owner_save_draft", (s) => ({ contact_id: s.contactId, text: s.text }), async ({ state }, call) => {
    expect(await countRows("owner_drafts", "contact_id = ?", state.contactId)).toBe(0);
    expect((await call("owner_save_draft", { contact_id: state.contactId, text: state.text })).structured).toMatchObject({ status: "draft_saved", revision: 1 });
  }),
  "owner-draft-read-back": ownerScenario(ownerContact, "owner_save_draft", (s) => ({ contact_id: s.contactId, text: s.text }), async ({ state }, call) => {
    const drafts = await selectRows<Structured>("SELECT draft_id, body, revision FROM owner_drafts WHERE contact_id = ?", state.contactId);
    expect(drafts).toEqual([{ draft_id: expect.stringMatching(/^dr_/), body: state.text, revision: 1 }]);
    const listed = await call("owner_list_contacts", { contact_id: state.contactId, detail: "full" });
    expect(listed.text).toContain(drafts[0]!.draft_id);
  }),
  "owner-draft-update": ownerScenario(
    async (run) => {
      const contact = await ownerContact(run);
      const original = run.canaries.make("originalDraft");
      return { ...contact, original, draftId: await insertDraft(contact.contactId, original) };
    },
    "owner_save_draft",
    (s) => ({ contact_id: s.contactId, draft_id: s.draftId, expected_revision: 1, text: s.text }),
    async ({ state }, call) => {
      expect(await selectRows("SELECT body, revision FROM owner_drafts WHERE draft_id = ?", state.draftId)).toEqual([{ body: state.original, revision: 1 }]);
      const retry = await call("owner_save_draft", { contact_id: state.contactId, draft_id: state.draftId, expected_revision: 1, text: state.text });
      expect(retry.structured).toMatchObject({ status: "draft_saved", revision: 2 });
    },
  ),
  "owner-state-upsert": ownerScenario(
    async (run) => {
      const contact = await ownerContact(run);
      await db().prepare("INSERT INTO contact_owner_state (contact_id, state, updated_at) VALUES (?, 'acknowledged', ?)").bind(contact.contactId, new Date().toISOString()).run();
      return contact;
    },
    "owner_set_contact_state",
    (s) => ({ contact_id: s.contactId, state: "archived" }),
    async ({ state }, call) => {
      expect(await selectRows("SELECT state FROM contact_owner_state WHERE contact_id = ?", state.contactId)).toEqual([{ state: "acknowledged" }]);
      const retry = await call("owner_set_contact_state", { contact_id: state.contactId, state: "archived" });
      expect(retry.structured).toMatchObject({ status: "state_set", state: "archived", previous_state: "acknowledged" });
    },
  ),
  "owner-publish-insert": ownerScenario(ownerDialogue, "owner_publish_reply", (s) => ({ draft_id: s.draftId, expected_revision: 1 }), async ({ state }, call) => {
    expect(await countRows("dialogue_replies", "draft_id = ?", state.draftId)).toBe(0);
    const retry = await call("owner_publish_reply", { draft_id: state.draftId, expected_revision: 1 });
    expect(retry.structured).toMatchObject({ status: "reply_published", draft_id: state.draftId });
  }),
  "owner-publish-read-back": ownerScenario(ownerDialogue, "owner_publish_reply", (s) => ({ draft_id: s.draftId, expected_revision: 1 }), async ({ state }, call) => {
    const replies = await selectRows<Structured>("SELECT reply_id, body, draft_revision FROM dialogue_replies WHERE draft_id = ?", state.draftId);
    expect(replies).toEqual([{ reply_id: expect.stringMatching(/^rp_/), body: state.body, draft_revision: 1 }]);
    const retry = await call("owner_publish_reply", { draft_id: state.draftId, expected_revision: 1 });
    expect(retry.structured).toMatchObject({ status: "already_published", reply_id: replies[0]!.reply_id });
  }),
  "owner-revoke": ownerScenario(ownerDialogue, "owner_revoke_dialogue", (s) => ({ contact_id: s.contactId }), async ({ state }, call) => {
    expect(await selectRows("SELECT revoked_at FROM dialogues WHERE dialogue_id = ?", state.dialogueId)).toEqual([{ revoked_at: null }]);
    const open = await tool("fetch_contact_reply", { contact_id: state.contactId, dialogue_token: state.token }, DIALOGUE_ON);
    expect(open.structured).toMatchObject({ status: "no_reply_pending" });
    expect((await call("owner_revoke_dialogue", { contact_id: state.contactId })).structured).toMatchObject({ status: "dialogue_revoked" });
  }),
  "oauth-code-spend": oauthScenario("code"),
  "oauth-refresh-spend": oauthScenario("refresh"),
  "oauth-family-revocation": oauthScenario("family"),
};

// ---------------------------------------------------------------- generic checks

const ID_PATTERN = /\b(?:mc|ts|dr|rp|dg)_[0-9a-f-]{36}\b/g;

/** The cron run releases its lease after a failure (05 §5 step 12): those state fields may differ from the fault moment. */
function withoutLeaseFields(snapshot: DatabaseSnapshot): DatabaseSnapshot {
  const copy = { ...snapshot };
  copy.notification_state = (snapshot.notification_state ?? []).map((line) => {
    const { lease_id: _id, lease_expires_at: _expires, updated_at: _updated, ...rest } = JSON.parse(line) as Structured;
    return JSON.stringify(rest);
  });
  return copy;
}

function keysOf(lines: readonly string[]): string[] {
  return lines.map((line) => JSON.stringify(Object.values(JSON.parse(line) as Structured)[0]));
}

/** The console lines (and the events among them) written from line `start` on. */
function linesFrom(logs: ConsoleCapture, start: number): ConsoleCapture {
  const lines = () => logs.lines().slice(start);
  return {
    lines,
    events: () =>
      lines().flatMap((line) => {
        try {
          const value = JSON.parse(line) as unknown;
          return typeof value === "object" && value !== null && "event_id" in value ? [value as never] : [];
        } catch {
          return [];
        }
      }),
  };
}

afterEach(() => {
  clock.reset();
});

describe("fault injection at every write step (issue 14)", () => {
  it("has exactly one scenario per table row", () => {
    expect(Object.keys(SCENARIOS).sort()).toEqual(FAULT_TABLE.map((row) => row.id).sort());
    expect(new Set(FAULT_TABLE.map((row) => row.id)).size).toBe(FAULT_TABLE.length);
  });

  it("docs/reliability.md prints exactly the rows of the table", () => {
    expect(faultTableBlockOf(reliabilityDoc), "the fault table markers are missing from docs/reliability.md").not.toBeNull();
    expect(faultTableBlockOf(reliabilityDoc)).toBe(faultTableMarkdown());
  });

  describe.each(FAULT_TABLE.map((row) => [row.id, row] as const))("%s", (_id, row: FaultRow) => {
    it.each<[string, FaultMode]>([
      [row.target === "batch" ? "batch fails" : "statement fails", "fails"],
      [row.target === "batch" ? "batch throws" : "statement throws", "throws"],
    ])("%s", async (_label, mode) => {
      // A non-transient D1 error: never retried, the fault point runs exactly once (09 §5).
      await failingStep(row, mode, (canaries) => `D1_ERROR: SQLITE_CONSTRAINT ${canaries.make("d1ErrorText")}`);
      expect(slept, "a non-transient error was retried").toEqual([]);
    });
  });
});

/** A row's scenario set up with fresh canaries and captured logs and analytics, before any fault is armed. */
async function setUpScenario(row: FaultRow) {
  const scenario = SCENARIOS[row.id]!;
  const canaries = new Canaries();
  const logs = captureConsole();
  const analytics = captureAnalytics();
  const run: Run = { canaries, logs, analytics, state: {} };
  Object.assign(run.state, await scenario.setup(run));
  return { scenario, canaries, logs, analytics, run };
}

/**
 * One row's step against a binding that fails `times` consecutive executions
 * of the fault point, with every generic check of the suite and the row's
 * specified failure answer and recovery.
 */
async function failingStep(row: FaultRow, mode: FaultMode, messageOf: (canaries: Canaries) => string, times = 1) {
  const { scenario, canaries, logs, analytics, run } = await setUpScenario(row);
  const message = messageOf(canaries);

  const before = await snapshotDatabase(db());
  const faulty = faultPoint(db(), { pattern: row.pattern, target: row.target, mode, message, times, ...(row.occurrence ? { occurrence: row.occurrence } : {}) });
  const setupLines = logs.lines().length;
  const setupPoints = analytics.points.length;
  const answer = await scenario.act(faulty, run);
  const after = await snapshotDatabase(db());
  const stepLogs = linesFrom(logs, setupLines);

  expect(faulty.fired, `the fault point of ${row.id} was never reached`).toBe(true);
  await scenario.expectAnswer(answer, { ...run, logs: stepLogs });
  const actEvents = stepLogs.events() as unknown as Structured[];

  // Nothing half-written: the failed statement wrote nothing and nothing ran after it.
  const isCron = row.id.startsWith("cron-");
  expect(isCron ? withoutLeaseFields(after) : after).toEqual(isCron ? withoutLeaseFields(faulty.atFault!) : faulty.atFault);

  // Nothing previously stored lost or altered (the cleanup's expired rows excepted; its scenario counts what is left).
  for (const [table, rows] of Object.entries(before)) {
    if (row.mayDelete?.includes(table)) continue;
    if (row.writes.includes(table)) {
      const kept = new Set(keysOf(after[table] ?? []));
      expect(keysOf(rows).filter((key) => !kept.has(key)), `rows lost from ${table}`).toEqual([]);
    } else {
      expect(after[table], `${table} changed although ${row.id} does not write it`).toEqual(rows);
    }
  }

  // No receipt without a stored row.
  const stored = JSON.stringify(after);
  for (const id of answer.text.match(ID_PATTERN) ?? []) expect(stored, `answer names ${id}, which is not stored`).toContain(id);

  // No D1 error text, no visitor text in telemetry.
  expect(stepLogs.lines().length).toBeGreaterThan(0);
  expect(stepLogs.lines().join("\n")).not.toContain("D1_ERROR");
  await canaries.assertAbsentFrom(logs.lines());
  await canaries.assertAbsentFrom(analytics.lines().slice(setupPoints), "an Analytics Engine point");

  await scenario.afterwards(run, answer);
  return { faulty, run, actEvents };
}


// ---------------------------------------------------------------- retries of D1's transient errors (issue 20, 09 §5)

/** Steps whose statement is never retried (decision 178): a transient error there is the row's failure, after one attempt. */
const NOT_RETRIED = new Set([
  "cron-record-failure",
  "fetch-delivery-mark",
  "fetch-attempt-counter",
  "owner-draft-update",
  "oauth-code-spend",
  "oauth-refresh-spend",
  "oauth-family-revocation",
]);

/** Steps whose request event is written by the door that ran the statement (the owner tools run in core, behind RPC). */
const COUNTED = (id: string) => !id.startsWith("owner-") && !id.startsWith("oauth-");

const transientMessage = (canaries: Canaries) => `D1_ERROR: Network connection lost. ${canaries.make("d1ErrorText")}`;

/** The specified success of each retried step after one transient failure, and its exactly-one-row check. */
const SUCCEEDS: Record<string, (answer: Answer, run: Run) => Promise<void>> = {
  ...Object.fromEntries(
    ["contact-lazy-table", "contact-insert", "contact-read-back"].map((id) => [
      id,
      async (answer: Answer, { state }: Run) => {
        expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false });
        const stored = await selectRows<Structured>("SELECT contact_id FROM contacts WHERE submission_id = ?", state.args.submission_id);
        expect(stored).toEqual([{ contact_id: answer.structured!.contact_id }]);
      },
    ]),
  ),
  ...Object.fromEntries(
    ["dialogue-open-batch", "dialogue-open-read-back"].map((id) => [
      id,
      async (answer: Answer, { state }: Run) => {
        expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "token_issued" } });
        const stored = await selectRows<Structured>("SELECT contact_id FROM contacts WHERE submission_id = ?", state.args.submission_id);
        expect(stored).toEqual([{ contact_id: answer.structured!.contact_id }]);
        expect(await countRows("dialogues", "root_contact_id = ?", stored[0]!.contact_id)).toBe(1);
        expect(await countRows("dialogue_contacts", "contact_id = ?", stored[0]!.contact_id)).toBe(1);
      },
    ]),
  ),
  "dialogue-follow-up-batch": async (answer, { state }) => {
    expect(answer.structured).toMatchObject({ status: "accepted_for_human_review", duplicate: false, dialogue: { status: "joined" } });
    expect(await countRows("contacts", "submission_id = ?", state.args.submission_id)).toBe(1);
    expect(await countRows("dialogue_contacts", "dialogue_id = ?", state.dialogueId)).toBe(2);
  },
  ...Object.fromEntries(
    ["signal-insert", "signal-read-back"].map((id) => [
      id,
      async (answer: Answer, { state }: Run) => {
        expect(answer.structured).toMatchObject({ status: "accepted" });
        const stored = await selectRows<Structured>("SELECT signal_id FROM task_signals WHERE submission_id = ?", state.args.submission_id);
        expect(stored).toEqual([{ signal_id: answer.structured!.signal_id }]);
      },
    ]),
  ),
  "observation-insert": async (answer, { state, logs }) => {
    expect(eventOf({ logs } as Run)).toMatchObject({ observed_task_saved: true, outcome: "success" });
    expect(await countRows("observed_task_signals", "goal = ?", state.args.goal)).toBe(1);
  },
  "observation-outbox-batch": async (answer, { state, logs }) => {
    expect(eventOf({ logs } as Run)).toMatchObject({ observed_task_saved: true, outcome: "success" });
    expect(await countRows("observed_task_signals", "goal = ?", state.args.goal)).toBe(1);
    expect(await countRows("notification_outbox", "source_kind = 'observation'")).toBe(1);
  },
  ...Object.fromEntries(
    Object.keys(SENDS_BEFORE_FAULT)
      .filter((id) => !NOT_RETRIED.has(id))
      .map((id) => [
        id,
        async (answer: Answer, { state }: Run) => {
          expect(answer.outcome).toBe("ok");
          // The whole busy run: skip, delivery, two failed sends, the recovered stale row — each sent once.
          expect(state.telegram.requests).toHaveLength(SENDS_BEFORE_FAULT["cron-release-lease"]!);
          for (const contact of [state.rows.delivered, state.rows.retried]) expect(await countRows("notification_outbox", "source_id = ?", contact)).toBe(1);
          expect((await outbox()).filter((row) => row.state === "sending")).toEqual([]);
        },
      ]),
  ),
  "fetch-after-mark": async (answer, { state }) => {
    expect(answer.structured).toMatchObject({ status: "reply_delivered", redelivered: false, reply: { reply_id: state.reply.replyId } });
  },
  ...Object.fromEntries(
    ["owner-draft-insert", "owner-draft-read-back"].map((id) => [
      id,
      async (answer: Answer, { state }: Run) => {
        expect(answer.structured).toMatchObject({ status: "draft_saved", revision: 1 });
        expect(await selectRows("SELECT draft_id FROM owner_drafts WHERE contact_id = ?", state.contactId)).toEqual([{ draft_id: answer.structured!.draft_id }]);
      },
    ]),
  ),
  "owner-state-upsert": async (answer, { state }) => {
    expect(answer.structured).toMatchObject({ status: "state_set", state: "archived", previous_state: "acknowledged" });
    expect(await selectRows("SELECT state FROM contact_owner_state WHERE contact_id = ?", state.contactId)).toEqual([{ state: "archived" }]);
  },
  ...Object.fromEntries(
    ["owner-publish-insert", "owner-publish-read-back"].map((id) => [
      id,
      async (answer: Answer, { state }: Run) => {
        expect(answer.structured).toMatchObject({ status: "reply_published", draft_id: state.draftId });
        expect(await selectRows("SELECT reply_id FROM dialogue_replies WHERE draft_id = ?", state.draftId)).toEqual([{ reply_id: answer.structured!.reply_id }]);
      },
    ]),
  ),
  "owner-revoke": async (answer, { state }) => {
    expect(answer.structured).toMatchObject({ status: "dialogue_revoked" });
    expect(await countRows("dialogues", "dialogue_id = ? AND revoked_at IS NOT NULL", state.dialogueId)).toBe(1);
  },
};

/** The waits the door asked for; no test waits real time (09 §5). */
let slept: number[] = [];
let restoreTiming: () => void = () => undefined;

beforeEach(() => {
  slept = [];
  restoreTiming = useRetryTiming({ sleep: async (ms) => void slept.push(ms), random: () => 0.999 });
});

afterEach(() => {
  restoreTiming();
});

/** The count of retries in the step's one event (a tool call's or a cron run's). */
function retriesInEvent(events: readonly Structured[]): unknown {
  expect(events).toHaveLength(1);
  return events[0]!.d1_retries;
}

describe("retries of D1's transient errors (issue 20)", () => {
  it("every retried step has its success check, every step is covered", () => {
    expect(Object.keys(SUCCEEDS).sort()).toEqual(FAULT_TABLE.map((row) => row.id).filter((id) => !NOT_RETRIED.has(id)).sort());
  });

  describe.each(FAULT_TABLE.map((row) => [row.id, row] as const))("%s", (_id, row: FaultRow) => {
    const retried = !NOT_RETRIED.has(row.id);

    it(retried ? "a transient error on the first attempt: the specified success, exactly one row" : "a transient error: not retried, the specified failure", async () => {
      if (!retried) {
        await failingStep(row, "throws", transientMessage);
        expect(slept).toEqual([]);
        return;
      }
      const { scenario, canaries, logs, run } = await setUpScenario(row);
      const faulty = faultPoint(db(), { pattern: row.pattern, target: row.target, mode: "throws", message: transientMessage(canaries), ...(row.occurrence ? { occurrence: row.occurrence } : {}) });
      const setupLines = logs.lines().length;
      const answer = await scenario.act(faulty, run);
      const stepLogs = linesFrom(logs, setupLines);

      expect(faulty.fired).toBe(true);
      expect(faulty.attemptsAfterFault, "the fault point ran again").toBeGreaterThanOrEqual(1);
      expect(slept, "exactly one retry").toHaveLength(1);
      await SUCCEEDS[row.id]!(answer, { ...run, logs: stepLogs });
      // The retry is invisible to the client; the event carries its count, never the error.
      expect(answer.text).not.toContain("Network connection lost");
      if (COUNTED(row.id)) expect(retriesInEvent(stepLogs.events() as unknown as Structured[])).toBe(1);
      const stored = JSON.stringify(await snapshotDatabase(db()));
      for (const id of answer.text.match(ID_PATTERN) ?? []) expect(stored, `answer names ${id}, which is not stored`).toContain(id);
      expect(stepLogs.lines().join("\n")).not.toContain("D1_ERROR");
      await canaries.assertAbsentFrom(logs.lines());
    });

    it("a transient error on every attempt: the specified failure and nothing stored, within the bounds", async () => {
      const { faulty, actEvents } = await failingStep(row, "throws", transientMessage, Number.POSITIVE_INFINITY);
      expect(faulty.attemptsAfterFault).toBeGreaterThanOrEqual(retried ? D1_RETRY.maxAttempts - 1 : 0);
      expect(slept, "retries of the fault point").toHaveLength(retried ? D1_RETRY.maxAttempts - 1 : 0);
      expect(slept.reduce((sum, ms) => sum + ms, 0)).toBeLessThanOrEqual(D1_RETRY.budgetMs);
      if (COUNTED(row.id) && retried) expect(retriesInEvent(actEvents)).toBe(D1_RETRY.maxAttempts - 1);
    });
  });
});

/**
 * The answer lost after the write committed ("Network connection lost" once
 * the statement ran): the door's retry inserts nothing again — the row exists
 * exactly once — and the receipt names it (09 §5).
 */
describe("a transient error after a committed write (issue 20)", () => {
  const committed: Record<string, (answer: Answer, run: Run) => Promise<void>> = {
    "contact-insert": SUCCEEDS["contact-insert"]!,
    "dialogue-open-batch": SUCCEEDS["dialogue-open-batch"]!,
    "dialogue-follow-up-batch": SUCCEEDS["dialogue-follow-up-batch"]!,
    "signal-insert": SUCCEEDS["signal-insert"]!,
    "observation-insert": SUCCEEDS["observation-insert"]!,
    "observation-outbox-batch": SUCCEEDS["observation-outbox-batch"]!,
    "owner-draft-insert": SUCCEEDS["owner-draft-insert"]!,
    "owner-publish-insert": SUCCEEDS["owner-publish-insert"]!,
    "cron-discover": SUCCEEDS["cron-discover"]!,
  };
  it.each(Object.keys(committed))("%s: one row, a correct receipt", async (id) => {
    const row = FAULT_TABLE.find((candidate) => candidate.id === id)!;
    const scenario = SCENARIOS[id]!;
    const canaries = new Canaries();
    const logs = captureConsole();
    const run: Run = { canaries, logs, analytics: captureAnalytics(), state: {} };
    Object.assign(run.state, await scenario.setup(run));
    const faulty = faultPoint(db(), { pattern: row.pattern, target: row.target, mode: "commits", message: transientMessage(canaries) });
    const setupLines = logs.lines().length;
    const answer = await scenario.act(faulty, run);
    expect(faulty.fired).toBe(true);
    expect(slept).toHaveLength(1);
    await committed[id]!(answer, { ...run, logs: linesFrom(logs, setupLines) });
  });
});
