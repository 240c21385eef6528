/**
 * `magnt review contacts|signals|observed|drafts [id]` (08 §10): the owner's
 * own terminal view of private rows, with the review SQL of 09 §4. Read-only.
 *
 * Threat model: every text column here was written by a visitor (or by an
 * agent on a visitor's behalf). The human views print it only through
 * `Output.fittedTable` / `Output.record`, which strip escape sequences,
 * control characters and bidirectional controls (cli/lib/terminal-text.ts),
 * so a stored contact cannot recolour, rewrite or reorder the owner's
 * terminal. `--json` prints raw values: JSON escapes every control character.
 * The only value the owner types that reaches SQL is the record id, and it is
 * validated against its id regex before anything runs (08 §4).
 *
 * A contact record also shows its dialogue state (C.1, 07): role, revocation,
 * message and reply counts, the owner's first full read — selected column by
 * column, so a dialogue id, token or token hash can never be printed.
 */
import type { Command } from "commander";
import { CONTACT_ID_PATTERN, DRAFT_ID_PATTERN, MIGRATION_FOR_TABLE, OBSERVATION_ID_PATTERN, SIGNAL_ID_PATTERN } from "../../worker/contracts";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { d1Query, isMissingTable, type Row } from "../lib/d1";
import { CheckFailed, EnvironmentError, UsageError } from "../lib/errors";
import { parseChoiceOption, parseIntegerOption } from "../lib/options";
import { sqlInteger, sqlLiteral } from "../lib/sql";
import type { LayoutColumn } from "../lib/table-layout";
import { resolveTarget, type D1Target } from "../lib/target";

export const REVIEW_KINDS = ["contacts", "signals", "observed", "drafts"] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];
export const REVIEW_LIMIT = { default: 50, min: 1, max: 1000 } as const;

/**
 * One review source of 09 §4, declared once: the SELECT list and the table
 * layout both come from `columns` (in SELECT order), so the SQL text and the
 * human table can never disagree about which columns exist.
 */
export interface ReviewSource {
  /** The FROM clause (a constant). */
  from: string;
  /** Prefix of every selected column in SQL (`d.` for the drafts join), empty otherwise. */
  qualifier: string;
  /** Selected columns in SELECT order; `priority` decides which stay visible in a narrow terminal. */
  columns: readonly LayoutColumn[];
  /** The primary-key column a single record is looked up by, its regex and what to call it. */
  id: { column: string; pattern: RegExp; noun: string; example: string };
  /** The test flag as SQL (`--include-tests` drops `<flag> = 0`; the record view shows it). */
  testFlag: string;
  orderBy: string;
  /** The table whose absence means a migration is missing, and that migration. */
  table: string;
  migration: string;
}

const id = (name: string): LayoutColumn => ({ name, shape: "id", priority: 1 });
const col = (name: string, shape: LayoutColumn["shape"], priority: number): LayoutColumn => ({ name, shape, priority });

export const REVIEW_SOURCES: Record<ReviewKind, ReviewSource> = {
  contacts: {
    from: "contacts",
    qualifier: "",
    columns: [
      id("contact_id"),
      col("created_at", "date", 3),
      col("review_status", "word", 4),
      col("intent", "text", 5),
      col("summary", "text", 2),
      col("what_you_need_from_human", "text", 7),
      col("agent_identity", "text", 6),
      col("operator", "text", 8),
      col("reply_to", "text", 9),
      col("found_via", "text", 10),
      col("previous_contact_id", "id", 11),
    ],
    id: { column: "contact_id", pattern: CONTACT_ID_PATTERN, noun: "contact", example: "mc_<uuid>" },
    testFlag: "self_reported_test",
    orderBy: "created_at DESC",
    table: "contacts",
    migration: MIGRATION_FOR_TABLE.contacts,
  },
  signals: {
    from: "task_signals",
    qualifier: "",
    columns: [
      id("signal_id"),
      col("created_at", "date", 3),
      col("goal", "text", 2),
      col("blocker", "text", 6),
      col("tried", "text", 7),
      col("learned", "text", 5),
      col("status", "word", 4),
    ],
    id: { column: "signal_id", pattern: SIGNAL_ID_PATTERN, noun: "signal", example: "ts_<uuid>" },
    testFlag: "self_reported_test",
    orderBy: "created_at DESC, signal_id DESC",
    table: "task_signals",
    migration: MIGRATION_FOR_TABLE.task_signals,
  },
  observed: {
    from: "observed_task_signals",
    qualifier: "",
    columns: [id("observation_id"), col("created_at", "date", 3), col("goal", "text", 2), col("blocker", "text", 4), col("tried", "text", 5)],
    id: { column: "observation_id", pattern: OBSERVATION_ID_PATTERN, noun: "observation", example: "ob_<32 hex>" },
    testFlag: "self_reported_test",
    orderBy: "created_at DESC, observation_id DESC",
    table: "observed_task_signals",
    migration: MIGRATION_FOR_TABLE.observed_task_signals,
  },
  drafts: {
    from: "owner_drafts d JOIN contacts c ON c.contact_id = d.contact_id",
    qualifier: "d.",
    columns: [
      id("draft_id"),
      col("contact_id", "id", 4),
      col("revision", "word", 5),
      col("created_at", "date", 6),
      col("updated_at", "date", 3),
      col("body", "text", 2),
    ],
    id: { column: "draft_id", pattern: DRAFT_ID_PATTERN, noun: "draft", example: "dr_<uuid>" },
    testFlag: "c.self_reported_test",
    orderBy: "d.updated_at DESC, d.draft_id DESC",
    table: "owner_drafts",
    migration: MIGRATION_FOR_TABLE.owner_drafts,
  },
};

/** The record view's extra field: whether the row is a self-reported test (the lookup by id ignores the test filter). */
export const TEST_FLAG_FIELD = "self_reported_test";

function selectList(source: ReviewSource): string {
  return source.columns.map((column) => `${source.qualifier}${column.name}`).join(", ");
}

/** The list SQL for a kind: only constant fragments and a range-checked integer. */
export function reviewSql(kind: ReviewKind, includeTests: boolean, limit: number): string {
  const source = REVIEW_SOURCES[kind];
  const where = includeTests ? "" : ` WHERE ${source.testFlag} = 0`;
  return `SELECT ${selectList(source)} FROM ${source.from}${where} ORDER BY ${source.orderBy} LIMIT ${sqlInteger(limit, REVIEW_LIMIT.min, REVIEW_LIMIT.max)};`;
}

/**
 * The single-record SQL: the same columns plus the test flag, by primary key,
 * test rows included (the owner asked for this exact id). The id is validated
 * again here, so no caller can put an unchecked value into the text.
 */
export function reviewRecordSql(kind: ReviewKind, recordId: string): string {
  const source = REVIEW_SOURCES[kind];
  const checked = normaliseReviewId(kind, recordId);
  return `SELECT ${selectList(source)}, ${source.testFlag} FROM ${source.from} WHERE ${source.qualifier}${source.id.column} = ${sqlLiteral(checked)};`;
}

/** Trims and lower-cases an id and checks it against its kind's regex; anything else is a usage error (nothing has run yet). */
export function normaliseReviewId(kind: ReviewKind, raw: string): string {
  const { id: spec } = REVIEW_SOURCES[kind];
  const value = raw.trim().toLowerCase();
  if (!spec.pattern.test(value)) {
    throw new UsageError(`not a ${spec.noun} id (review ${kind} expects ${spec.example}): ${JSON.stringify(raw.slice(0, 80))}`);
  }
  return value;
}

interface ReviewOptions {
  includeTests?: boolean;
  limit: string;
}

export function registerReview(program: Command, ctx: CliContext): void {
  program
    .command("review")
    .description("show private rows: contacts, signals, observed goals or drafts (newest first), or one record in full")
    .argument("<kind>", REVIEW_KINDS.join("|"))
    .argument("[id]", "show this one record in full: mc_… (contacts), ts_… (signals), ob_… (observed) or dr_… (drafts)")
    .option("--include-tests", "include self-reported test rows (the list only; a record by id is always found)", false)
    .option("--limit <n>", `rows to show (${REVIEW_LIMIT.min}–${REVIEW_LIMIT.max})`, String(REVIEW_LIMIT.default))
    .addHelpText(
      "after",
      `
The table fits the terminal (its width on a TTY, else $COLUMNS, else 80 columns): one line per
row, ids and dates whole, long text cut with …, line breaks shown as ⏎; columns that do not fit
are left out and named on stderr. With an id, every field is printed on its own line, long
values wrapped. Escape sequences, control characters and bidirectional controls in stored text
are removed before printing. --json prints raw values (an array, or one object for an id).
A contact record also shows its dialogue state (role, revoked, messages, replies published and
fetched, the owner's first read); never a token. An unknown id exits 1; a malformed id exits 2
before anything runs.
` +
        examples([
          "magnt review contacts",
          "magnt review contacts mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
          "magnt review signals --include-tests --limit 10",
          "magnt review observed --remote --config wrangler.jsonc --json",
        ]),
    )
    .action(defineAction<ReviewOptions>(ctx, runReview));
}

async function runReview(rt: CommandRuntime, args: string[], options: ReviewOptions): Promise<void> {
  const { ctx, globals } = rt;
  const kind = parseChoiceOption("kind", args[0], REVIEW_KINDS);
  const limit = parseIntegerOption("--limit", options.limit, REVIEW_LIMIT.min, REVIEW_LIMIT.max);
  const recordId = args[1] === undefined || args[1] === "" ? undefined : normaliseReviewId(kind, args[1]);
  const target = resolveTarget(ctx, globals);
  if (recordId === undefined) await showList(rt, target, kind, options.includeTests === true, limit);
  else await showRecord(rt, target, kind, recordId);
}

async function showList(rt: CommandRuntime, target: D1Target, kind: ReviewKind, includeTests: boolean, limit: number): Promise<void> {
  const { out } = rt;
  const source = REVIEW_SOURCES[kind];
  const rows = await query(rt, target, kind, reviewSql(kind, includeTests, limit));
  if (out.json) {
    out.jsonLine(rows);
    return;
  }
  const hidden = out.fittedTable(
    source.columns,
    rows.map((row) => source.columns.map((column) => row[column.name])),
  );
  out.info(`${rows.length} row(s)${includeTests ? ", tests included" : ""}`);
  if (hidden.length > 0) {
    out.info(
      `not shown at ${out.width} columns: ${hidden.join(", ")} (magnt review ${kind} <${source.id.column}> prints one record in full; --json prints every value)`,
    );
  }
}

async function showRecord(rt: CommandRuntime, target: D1Target, kind: ReviewKind, recordId: string): Promise<void> {
  const { out } = rt;
  const source = REVIEW_SOURCES[kind];
  const row = (await query(rt, target, kind, reviewRecordSql(kind, recordId)))[0];
  if (row === undefined) throw new CheckFailed(`no ${source.id.noun} ${recordId}`);
  const dialogue = kind === "contacts" ? await dialogueStateOf(rt, target, recordId) : undefined;
  if (out.json) {
    // `dialogue` is added only when 0007 is applied: null for a contact without a dialogue.
    out.jsonLine(dialogue === undefined || dialogue === MIGRATION_MISSING ? row : { ...row, dialogue });
    return;
  }
  out.record([
    ...source.columns.map((column) => [column.name, row[column.name]] as const),
    [TEST_FLAG_FIELD, row[TEST_FLAG_FIELD]] as const,
    ...(dialogue === undefined ? [] : dialogueFields(dialogue)),
  ]);
}

/**
 * The dialogue state of one contact (07): its role, the dialogue's root and
 * revocation, how many messages the dialogue has, the replies answering this
 * contact and how many the visitor fetched, and the owner's first full read.
 * Never the dialogue id, a token or a token hash (07 §2): none is selected.
 */
export function dialogueStateSql(contactId: string): string {
  const checked = sqlLiteral(normaliseReviewId("contacts", contactId));
  return (
    "SELECT dc.role, d.root_contact_id, d.created_at AS dialogue_created_at, d.revoked_at, " +
    "(SELECT COUNT(*) FROM dialogue_contacts m WHERE m.dialogue_id = dc.dialogue_id) AS messages, " +
    "(SELECT COUNT(*) FROM dialogue_replies r WHERE r.contact_id = dc.contact_id) AS replies_published, " +
    "(SELECT COUNT(*) FROM dialogue_replies r WHERE r.contact_id = dc.contact_id AND r.fetched_at IS NOT NULL) AS replies_fetched, " +
    "(SELECT o.read_at FROM dialogue_owner_reads o WHERE o.contact_id = dc.contact_id) AS owner_read_at " +
    `FROM dialogue_contacts dc JOIN dialogues d ON d.dialogue_id = dc.dialogue_id WHERE dc.contact_id = ${checked};`
  );
}

/** The columns `dialogueStateSql` selects, in order; nothing else of a dialogue row is ever shown. */
export const DIALOGUE_STATE_COLUMNS = [
  "role",
  "root_contact_id",
  "dialogue_created_at",
  "revoked_at",
  "messages",
  "replies_published",
  "replies_fetched",
  "owner_read_at",
] as const;

const MIGRATION_MISSING = Symbol("0007 not applied");
const DIALOGUE_TABLES = ["dialogues", "dialogue_contacts", "dialogue_replies", "dialogue_owner_reads"] as const;

type DialogueState = Row | null | typeof MIGRATION_MISSING;

/** The contact's dialogue state, null without one, or MIGRATION_MISSING before 0007 is applied. */
async function dialogueStateOf(rt: CommandRuntime, target: D1Target, contactId: string): Promise<DialogueState> {
  let rows: Row[];
  try {
    rows = await d1Query(rt.ctx, target, dialogueStateSql(contactId), rt.out.quiet);
  } catch (error) {
    if (DIALOGUE_TABLES.some((table) => isMissingTable(error, table))) return MIGRATION_MISSING;
    throw error;
  }
  const row = rows[0];
  if (row === undefined) return null;
  return Object.fromEntries(DIALOGUE_STATE_COLUMNS.map((column) => [column, row[column] ?? null]));
}

function dialogueFields(state: DialogueState): (readonly [string, unknown])[] {
  if (state === MIGRATION_MISSING) return [["dialogue", `unknown (migration ${MIGRATION_FOR_TABLE.dialogues} not applied)`]];
  if (state === null) return [["dialogue", "none"]];
  return [
    ["dialogue", `${String(state.role)}${state.revoked_at === null ? "" : ", revoked"}`],
    ...DIALOGUE_STATE_COLUMNS.filter((column) => column !== "role").map((column) => [`dialogue_${column.replace(/^dialogue_/, "")}`, state[column]] as const),
  ];
}

/** Runs a review query; a missing table exits 3 naming the migration to apply. */
async function query(rt: CommandRuntime, target: D1Target, kind: ReviewKind, sql: string): Promise<Row[]> {
  const source = REVIEW_SOURCES[kind];
  try {
    return await d1Query(rt.ctx, target, sql, rt.out.quiet);
  } catch (error) {
    if (isMissingTable(error, source.table)) {
      throw new EnvironmentError(
        `table ${source.table} does not exist: apply migration ${source.migration} (magnt migrate${target.mode === "remote" ? " --remote" : ""})`,
      );
    }
    throw error;
  }
}
