/**
 * `magnt outbox` (08 §12): the notifier's state and the outbox rows, read
 * only. The outbox stores references and delivery metadata, never message
 * text, so there is no text to show; the chat pin is shown as pinned or not,
 * never as its hash. One `wrangler d1 execute` runs the three queries, so the
 * command also works while `magnt dev` holds the same local state.
 */
import type { Command } from "commander";
import { MIGRATION_FOR_TABLE } from "../../worker/contracts";
import {
  NOTIFIER_STATE_SQL,
  OUTBOX_COUNTS_SQL,
  OUTBOX_ROW_COLUMNS,
  OUTBOX_STATES,
  outboxRowsStatement,
  type OutboxState,
} from "../../worker/storage/outbox/sql";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { isMissingTable, parseD1Json, type Row } from "../lib/d1";
import { EnvironmentError } from "../lib/errors";
import { parseChoiceOption, parseIntegerOption } from "../lib/options";
import { listDate } from "../lib/list-date";
import { shortIds } from "../lib/record-ids";
import type { LayoutColumn } from "../lib/table-layout";
import { inlineStatement, sqlInteger } from "../lib/sql";
import { DATABASE, resolveTarget, targetArgs } from "../lib/target";
import { runWrangler } from "../lib/wrangler";

export { OUTBOX_ROW_COLUMNS, OUTBOX_STATES, type OutboxState };
export const OUTBOX_LIMIT = { default: 50, min: 1, max: 1000 } as const;

/** A column of the rows table: the row field, its header, how it is shown. */
interface OutboxColumn extends LayoutColumn {
  readonly field: (typeof OUTBOX_ROW_COLUMNS)[number];
  readonly show?: "short-id" | "date";
}

/**
 * How the rows table shrinks on a narrow terminal: at 80 columns the id, state, source, attempts,
 * last error code and delivery time (issue 22); wider terminals add the rest.
 */
const ROW_LAYOUT: readonly OutboxColumn[] = [
  { field: "outbox_id", name: "id", shape: "id", priority: 1, show: "short-id" },
  { field: "state", name: "state", shape: "word", priority: 2 },
  { field: "source_id", name: "source", shape: "id", priority: 3, show: "short-id" },
  { field: "attempts", name: "tries", shape: "word", priority: 4 },
  { field: "last_error_code", name: "error", shape: "word", priority: 5 },
  { field: "delivered_at", name: "delivered", shape: "date", priority: 6, show: "date" },
  { field: "next_attempt_at", name: "next_attempt", shape: "date", priority: 7, show: "date" },
  { field: "created_at", name: "created", shape: "date", priority: 8, show: "date" },
  { field: "last_http_status", name: "http", shape: "word", priority: 9 },
  { field: "source_kind", name: "kind", shape: "word", priority: 10 },
  { field: "last_attempt_at", name: "last_attempt", shape: "date", priority: 11, show: "date" },
  { field: "telegram_message_id", name: "telegram_id", shape: "word", priority: 12 },
];

/** The three read-only queries (09 §4), the outbox module's text with an enum value and a range-checked integer inlined. */
export function outboxSql(status: OutboxState | undefined, limit: number): string {
  sqlInteger(limit, OUTBOX_LIMIT.min, OUTBOX_LIMIT.max); // throws outside the range, before any text is built
  return [NOTIFIER_STATE_SQL, OUTBOX_COUNTS_SQL, inlineStatement(outboxRowsStatement(status ?? null, limit))].join("; ") + ";";
}

export interface OutboxReport {
  state: {
    activated_at: string;
    chat_pinned: boolean;
    lease_expires_at: string | null;
    backoff_until: string | null;
    consecutive_failures: number;
  } | null;
  counts: Record<OutboxState, number>;
  rows: Row[];
}

/** Shapes the three result sets; `state` is null before the first enabled cron run. */
export function outboxReport(results: Row[][]): OutboxReport {
  const [stateRows = [], countRows = [], rows = []] = results;
  const stateRow = stateRows[0];
  const counts = Object.fromEntries(OUTBOX_STATES.map((state) => [state, 0])) as Record<OutboxState, number>;
  for (const row of countRows) {
    const state = OUTBOX_STATES.find((name) => name === row.state);
    if (state !== undefined) counts[state] = Number(row.n);
  }
  return {
    state:
      stateRow === undefined
        ? null
        : {
            activated_at: String(stateRow.activated_at),
            chat_pinned: stateRow.chat_pinned === 1 || stateRow.chat_pinned === true,
            lease_expires_at: nullableString(stateRow.lease_expires_at),
            backoff_until: nullableString(stateRow.backoff_until),
            consecutive_failures: Number(stateRow.consecutive_failures),
          },
    counts,
    rows: rows.map((row) => Object.fromEntries(OUTBOX_ROW_COLUMNS.map((column) => [column, row[column] ?? null]))),
  };
}

function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

interface OutboxOptions {
  status?: string;
  limit: string;
}

export function registerOutbox(program: Command, ctx: CliContext): void {
  program
    .command("outbox")
    .description("show the Telegram notifier's state, counts per state and outbox rows (never message text)")
    .option("--status <state>", `only rows in this state (${OUTBOX_STATES.join(", ")})`)
    .option("--limit <n>", `rows to show (${OUTBOX_LIMIT.min}–${OUTBOX_LIMIT.max})`, String(OUTBOX_LIMIT.default))
    .addHelpText(
      "after",
      examples(["magnt outbox", "magnt outbox --status failed --json", "magnt outbox --remote --config wrangler.jsonc --limit 10"]),
    )
    .action(defineAction<OutboxOptions>(ctx, runOutbox));
}

async function runOutbox(rt: CommandRuntime, _args: string[], options: OutboxOptions): Promise<void> {
  const { ctx, out, globals } = rt;
  const status = options.status === undefined ? undefined : parseChoiceOption("--status", options.status, OUTBOX_STATES);
  const limit = parseIntegerOption("--limit", options.limit, OUTBOX_LIMIT.min, OUTBOX_LIMIT.max);
  const target = resolveTarget(ctx, globals);
  let report: OutboxReport;
  try {
    const run = await runWrangler(ctx, ["d1", "execute", DATABASE, ...targetArgs(target), "--json", "--command", outboxSql(status, limit)], {
      mode: target.mode,
      quiet: out.quiet,
    });
    report = outboxReport(parseD1Json(run.stdout, run.code, run.stderr));
  } catch (error) {
    if (isMissingTable(error, "notification_state") || isMissingTable(error, "notification_outbox")) {
      throw new EnvironmentError(
        `the outbox tables do not exist: apply migration ${MIGRATION_FOR_TABLE.notification_outbox} (magnt migrate${target.mode === "remote" ? " --remote" : ""})`,
      );
    }
    throw error;
  }
  if (out.json) {
    out.jsonLine(report);
    return;
  }
  const state = report.state;
  if (state === null) out.line("notifier: not activated yet (no enabled cron run has pinned the activation time)");
  else {
    out.line(`activated at:         ${state.activated_at}`);
    out.line(`chat pinned:          ${state.chat_pinned ? "yes" : "no"}`);
    out.line(`lease expires:        ${state.lease_expires_at ?? "free"}`);
    out.line(`backoff until:        ${state.backoff_until ?? "none"}`);
    out.line(`consecutive failures: ${state.consecutive_failures}`);
  }
  out.table([...OUTBOX_STATES], [OUTBOX_STATES.map((name) => report.counts[name])]);
  const short = new Map(
    ROW_LAYOUT.filter(({ show }) => show === "short-id").map(({ field }) => [field, shortIds(report.rows.map((row) => String(row[field] ?? "")), 3)] as const),
  );
  const hidden = out.fittedTable(
    ROW_LAYOUT,
    report.rows.map((row, index) =>
      ROW_LAYOUT.map(({ field, show }) => {
        const value = row[field];
        if (value === null || value === undefined) return value;
        return show === "short-id" ? short.get(field)![index] : show === "date" ? listDate(value) : value;
      }),
    ),
  );
  out.info(`${report.rows.length} row(s)${status === undefined ? "" : ` in state ${status}`}, newest first`);
  if (hidden.length > 0) out.info(`not shown at ${out.width} columns: ${hidden.join(", ")} (--json prints every field)`);
}
