/**
 * The system-wide fault table (issue 14, 10 §2): every write step of the door,
 * the statement or batch that fails there, and what the specification says
 * must follow. Pure data, so test/worker/faults.test.ts drives one scenario
 * per row (in both fault modes), and the same rows are printed as Markdown in
 * docs/reliability.md — a test there checks that the document lists exactly
 * these rows, so the two cannot drift.
 *
 * Checked for every row and mode, besides the row's own answer and storage
 * afterwards: the fault fired; the database afterwards equals the database at
 * the moment of the fault (the failed statement wrote nothing and nothing ran
 * after it — the lease release of the cron run excepted); no row stored before
 * the step was lost (except expired rows the hourly cleanup deletes by design,
 * `mayDelete`), and tables the step does not write are unchanged; every
 * id in the answer names a stored row; the D1 error text (a canary) and the
 * visitor's text are in no log line and no Analytics Engine point.
 */
import type { FaultTarget } from "../fakes/fault-point";

export interface FaultRow {
  /** Stable key; the test's scenario for the row has the same key. */
  readonly id: string;
  /** The write path, as the specification names it. */
  readonly step: string;
  /** The statement or batch that fails (human form of `pattern`). */
  readonly faultPoint: string;
  readonly pattern: RegExp;
  readonly target: FaultTarget;
  /** Which matching statement fails (1-based; default the first). */
  readonly occurrence?: number;
  /** Tables the step itself may write before the fault (others must stay byte-identical). */
  readonly writes: readonly string[];
  /** Of those, tables whose expired rows the step deletes by design (the hourly cleanup, 05 §5.1): rows may disappear there. */
  readonly mayDelete?: readonly string[];
  /** The specified answer to the caller. */
  readonly answer: string;
  /** What storage holds afterwards, and how the next call recovers. */
  readonly afterwards: string;
}

const OUTBOX = ["notification_outbox", "notification_state"] as const;

export const FAULT_TABLE: readonly FaultRow[] = [
  // ---------------------------------------------------------------- propose_contact (02 §5.3, 07 §3)
  {
    id: "contact-lazy-table",
    step: "propose_contact",
    faultPoint: "lazy `CREATE TABLE IF NOT EXISTS contacts` (0001)",
    pattern: /^CREATE TABLE IF NOT EXISTS contacts/,
    target: "statement",
    writes: ["contacts"],
    answer: "`not_saved` / `storage_unavailable` (isError), no `contact_id`",
    afterwards: "no row; the identical retry is accepted (`duplicate: false`)",
  },
  {
    id: "contact-insert",
    step: "propose_contact",
    faultPoint: "`INSERT INTO contacts … ON CONFLICT(submission_id) DO NOTHING`",
    pattern: /^\s*INSERT INTO contacts/,
    target: "statement",
    writes: ["contacts"],
    answer: "`not_saved` / `storage_unavailable` (isError), no `contact_id`",
    afterwards: "no row; the identical retry is accepted (`duplicate: false`)",
  },
  {
    id: "contact-read-back",
    step: "propose_contact",
    faultPoint: "read-back `SELECT … FROM contacts WHERE submission_id = ?`",
    pattern: /^SELECT contact_id, created_at, payload_hash FROM contacts WHERE submission_id/,
    target: "statement",
    writes: ["contacts"],
    answer: "`not_saved` / `storage_unavailable` (isError): no receipt without a read-back",
    afterwards: "the complete row is stored once; the identical retry returns its receipt (`duplicate: true`)",
  },
  {
    id: "dialogue-open-batch",
    step: "propose_contact with `DIALOGUE_ENABLED` (new dialogue)",
    faultPoint: "batch: contact + dialogue + root membership",
    pattern: /INSERT INTO dialogues/,
    target: "batch",
    writes: ["contacts", "dialogues", "dialogue_contacts"],
    answer: "`not_saved` (isError), no token",
    afterwards: "no contact, no dialogue, no membership; the identical retry gets `token_issued`",
  },
  {
    id: "dialogue-open-read-back",
    step: "propose_contact with `DIALOGUE_ENABLED` (new dialogue)",
    faultPoint: "membership read-back `SELECT … FROM dialogue_contacts dc JOIN dialogues d …`",
    pattern: /FROM dialogue_contacts dc JOIN dialogues d/,
    target: "statement",
    writes: ["contacts", "dialogues", "dialogue_contacts"],
    answer: "`not_saved` (isError), no token",
    afterwards: "contact, dialogue and membership all stored (one batch); the identical retry (within 15 minutes) gets `token_issued` with the same token",
  },
  {
    id: "dialogue-follow-up-batch",
    step: "propose_contact with `DIALOGUE_ENABLED` (follow-up)",
    faultPoint: "batch: contact + follow-up membership",
    pattern: /INSERT INTO dialogue_contacts/,
    target: "batch",
    writes: ["contacts", "dialogue_contacts"],
    answer: "`not_saved` (isError)",
    afterwards: "no contact, no membership; the identical retry gets `joined`",
  },
  // ---------------------------------------------------------------- shared memory (03 §7–§8)
  {
    id: "signal-insert",
    step: "contribute_task_signal",
    faultPoint: "batch: `INSERT INTO task_signals … ON CONFLICT(submission_id) DO NOTHING` + its token list",
    pattern: /^\s*INSERT INTO task_signals /,
    target: "batch",
    writes: ["task_signals", "task_signal_tokens"],
    answer: "`storage_error` (isError), no `signal_id`",
    afterwards: "no row; the identical retry is `accepted`",
  },
  {
    id: "signal-read-back",
    step: "contribute_task_signal",
    faultPoint: "read-back `SELECT signal_id, payload_hash FROM task_signals …`",
    pattern: /^SELECT signal_id, payload_hash FROM task_signals/,
    target: "statement",
    writes: ["task_signals", "task_signal_tokens"],
    answer: "`storage_error` (isError), no `signal_id`",
    afterwards: "the complete row is stored once; the identical retry answers `duplicate` with its `signal_id`",
  },
  {
    id: "observation-insert",
    step: "search_shared_experience (observation)",
    faultPoint: "`INSERT INTO observed_task_signals` (goal notifications off)",
    pattern: /INSERT INTO observed_task_signals/,
    target: "statement",
    writes: ["observed_task_signals"],
    answer: "the search result stands; telemetry `observed_task_saved: false`",
    afterwards: "no observation",
  },
  {
    id: "observation-outbox-batch",
    step: "search_shared_experience (observation)",
    faultPoint: "batch: observation + goal outbox row (goal notifications on)",
    pattern: /INSERT INTO notification_outbox/,
    target: "batch",
    writes: ["observed_task_signals", "notification_outbox"],
    answer: "the search result stands; telemetry `observed_task_saved: false`",
    afterwards: "neither the observation nor an outbox row",
  },
  // ---------------------------------------------------------------- the cron run (05 §4–§5)
  {
    id: "cron-ensure-state",
    step: "cron run",
    faultPoint: "activation pin `INSERT INTO notification_state … ON CONFLICT DO NOTHING`",
    pattern: /^\s*INSERT INTO notification_state/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "outbox and state as before; the next run delivers",
  },
  {
    id: "cron-acquire-lease",
    step: "cron run",
    faultPoint: "lease `UPDATE notification_state SET lease_id = ? … RETURNING`",
    pattern: /SET lease_id = \?, lease_expires_at = \?/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "no lease held; the next run delivers",
  },
  {
    id: "cron-pin-chat",
    step: "cron run",
    faultPoint: "chat pin `UPDATE notification_state SET owner_chat_hash = ?`",
    pattern: /SET owner_chat_hash = \?/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "lease released; the next run pins and delivers",
  },
  {
    id: "cron-discover",
    step: "cron run",
    faultPoint: "discovery `INSERT INTO notification_outbox … SELECT … FROM contacts`",
    pattern: /^\s*INSERT INTO notification_outbox/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "no outbox row for the new contacts; the next run discovers them",
  },
  {
    id: "cron-recover-stale",
    step: "cron run",
    faultPoint: "`sending` → `retry_wait` (stale, `interrupted`)",
    pattern: /last_error_code = 'interrupted'/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "the stale row is still `sending`; the next run recovers it",
  },
  {
    id: "cron-cap-goals",
    step: "cron run",
    faultPoint: "`pending` → `skipped` / `overflow` (goal-queue cap)",
    pattern: /last_error_code = 'overflow'/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "every goal row still `pending`; the next run caps them",
  },
  {
    id: "cron-claim",
    step: "cron run",
    faultPoint: "claim `pending`/`retry_wait` → `sending`",
    pattern: /SET state = 'sending'/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; nothing sent",
    afterwards: "the row is still due with its attempts; the next run sends it",
  },
  {
    id: "cron-mark-skipped",
    step: "cron run",
    faultPoint: "`sending` → `skipped` (test source)",
    pattern: /SET state = 'skipped', last_error_code = \? WHERE/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; Telegram not called for it",
    afterwards: "the row stays `sending` until the stale recovery; then it is skipped, never sent",
  },
  {
    id: "cron-mark-delivered",
    step: "cron run",
    faultPoint: "`sending` → `delivered`",
    pattern: /SET state = 'delivered'/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; the run stops after that send",
    afterwards: "the row stays `sending`; after 120 s it is `interrupted` and retried (a possible duplicate, recognisable by its delivery reference, 05 §4)",
  },
  {
    id: "cron-mark-retry",
    step: "cron run",
    faultPoint: "`sending` → `retry_wait` (failed send)",
    pattern: /SET state = 'retry_wait', next_attempt_at = \?, last_error_code = \?, last_http_status/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; the run stops",
    afterwards: "the row stays `sending`; the stale recovery retries it",
  },
  {
    id: "cron-mark-failed",
    step: "cron run",
    faultPoint: "`sending` → `failed` (eighth attempt)",
    pattern: /SET state = 'failed', last_error_code = \?/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; the run stops",
    afterwards: "the row stays `sending`; the stale recovery marks it `failed`",
  },
  {
    id: "cron-record-delivery",
    step: "cron run",
    faultPoint: "state `consecutive_failures = 0` after a delivery",
    pattern: /SET consecutive_failures = 0/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; the run stops",
    afterwards: "the row is `delivered`; the failure streak is unchanged",
  },
  {
    id: "cron-record-failure",
    step: "cron run",
    faultPoint: "state `consecutive_failures + 1` / backoff after a failed send",
    pattern: /consecutive_failures = consecutive_failures \+ 1/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `storage_error`; the run stops",
    afterwards: "the row is `retry_wait`; the streak is unchanged",
  },
  {
    id: "cron-release-lease",
    step: "cron run",
    faultPoint: "lease release `UPDATE notification_state SET lease_id = NULL`",
    pattern: /SET lease_id = NULL/,
    target: "statement",
    writes: [...OUTBOX],
    answer: "event `ok` (the run's work is done)",
    afterwards: "the lease expires after 55 s: a run before that is `lease_busy`, a run after it proceeds",
  },
  {
    id: "cron-cleanup",
    step: "cron run, minute 0",
    faultPoint: "hourly cleanup, first batch `DELETE FROM owner_oauth_spent WHERE rowid IN (SELECT … expires_at < ? LIMIT 1000)`",
    pattern: /^DELETE FROM owner_oauth_spent/,
    target: "statement",
    writes: [...OUTBOX, "owner_oauth_spent", "dialogue_fetch_attempts"],
    answer: "event outcome unaffected (`ok`)",
    afterwards: "expired spent ids stay until the next hour's cleanup deletes them",
  },
  {
    id: "cron-cleanup-batch",
    step: "cron run, minute 0 (a backlog)",
    faultPoint: "hourly cleanup, second batch of `DELETE FROM owner_oauth_spent WHERE rowid IN (…)`",
    pattern: /^DELETE FROM owner_oauth_spent/,
    target: "statement",
    occurrence: 2,
    writes: [...OUTBOX, "owner_oauth_spent", "dialogue_fetch_attempts"],
    mayDelete: ["owner_oauth_spent", "dialogue_fetch_attempts"],
    answer: "event outcome unaffected (`ok`)",
    afterwards: "the first batch (1000 rows) stays deleted, no further batch runs; the next hour's cleanup deletes the rest",
  },
  // ---------------------------------------------------------------- dialogue, public side (07 §5)
  {
    id: "fetch-delivery-mark",
    step: "fetch_contact_reply",
    faultPoint: "delivery mark `UPDATE dialogue_replies SET fetched_at = ? … RETURNING`",
    pattern: /UPDATE dialogue_replies SET fetched_at/,
    target: "statement",
    writes: ["dialogue_replies"],
    answer: "`storage_error` (isError), no reply text",
    afterwards: "the reply is still unread; the next fetch delivers it (`redelivered: false`)",
  },
  {
    id: "fetch-after-mark",
    step: "fetch_contact_reply",
    faultPoint: "the read after the mark (`more_pending`)",
    pattern: /^SELECT EXISTS \(SELECT 1 FROM dialogue_replies/,
    target: "statement",
    writes: ["dialogue_replies"],
    answer: "`storage_error` (isError), no reply text",
    afterwards: "the reply is marked delivered; the next fetch lists it in `delivered_replies` and it is re-read by `reply_id` (07 §5.2 step 5)",
  },
  {
    id: "fetch-attempt-counter",
    step: "fetch_contact_reply (wrong token)",
    faultPoint: "wrong-attempt upsert `INSERT INTO dialogue_fetch_attempts … RETURNING`",
    pattern: /INSERT INTO dialogue_fetch_attempts/,
    target: "statement",
    writes: ["dialogue_fetch_attempts"],
    answer: "`storage_error` (isError)",
    afterwards: "the counter is unchanged; the next wrong attempt is counted",
  },
  // ---------------------------------------------------------------- owner tools (06 §6, 07 §4)
  {
    id: "owner-draft-insert",
    step: "owner_save_draft (new draft)",
    faultPoint: "`INSERT INTO owner_drafts … SELECT … WHERE EXISTS (contact)`",
    pattern: /INSERT INTO owner_drafts/,
    target: "statement",
    writes: ["owner_drafts"],
    answer: "`storage_error` (isError), no `draft_id`",
    afterwards: "no draft; a retry saves revision 1",
  },
  {
    id: "owner-draft-read-back",
    step: "owner_save_draft (new draft)",
    faultPoint: "read-back `SELECT … FROM owner_drafts WHERE draft_id = ?`",
    pattern: /^SELECT draft_id, contact_id, revision, created_at, updated_at, body FROM owner_drafts/,
    target: "statement",
    writes: ["owner_drafts"],
    answer: "`storage_error` (isError), no `draft_id`",
    afterwards: "the complete draft (revision 1) is stored and listed under its contact",
  },
  {
    id: "owner-draft-update",
    step: "owner_save_draft (update)",
    faultPoint: "`UPDATE owner_drafts SET body = ?, revision = revision + 1 … WHERE revision = ?`",
    pattern: /UPDATE owner_drafts SET body/,
    target: "statement",
    writes: ["owner_drafts"],
    answer: "`storage_error` (isError)",
    afterwards: "the draft keeps its text and revision; the retry at the same revision saves",
  },
  {
    id: "owner-state-upsert",
    step: "owner_set_contact_state",
    faultPoint: "`INSERT INTO contact_owner_state … ON CONFLICT DO UPDATE`",
    pattern: /INSERT INTO contact_owner_state/,
    target: "statement",
    writes: ["contact_owner_state"],
    answer: "`storage_error` (isError)",
    afterwards: "the previous state stays; `contacts` untouched; the retry sets it",
  },
  {
    id: "owner-publish-insert",
    step: "owner_publish_reply",
    faultPoint: "`INSERT INTO dialogue_replies … SELECT … FROM owner_drafts …`",
    pattern: /INSERT INTO dialogue_replies/,
    target: "statement",
    writes: ["dialogue_replies"],
    answer: "`storage_error` (isError), no `reply_id`",
    afterwards: "nothing published; the retry answers `reply_published`",
  },
  {
    id: "owner-publish-read-back",
    step: "owner_publish_reply",
    faultPoint: "read-back `SELECT … FROM dialogue_replies WHERE draft_id = ?` (after the insert)",
    pattern: /FROM dialogue_replies WHERE draft_id = \?/,
    target: "statement",
    occurrence: 2,
    writes: ["dialogue_replies"],
    answer: "`storage_error` (isError), no `reply_id`",
    afterwards: "the reply is stored once, complete; the retry answers `already_published` with it",
  },
  {
    id: "owner-revoke",
    step: "owner_revoke_dialogue",
    faultPoint: "`UPDATE dialogues SET revoked_at = ? … WHERE revoked_at IS NULL`",
    pattern: /UPDATE dialogues SET revoked_at/,
    target: "statement",
    writes: ["dialogues"],
    answer: "`storage_error` (isError)",
    afterwards: "the dialogue stays open (its token still fetches); the retry revokes it",
  },
  // ---------------------------------------------------------------- owner OAuth (06 §3.5, §5)
  {
    id: "oauth-code-spend",
    step: "POST /oauth/token (authorization code)",
    faultPoint: "core's `spendOnce(code jti)`: `INSERT INTO owner_oauth_spent … ON CONFLICT DO NOTHING`",
    pattern: /INSERT INTO owner_oauth_spent/,
    target: "statement",
    writes: ["owner_oauth_spent"],
    answer: "503 `temporarily_unavailable`, no token",
    afterwards: "the code is not spent; redeeming it again issues tokens",
  },
  {
    id: "oauth-refresh-spend",
    step: "POST /oauth/token (refresh)",
    faultPoint: "core's `spendOnce(refresh jti)`",
    pattern: /INSERT INTO owner_oauth_spent/,
    target: "statement",
    writes: ["owner_oauth_spent"],
    answer: "503 `temporarily_unavailable`, no token",
    afterwards: "the refresh token is not spent; the retry rotates it",
  },
  {
    id: "oauth-family-revocation",
    step: "POST /oauth/token (refresh-token reuse)",
    faultPoint: "core's `spendOnce(\"family:…\")` after a reuse",
    pattern: /INSERT INTO owner_oauth_spent/,
    target: "statement",
    occurrence: 2,
    writes: ["owner_oauth_spent"],
    answer: "503 `temporarily_unavailable`, no token",
    afterwards: "the family is not yet revoked; the next reuse revokes it (`invalid_grant`)",
  },
];

/** The fault modes a row runs in: a statement resolving `success: false` or throwing; the same for a batch. */
export function modesOf(row: FaultRow): readonly string[] {
  return row.target === "batch" ? ["batch fails", "batch throws"] : ["statement fails", "statement throws"];
}

const MARK_START = "<!-- fault-table:start (generated from test/worker/fault-table.ts; test/worker/faults.test.ts checks it) -->";
const MARK_END = "<!-- fault-table:end -->";

/** The table as docs/reliability.md prints it, between its two markers. */
export function faultTableMarkdown(): string {
  const escape = (text: string) => text.replaceAll("|", "\\|");
  const lines = [
    MARK_START,
    "| # | Write step | Fault point | Modes | Specified answer | Storage afterwards |",
    "|---|---|---|---|---|---|",
    ...FAULT_TABLE.map((row, index) =>
      `| ${index + 1} | ${escape(row.step)} | ${escape(row.faultPoint)} | ${modesOf(row).join(", ")} | ${escape(row.answer)} | ${escape(row.afterwards)} |`,
    ),
    MARK_END,
  ];
  return lines.join("\n");
}

/** The generated block as it currently stands in a document (null when the markers are missing). */
export function faultTableBlockOf(document: string): string | null {
  const start = document.indexOf(MARK_START);
  const end = document.indexOf(MARK_END);
  return start === -1 || end === -1 || end < start ? null : document.slice(start, end + MARK_END.length);
}
