/**
 * `magnt review contacts|signals|observed|drafts` (08 §10): the owner's own
 * terminal view of private rows, with the review SQL of 09 §4. Read-only.
 */
import type { Command } from "commander";
import { MIGRATION_FOR_TABLE } from "../../worker/contracts";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { d1Query, isMissingTable, type Row } from "../lib/d1";
import { EnvironmentError } from "../lib/errors";
import { parseChoiceOption, parseIntegerOption } from "../lib/options";
import { sqlInteger } from "../lib/sql";
import { resolveTarget } from "../lib/target";

export const REVIEW_KINDS = ["contacts", "signals", "observed", "drafts"] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];
export const REVIEW_LIMIT = { default: 50, min: 1, max: 1000 } as const;

/**
 * The review queries of 09 §4, split only where `--include-tests` changes
 * them: the test filter is dropped (for drafts, the join condition on tests),
 * and the CLI appends `LIMIT n`.
 */
interface ReviewQuery {
  select: string;
  testFilter: string;
  orderBy: string;
  /** The table whose absence means a migration is missing, and that migration. */
  table: string;
  migration: string;
}

export const REVIEW_QUERIES: Record<ReviewKind, ReviewQuery> = {
  contacts: {
    select:
      "SELECT contact_id, created_at, review_status, intent, summary, what_you_need_from_human, agent_identity, operator, reply_to, found_via, previous_contact_id FROM contacts",
    testFilter: "self_reported_test = 0",
    orderBy: "created_at DESC",
    table: "contacts",
    migration: MIGRATION_FOR_TABLE.contacts,
  },
  signals: {
    select: "SELECT signal_id, created_at, goal, blocker, tried, learned, status FROM task_signals",
    testFilter: "self_reported_test = 0",
    orderBy: "created_at DESC, signal_id DESC",
    table: "task_signals",
    migration: MIGRATION_FOR_TABLE.task_signals,
  },
  observed: {
    select: "SELECT observation_id, created_at, goal, blocker, tried FROM observed_task_signals",
    testFilter: "self_reported_test = 0",
    orderBy: "created_at DESC, observation_id DESC",
    table: "observed_task_signals",
    migration: MIGRATION_FOR_TABLE.observed_task_signals,
  },
  drafts: {
    select:
      "SELECT d.draft_id, d.contact_id, d.revision, d.created_at, d.updated_at, d.body FROM owner_drafts d JOIN contacts c ON c.contact_id = d.contact_id",
    testFilter: "c.self_reported_test = 0",
    orderBy: "d.updated_at DESC, d.draft_id DESC",
    table: "owner_drafts",
    migration: MIGRATION_FOR_TABLE.owner_drafts,
  },
};

/** The SQL text for a kind: only constant fragments and a range-checked integer. */
export function reviewSql(kind: ReviewKind, includeTests: boolean, limit: number): string {
  const query = REVIEW_QUERIES[kind];
  const where = includeTests ? "" : ` WHERE ${query.testFilter}`;
  return `${query.select}${where} ORDER BY ${query.orderBy} LIMIT ${sqlInteger(limit, REVIEW_LIMIT.min, REVIEW_LIMIT.max)};`;
}

interface ReviewOptions {
  includeTests?: boolean;
  limit: string;
}

export function registerReview(program: Command, ctx: CliContext): void {
  program
    .command("review")
    .description("show private rows: contacts, signals, observed goals or drafts (newest first)")
    .argument("<kind>", REVIEW_KINDS.join("|"))
    .option("--include-tests", "include self-reported test rows", false)
    .option("--limit <n>", `rows to show (${REVIEW_LIMIT.min}–${REVIEW_LIMIT.max})`, String(REVIEW_LIMIT.default))
    .addHelpText(
      "after",
      examples([
        "magnt review contacts",
        "magnt review signals --include-tests --limit 10",
        "magnt review observed --remote --config wrangler.jsonc --json",
      ]),
    )
    .action(defineAction<ReviewOptions>(ctx, runReview));
}

async function runReview(rt: CommandRuntime, args: string[], options: ReviewOptions): Promise<void> {
  const { ctx, out, globals } = rt;
  const kind = parseChoiceOption("kind", args[0], REVIEW_KINDS);
  const limit = parseIntegerOption("--limit", options.limit, REVIEW_LIMIT.min, REVIEW_LIMIT.max);
  const target = resolveTarget(ctx, globals);
  const query = REVIEW_QUERIES[kind];
  let rows: Row[];
  try {
    rows = await d1Query(ctx, target, reviewSql(kind, options.includeTests === true, limit), out.quiet);
  } catch (error) {
    if (isMissingTable(error, query.table)) {
      throw new EnvironmentError(
        `table ${query.table} does not exist: apply migration ${query.migration} (magnt migrate${target.mode === "remote" ? " --remote" : ""})`,
      );
    }
    throw error;
  }
  if (out.json) {
    out.jsonLine(rows);
    return;
  }
  const columns = columnsOf(query.select);
  out.table(columns, rows.map((row) => columns.map((column) => row[column])));
  out.info(`${rows.length} row(s)${options.includeTests === true ? ", tests included" : ""}`);
}

/** Column names of the SELECT list (without table aliases), in order, for the table header. */
function columnsOf(select: string): string[] {
  const list = select.replace(/^SELECT\s+/i, "").replace(/\s+FROM\s[\s\S]*$/i, "");
  return list.split(",").map((column) => column.trim().replace(/^\w+\./, ""));
}
