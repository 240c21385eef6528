/**
 * `magnt outbox` (08 §12): the notifier's state and the outbox rows, read
 * only. The outbox stores references and delivery metadata, never message
 * text, so there is no text to show; the chat pin is shown as pinned or not,
 * never as its hash. One `wrangler d1 execute` runs the three queries, so the
 * command also works while `magnt dev` holds the same local state.
 */
import type { Command } from "commander";
import { MIGRATION_FOR_TABLE } from "../../worker/contracts";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { isMissingTable, parseD1Json, type Row } from "../lib/d1";
import { EnvironmentError } from "../lib/errors";
import { parseChoiceOption, parseIntegerOption } from "../lib/options";
import type { LayoutColumn } from "../lib/table-layout";
import { sqlInteger, sqlLiteral } from "../lib/sql";
import { DATABASE, resolveTarget, targetArgs } from "../lib/target";
import { runWrangler } from "../lib/wrangler";

export const OUTBOX_STATES = ["pending", "sending", "retry_wait", "delivered", "failed", "skipped"] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];
export const OUTBOX_LIMIT = { default: 50, min: 1, max: 1000 } as const;

export const OUTBOX_ROW_COLUMNS = [
  "outbox_id",
  "source_kind",
  "source_id",
  "state",
  "attempts",
  "next_attempt_at",
  "last_attempt_at",
  "last_error_code",
  "last_http_status",
  "delivered_at",
  "telegram_message_id",
  "created_at",
] as const;

/** How the rows table shrinks on a narrow terminal: ids and state first, timestamps of past attempts last. */
const ROW_LAYOUT: readonly LayoutColumn[] = [
  { name: "outbox_id", shape: "id", priority: 1 },
  { name: "source_kind", shape: "word", priority: 3 },
  { name: "source_id", shape: "id", priority: 4 },
  { name: "state", shape: "word", priority: 2 },
  { name: "attempts", shape: "word", priority: 3 },
  { name: "next_attempt_at", shape: "date", priority: 5 },
  { name: "last_attempt_at", shape: "date", priority: 8 },
  { name: "last_error_code", shape: "word", priority: 4 },
  { name: "last_http_status", shape: "word", priority: 6 },
  { name: "delivered_at", shape: "date", priority: 6 },
  { name: "telegram_message_id", shape: "word", priority: 7 },
  { name: "created_at", shape: "date", priority: 5 },
];

/** The three read-only queries (09 §4), with only an enum value and a range-checked integer spliced in. */
export function outboxSql(status: OutboxState | undefined, limit: number): string {
  const where = status === undefined ? "" : ` WHERE state = ${sqlLiteral(status)}`;
  return [
    "SELECT activated_at, owner_chat_hash IS NOT NULL AS chat_pinned, lease_expires_at, backoff_until, consecutive_failures FROM notification_state WHERE id = 1",
    "SELECT state, COUNT(*) AS n FROM notification_outbox GROUP BY state",
    `SELECT ${OUTBOX_ROW_COLUMNS.join(", ")} FROM notification_outbox${where} ORDER BY created_at DESC, outbox_id DESC LIMIT ${sqlInteger(limit, OUTBOX_LIMIT.min, OUTBOX_LIMIT.max)}`,
  ].join("; ") + ";";
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
  const hidden = out.fittedTable(ROW_LAYOUT, report.rows.map((row) => OUTBOX_ROW_COLUMNS.map((column) => row[column])));
  out.info(`${report.rows.length} row(s)${status === undefined ? "" : ` in state ${status}`}, newest first`);
  if (hidden.length > 0) out.info(`not shown at ${out.width} columns: ${hidden.join(", ")} (--json prints every field)`);
}
