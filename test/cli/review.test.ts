/**
 * `magnt review` (08 §10): the exact SQL of 09 §4 (tests excluded unless
 * `--include-tests`, `LIMIT n`), limit bounds, missing tables, the table view
 * fitted to the terminal width, the single-record view, the full-value JSON
 * views, and that no escape sequence, control or bidirectional character
 * stored by a visitor ever reaches the owner's terminal.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DIALOGUE_STATE_COLUMNS, dialogueStateSql, REVIEW_SOURCES, reviewRecordSql, reviewSql, type ReviewKind } from "../../cli/commands/review";
import { ownerContactPageStatement } from "../../worker/storage/contacts/sql";
import type { CliContext } from "../../cli/lib/context";
import { displayWidth } from "../../cli/lib/terminal-text";
import { runCli } from "../../cli/program";
import { d1Error, d1Rows, installFakeWrangler, REPO_ROOT, runMagnt, sqlOf, tempProject } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

/** The queries of 09 §4, whitespace-normalised, without the trailing semicolon. */
const SPEC_SQL = {
  signals: `SELECT signal_id, created_at, goal, blocker, tried, learned, status
FROM task_signals WHERE self_reported_test = 0 ORDER BY created_at DESC, signal_id DESC`,
  observed: `SELECT observation_id, created_at, goal, blocker, tried
FROM observed_task_signals WHERE self_reported_test = 0
ORDER BY created_at DESC, observation_id DESC`,
  drafts: `SELECT d.draft_id, d.contact_id, d.revision, d.created_at, d.updated_at, d.body
FROM owner_drafts d JOIN contacts c ON c.contact_id = d.contact_id
WHERE c.self_reported_test = 0 ORDER BY d.updated_at DESC, d.draft_id DESC`,
} as const;
const CONTACT_PAGE_WITH_TESTS = ownerContactPageStatement({ includeTests: true, state: "any", since: null, after: null, limit: 1 }).sql;
const normalise = (sql: string): string => sql.replace(/\s+/g, " ").trim();

/** The owner MCP's contact page query (owner_list_contacts) with the CLI's values written in by hand: state, no since, no cursor, limit. */
const contactsSql = (includeTests: boolean, state: string, limit: number): string =>
  ownerContactPageStatement({ includeTests, state: "any", since: null, after: null, limit })
    .sql.replace(/\?1/g, `'${state}'`)
    .replace(/\?[234]/g, "NULL")
    .replace("?5", String(limit));

describe("review SQL", () => {
  it.each(Object.entries(SPEC_SQL))("%s is the 09 §4 query plus LIMIT", (kind, sql) => {
    expect(normalise(reviewSql(kind as keyof typeof SPEC_SQL, false, 50))).toBe(`${normalise(sql)} LIMIT 50`);
  });

  it.each(Object.entries(SPEC_SQL))("%s with --include-tests drops only the test condition", (kind, sql) => {
    const withoutFilter = normalise(sql).replace(/ WHERE c?\.?self_reported_test = 0/, "");
    expect(normalise(reviewSql(kind as keyof typeof SPEC_SQL, true, 3))).toBe(`${withoutFilter} LIMIT 3`);
  });

  it("contacts is owner_list_contacts' own query (the owner's state joined), not a second copy", () => {
    expect(reviewSql("contacts", false, 50)).toBe(contactsSql(false, "any", 50));
    expect(reviewSql("contacts", true, 3, "archived")).toBe(contactsSql(true, "archived", 3));
    expect(reviewSql("contacts", false, 50)).toContain("LEFT JOIN contact_owner_state s ON s.contact_id = c.contact_id");
  });
});

describe("magnt review", () => {
  it("defaults: local, tests excluded, LIMIT 50", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "contacts"]);
    expect(run.code).toBe(0);
    expect(sqlOf(calls[0]!.args)).toBe(contactsSql(false, "any", 50));
    expect(calls[0]!.args).toContain("--local");
  });

  it.each(["0", "1001", "-1", "abc", "5; DROP TABLE contacts", "1e3"])("--limit %s → exit 2 with no spawn", async (limit) => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "signals", "--limit", limit]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("accepts --limit 1 and 1000", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    expect((await runMagnt(["review", "signals", "--limit", "1"])).code).toBe(0);
    expect((await runMagnt(["review", "signals", "--limit", "1000"])).code).toBe(0);
    expect(sqlOf(calls[1]!.args)).toMatch(/LIMIT 1000$/);
  });

  it("an unknown kind → exit 2", async () => {
    const run = await runMagnt(["review", "everything"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("contacts, signals, observed, drafts");
  });

  it.each([
    ["signals", "task_signals", "0002_task_signals.sql"],
    ["observed", "observed_task_signals", "0003_observed_task_signals.sql"],
    ["drafts", "owner_drafts", "0006_owner_state.sql"],
  ])("a missing table for %s → exit 3 naming the migration", async (kind, table, migration) => {
    installFakeWrangler(spawnMock, () => d1Error(`no such table: ${table}: SQLITE_ERROR`));
    const run = await runMagnt(["review", kind, "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining(migration) } });
  });

  it("--json prints full values as an array; the table cuts them", async () => {
    const long = `first line\n${"x".repeat(200)}`;
    const row = { signal_id: SIGNAL_ID, created_at: "2026-01-01T00:00:00.000Z", goal: long, blocker: null, tried: null, learned: null, status: "active" };
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const json = await runMagnt(["review", "signals", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual([row]);
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const human = await runMagnt(["review", "signals"]);
    expect(human.stdout).toContain("first line⏎xxx");
    expect(human.stdout).not.toContain("x".repeat(61));
    expect(human.stdout).toContain("…");
    expect(human.stdout).toContain("goal");
  });

  it("remote refuses the placeholder config before spawning", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "contacts", "--remote"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("remote with a real id runs without confirmation (read-only)", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "contacts", "--remote"], { cwd: tempProject({ realId: true }) });
    expect(run.code).toBe(0);
    expect(calls[0]!.args).toContain("--remote");
  });
});

const CONTACT_ID = "mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
const SIGNAL_ID = "ts_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
const OBSERVATION_ID = "ob_0123456789abcdef0123456789abcdef";
const DRAFT_ID = "dr_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
const CREATED = "2026-01-01T00:00:00.000Z";

/**
 * Every character class a terminal may act on, written independently of the
 * implementation: C0 (except the line feed the record view may keep), DEL,
 * C1, U+2028/U+2029, bidi embeddings/overrides/isolates and the LRM/RLM/ALM marks.
 */
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

/** The hazards a visitor could store, each wrapped as `before<hazard>after` in every field. */
const HAZARDS: [string, string, { swallowsRest?: true }?][] = [
  ["CSI colour", "\u001b[31;1mRED\u001b[0m"],
  ["CSI clear screen and cursor home", "\u001b[2J\u001b[H"],
  ["CSI cursor up and erase line", "\u001b[1A\u001b[2K"],
  ["CSI private mode (hide cursor)", "\u001b[?25l"],
  ["OSC title, BEL-terminated", "\u001b]0;OSCPAYLOAD\u0007"],
  ["OSC 8 hyperlink, ST-terminated", "\u001b]8;;https://OSCPAYLOAD.example/\u001b\\link\u001b]8;;\u001b\\"],
  ["OSC 52 clipboard write", "\u001b]52;c;T1NDUEFZTE9BRA==\u0007"],
  // A terminal would swallow everything after an unterminated string control; so does the sanitiser.
  ["OSC unterminated", "\u001b]2;OSCPAYLOAD", { swallowsRest: true }],
  ["DCS string", "\u001bPq#0;2;0;0;0OSCPAYLOAD\u001b\\"],
  ["APC string", "\u001b_OSCPAYLOAD\u001b\\"],
  ["8-bit CSI", "\u009b31m"],
  ["8-bit OSC with 8-bit ST", "\u009d0;OSCPAYLOAD\u009c"],
  ["ESC c (full reset)", "\u001bc"],
  ["ESC ( 0 (line-drawing charset)", "\u001b(0"],
  ["ESC 7 / ESC 8 (save/restore cursor)", "\u001b7\u001b8"],
  // ESC + "a" is itself a two-character sequence, so the "a" of "after" goes with it.
  ["lone ESC", "\u001b", { swallowsRest: true }],
  ["ESC before a control", "\u001b\u0000"],
  ["NUL", "\u0000"],
  ["BEL", "\u0007"],
  ["backspace", "\b\b\b"],
  ["carriage return", "\r"],
  ["vertical tab and form feed", "\u000b\u000c"],
  ["unit separator", "\u001f"],
  ["DEL", "\u007f"],
  ["C1 NEL", "\u0085"],
  ["other C1 controls", "\u0080\u008d\u0099\u009a"],
  ["8-bit DCS with 8-bit ST", "\u0090OSCPAYLOAD\u009c"],
  ["U+2028 line separator", "\u2028"],
  ["U+2029 paragraph separator", "\u2029"],
  ["LRE/RLE/PDF/LRO/RLO", "\u202a\u202b\u202c\u202d\u202e"],
  ["LRI/RLI/FSI/PDI", "\u2066\u2067\u2068\u2069"],
  ["LRM/RLM/ALM marks", "\u200e\u200f\u061c"],
  ["tab", "\t"],
];

/** A fake Wrangler answering the contact record query with `row` and the dialogue-state query with `dialogue` (rows or a D1 error text). */
function contactAndDialogue(row: Record<string, unknown>, dialogue: Record<string, unknown>[] | string) {
  return (args: string[]) =>
    /FROM dialogue_contacts dc/.test(sqlOf(args) ?? "") ? (typeof dialogue === "string" ? d1Error(dialogue) : d1Rows(dialogue)) : d1Rows([row]);
}

/** A contact row as the owner's read model selects it: every visitor field `text`, no owner state set. */
function contactRow(text: string): Record<string, unknown> {
  return {
    contact_id: CONTACT_ID,
    created_at: CREATED,
    review_status: "pending",
    summary: text,
    intent: text,
    what_you_need_from_human: text,
    agent_identity: text,
    operator: text,
    reply_to: text,
    found_via: text,
    previous_contact_id: text,
    self_reported_test: 0,
    client_name: text,
    client_version: text,
    protocol_version: text,
    owner_state: null,
    state_updated_at: null,
  };
}

/** The row as `--json` prints it: the owner's state as owner_list_contacts reads it (no state row = pending). */
function contactJson(row: Record<string, unknown>): Record<string, unknown> {
  const { owner_state: stored, ...rest } = row;
  return { ...rest, state: stored ?? "pending" };
}
const VISITOR_FIELDS = 11;

/** Runs the CLI with a TTY stdout that reports `columns` (as `process.stdout` does). */
async function runOnTerminal(argv: string[], columns: number): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const ctx: CliContext = {
    stdout: Object.assign({ write: (chunk: string) => (stdout += chunk), isTTY: true }, { columns }),
    stderr: { write: (chunk: string) => (stderr += chunk), isTTY: true },
    stdin: { isTTY: true },
    env: { PATH: process.env.PATH, NO_COLOR: "1" },
    cwd: REPO_ROOT,
    wranglerTimeoutMs: { local: 60_000, remote: 120_000 },
    signals: { on: () => undefined, off: () => undefined },
  };
  const code = await runCli(argv, ctx);
  return { code, stdout, stderr };
}

const widthsOf = (stdout: string): number[] => stdout.split("\n").filter((line) => line !== "").map(displayWidth);

describe("visitor text never drives the terminal", () => {
  it.each(HAZARDS)("%s: removed from every cell of the table and of the record view", async (_name, hazard, flags) => {
    const row = contactRow(`before${hazard}after`);
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const table = await runMagnt(["review", "contacts"], { env: { COLUMNS: "400" } });
    expect(table.code).toBe(0);
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const record = await runMagnt(["review", "contacts", CONTACT_ID]);
    expect(record.code).toBe(0);
    for (const output of [table.stdout.replace(/\n/g, ""), record.stdout.replace(/\n/g, ""), table.stderr, record.stderr]) {
      expect(output).not.toMatch(TERMINAL_CONTROL);
      expect(output).not.toContain("\u001b");
      expect(output).not.toContain("OSCPAYLOAD");
    }
    // The visible text around the hazard survives, in all eleven visitor fields of the record view.
    expect(record.stdout.match(/before/g)).toHaveLength(VISITOR_FIELDS);
    if (flags?.swallowsRest !== true) expect(record.stdout.match(/after/g)).toHaveLength(VISITOR_FIELDS);
    expect(table.stdout).toContain("before");
    // Every table row stays one line, and every line has the same width.
    expect(new Set(widthsOf(table.stdout)).size).toBe(1);
  });

  it("all hazards at once, at 80 columns: no control character and no line wider than 80", async () => {
    const row = contactRow(HAZARDS.map(([, hazard]) => `x${hazard}y`).join(" "));
    installFakeWrangler(spawnMock, () => d1Rows([row, row]));
    const run = await runMagnt(["review", "contacts", "--include-tests"]);
    expect(run.code).toBe(0);
    expect(run.stdout.replace(/\n/g, "")).not.toMatch(TERMINAL_CONTROL);
    expect(Math.max(...widthsOf(run.stdout))).toBeLessThanOrEqual(80);
  });

  it("line breaks are ⏎ in the table and indented lines in the record view", async () => {
    const row = { signal_id: SIGNAL_ID, created_at: CREATED, goal: "one\r\ntwo\rthree\nfour", blocker: null, tried: null, learned: null, status: "active", self_reported_test: 1 };
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    expect((await runMagnt(["review", "signals"])).stdout).toContain("one⏎two⏎three⏎four");
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const record = await runMagnt(["review", "signals", SIGNAL_ID]);
    const lines = record.stdout.split("\n");
    const goal = lines.findIndex((line) => line.startsWith("goal:"));
    expect(lines[goal]).toMatch(/^goal: +one$/);
    const indent = lines[goal]!.indexOf("one");
    expect(lines.slice(goal + 1, goal + 4)).toEqual(["two", "three", "four"].map((word) => `${" ".repeat(indent)}${word}`));
  });

  it("--json keeps raw values, every control written as a JSON escape (also DEL, C1 and bidi, which JSON.stringify leaves raw)", async () => {
    const row = contactRow(`a${HAZARDS.map(([, hazard]) => hazard).join("")}z`);
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const list = await runMagnt(["review", "contacts", "--json"]);
    expect(list.stdout.replace(/\n$/, "")).not.toMatch(TERMINAL_CONTROL);
    expect(JSON.parse(list.stdout)).toEqual([contactJson(row)]);
    installFakeWrangler(spawnMock, contactAndDialogue(row, []));
    const record = await runMagnt(["review", "contacts", CONTACT_ID, "--json"]);
    expect(record.stdout.replace(/\n$/, "")).not.toMatch(TERMINAL_CONTROL);
    expect(JSON.parse(record.stdout)).toEqual({ ...contactJson(row), drafts: [], dialogue: null, marked_read: false });
  });
});

describe("the table fits the terminal", () => {
  const long = "word ".repeat(100).trim();
  const rows = (count: number): Record<string, unknown>[] =>
    Array.from({ length: count }, (_, i) => ({ ...contactRow(`${long} ${i}`), contact_id: CONTACT_ID.replace("mc_0", `mc_${i}`) }));
  /** The short id a list prints for row i: the type prefix and 8 characters. */
  const shortOf = (i: number): string => CONTACT_ID.replace("mc_0", `mc_${i}`).slice(0, 11);

  it.each([80, 100, 120, 160, 240])("a TTY of %i columns: every line fits, short ids whole, one line per row", async (columns) => {
    installFakeWrangler(spawnMock, () => d1Rows(rows(3)));
    const run = await runOnTerminal(["review", "contacts"], columns);
    expect(run.code).toBe(0);
    const widths = widthsOf(run.stdout);
    expect(Math.max(...widths)).toBeLessThanOrEqual(columns);
    expect(Math.max(...widths)).toBeGreaterThanOrEqual(columns - 3);
    for (let i = 0; i < 3; i += 1) {
      expect(run.stdout.split("\n").filter((line) => line.includes(`${shortOf(i)} `))).toHaveLength(1);
    }
    expect(run.stdout).not.toContain(CONTACT_ID.slice(12));
    expect(run.stdout).toContain("…");
    // The received date and the owner's state are shown from 80 columns on, the date never cut.
    expect(run.stdout).toContain("2026-01-01 00:00");
    expect(run.stdout).toMatch(/│ pending +│/);
  });

  it("without a TTY the width is 80 (or COLUMNS)", async () => {
    installFakeWrangler(spawnMock, () => d1Rows(rows(2)));
    const plain = await runMagnt(["review", "contacts"]);
    expect(Math.max(...widthsOf(plain.stdout))).toBe(80);
    installFakeWrangler(spawnMock, () => d1Rows(rows(2)));
    const wide = await runMagnt(["review", "contacts"], { env: { COLUMNS: "132" } });
    expect(Math.max(...widthsOf(wide.stdout))).toBe(132);
  });

  it("at 80 columns: the id and the main text are shown, the rest is named on stderr", async () => {
    installFakeWrangler(spawnMock, () => d1Rows(rows(1)));
    const run = await runMagnt(["review", "contacts"]);
    const header = run.stdout.split("\n")[1]!;
    expect(header.split("│").map((cell) => cell.trim()).filter((cell) => cell !== "")).toEqual(["id", "received", "state", "summary"]);
    expect(run.stdout).toContain(shortOf(0));
    expect(run.stdout).not.toContain("review_status");
    expect(run.stderr).toContain("not shown at 80 columns: intent, what_you_need_from_human");
    expect(run.stderr).toContain("magnt review contacts <id>");
  });

  it("wide text (CJK, emoji) is measured in columns, not code points", async () => {
    const row = { observation_id: OBSERVATION_ID, created_at: CREATED, goal: "漢字😀".repeat(40), blocker: "é".repeat(80), tried: null };
    installFakeWrangler(spawnMock, () => d1Rows([row]));
    const run = await runMagnt(["review", "observed"]);
    expect(new Set(widthsOf(run.stdout))).toEqual(new Set([80]));
  });

  it.each(Object.keys(REVIEW_SOURCES) as ReviewKind[])("%s: an empty result still renders a header that fits", async (kind) => {
    installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", kind]);
    expect(run.code).toBe(0);
    expect(Math.max(...widthsOf(run.stdout))).toBeLessThanOrEqual(80);
    expect(run.stdout).toMatch(/│ id +│/);
  });
});

describe("one record in full", () => {
  const RECORDS: [ReviewKind, string, string][] = [
    ["contacts", CONTACT_ID, `${CONTACT_PAGE_WITH_TESTS.slice(0, CONTACT_PAGE_WITH_TESTS.indexOf(" WHERE "))} WHERE c.contact_id = '${CONTACT_ID}'`],
    ["signals", SIGNAL_ID, `SELECT signal_id, created_at, goal, blocker, tried, learned, status, self_reported_test FROM task_signals WHERE signal_id = '${SIGNAL_ID}'`],
    ["observed", OBSERVATION_ID, `SELECT observation_id, created_at, goal, blocker, tried, self_reported_test FROM observed_task_signals WHERE observation_id = '${OBSERVATION_ID}'`],
    ["drafts", DRAFT_ID, `SELECT d.draft_id, d.contact_id, d.revision, d.created_at, d.updated_at, d.body, c.self_reported_test FROM owner_drafts d JOIN contacts c ON c.contact_id = d.contact_id WHERE d.draft_id = '${DRAFT_ID}'`],
  ];

  it.each(RECORDS)("%s <id>: the SQL selects that row by its key, test rows included", async (kind, recordId, sql) => {
    expect(reviewRecordSql(kind, recordId)).toBe(sql);
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    await runMagnt(["review", kind, recordId.toUpperCase().replace(/^[A-Z]{2}_/, (p) => p.toLowerCase())]);
    expect(sqlOf(calls[0]!.args)!.split(";\n")[0]).toBe(sql);
  });

  it("contacts <id> also reads the contact's newest drafts with owner_list_contacts' own statement, in the same Wrangler call", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    await runMagnt(["review", "contacts", CONTACT_ID]);
    expect(sqlOf(calls[0]!.args)!.split(";\n")[1]).toContain(`FROM owner_drafts WHERE contact_id IN (SELECT value FROM json_each('["${CONTACT_ID}"]'))`);
    expect(sqlOf(calls[0]!.args)!.split(";\n")[1]).toContain("WHERE position <= 5");
  });

  it("prints every field on its own line, long values wrapped under the value column", async () => {
    const summary = `${"lorem ipsum ".repeat(30).trim()}`;
    installFakeWrangler(spawnMock, () => d1Rows([{ ...contactRow("short"), summary, operator: null, self_reported_test: 0 }]));
    const run = await runMagnt(["review", "contacts", CONTACT_ID]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    for (const field of REVIEW_SOURCES.contacts.recordFields) {
      expect(lines.filter((line) => line.startsWith(`${field}:`) || line.startsWith(`  ${field}:`)), field).toHaveLength(1);
    }
    expect(lines.find((line) => line.startsWith("  operator:"))).toMatch(/^ {2}operator: +\(none\)$/);
    expect(lines.find((line) => line.startsWith("visitor_content:"))).toContain("unverified visitor");
    expect(lines.find((line) => line.startsWith("state:"))).toMatch(/^state: +pending$/);
    expect(lines.some((line) => line.startsWith("review_status"))).toBe(false);
    expect(Math.max(...lines.map(displayWidth))).toBeLessThanOrEqual(80);
    const first = lines.findIndex((line) => line.startsWith("  summary:"));
    const indent = lines[first]!.indexOf("lorem");
    const next = lines.findIndex((line, index) => index > first && /^ {0,2}\S/.test(line));
    const continuation = lines.slice(first + 1, next);
    for (const line of continuation) expect(line).toMatch(new RegExp(`^ {${indent}}\\S`));
    expect(continuation.length).toBeGreaterThan(1);
    expect([lines[first]!.slice(indent), ...continuation.map((line) => line.slice(indent))].join(" ")).toBe(summary);
  });

  it("--json prints the row object (a contact's with its dialogue state, null without a dialogue)", async () => {
    const row = contactRow("v");
    installFakeWrangler(spawnMock, contactAndDialogue(row, []));
    const run = await runMagnt(["review", "contacts", CONTACT_ID, "--json"]);
    expect(run.code).toBe(0);
    expect(run.lines).toHaveLength(1);
    expect(JSON.parse(run.stdout)).toEqual({ ...contactJson(row), drafts: [], dialogue: null, marked_read: false });
    const signal = { signal_id: SIGNAL_ID, created_at: CREATED, goal: "g", blocker: null, tried: null, learned: null, status: "active", self_reported_test: 0 };
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([signal]));
    expect(JSON.parse((await runMagnt(["review", "signals", SIGNAL_ID, "--json"])).stdout)).toEqual(signal);
    expect(calls).toHaveLength(1);
  });

  it("an unknown id → exit 1 (no such record), with the --json error object", async () => {
    installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", "signals", SIGNAL_ID, "--json"]);
    expect(run.code).toBe(1);
    expect(run.lines).toHaveLength(1);
    expect(run.lastJson()).toEqual({ error: { code: "check_failed", message: `no signal ${SIGNAL_ID}` } });
  });

  it.each([
    ["contacts", SIGNAL_ID],
    ["signals", CONTACT_ID],
    ["observed", "ob_123"],
    ["drafts", "dr_x'; DROP TABLE owner_drafts;--"],
    ["contacts", `${CONTACT_ID}' OR '1'='1`],
    ["contacts", "mc_\u001b[31m"],
  ])("review %s %j → exit 2, nothing spawned", async (kind, bad) => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["review", kind, bad, "--json"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
    expect(run.lastJson()).toEqual({ error: { code: "usage", message: expect.stringMatching(/not a|at least 4 characters/) } });
    expect(run.stderr).not.toContain("\u001b[31m");
  });

  it("a missing table → exit 3 naming the migration, as for the list", async () => {
    installFakeWrangler(spawnMock, () => d1Error("no such table: owner_drafts: SQLITE_ERROR"));
    const run = await runMagnt(["review", "drafts", DRAFT_ID]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("0006_owner_state.sql");
  });

  it("--help explains the id argument", async () => {
    const run = await runMagnt(["review", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("[id]");
    expect(run.stdout).toMatch(/unique prefix of it as the\s+list prints/);
    expect(run.stdout).toContain("--no-mark-read");
    expect(run.stdout).toContain("--state <state>");
    expect(run.stdout).toContain("else $COLUMNS, else 80");
  });
});

describe("the dialogue state of a contact (07, 08 §10)", () => {
  const STATE = {
    role: "follow_up",
    root_contact_id: "mc_11111111-2222-4333-8444-555555555555",
    dialogue_created_at: CREATED,
    revoked_at: "2026-02-01T00:00:00.000Z",
    messages: 3,
    replies_published: 2,
    replies_fetched: 1,
    owner_read_at: "2026-01-02T00:00:00.000Z",
  };

  it("selects only the state columns by the checked id — never the dialogue id, a token or its hash", () => {
    const sql = dialogueStateSql(CONTACT_ID.toUpperCase().replace("MC_", "mc_"));
    expect(sql).toMatch(new RegExp(`WHERE dc.contact_id = '${CONTACT_ID}'$`));
    const selected = sql.slice("SELECT ".length, sql.indexOf(" FROM dialogue_contacts dc JOIN"));
    expect(sql).not.toMatch(/token|hash/);
    expect(selected.split(/, (?![^(]*\))/).map((part) => part.split(/ AS |\./).at(-1))).toEqual([...DIALOGUE_STATE_COLUMNS]);
    expect(() => dialogueStateSql("mc_' OR 1=1 --")).toThrow();
  });

  it("shows role, revocation, counts and the owner's read in the record view and in --json", async () => {
    const row = contactRow("hello");
    installFakeWrangler(spawnMock, contactAndDialogue(row, [{ ...STATE, token_hash: "f".repeat(64), dialogue_id: "dg_leak" }]));
    const human = await runMagnt(["review", "contacts", CONTACT_ID]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^dialogue: +follow_up, revoked$/m);
    expect(human.stdout).toMatch(/^dialogue_root_contact_id: +mc_11111111-2222-4333-8444-555555555555$/m);
    expect(human.stdout).toMatch(/^dialogue_messages: +3$/m);
    expect(human.stdout).toMatch(/^dialogue_replies_fetched: +1$/m);
    expect(human.stdout).toMatch(/^dialogue_owner_read_at: +2026-01-02T00:00:00.000Z$/m);
    expect(human.stdout).not.toContain("f".repeat(64));
    expect(human.stdout).not.toContain("dg_leak");

    installFakeWrangler(spawnMock, contactAndDialogue(row, [{ ...STATE, token_hash: "f".repeat(64), dialogue_id: "dg_leak" }]));
    const json = await runMagnt(["review", "contacts", CONTACT_ID, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ ...contactJson(row), drafts: [], dialogue: { ...STATE, replies: [] }, marked_read: false });
  });

  it("shows the drafts with their revisions and the published replies with their ids (owner_list_contacts' statements)", async () => {
    const row = contactRow("hello");
    const draft = { draft_id: DRAFT_ID, contact_id: CONTACT_ID, revision: 3, updated_at: "2026-01-03T00:00:00.000Z", body: "my answer" };
    const reply = { contact_id: CONTACT_ID, reply_id: "rp_11111111-2222-4333-8444-555555555555", published_at: "2026-01-04T00:00:00.000Z", fetched_at: null };
    /** One result per statement of the `--command` text, as `d1 execute` answers it. */
    const perStatement = (args: string[]) => {
      const sql = sqlOf(args) ?? "";
      const results = /FROM dialogue_contacts dc/.test(sql) ? [[STATE], [reply]] : [[row], [draft]];
      return { code: 0, stdout: JSON.stringify(results.map((rows) => ({ results: rows, success: true, meta: {} }))) };
    };
    const { calls } = installFakeWrangler(spawnMock, perStatement);
    const human = await runMagnt(["review", "contacts", CONTACT_ID]);
    expect(human.code, human.stderr).toBe(0);
    expect(sqlOf(calls[1]!.args)).toContain(`FROM dialogue_replies\n       WHERE contact_id IN (SELECT value FROM json_each('["${CONTACT_ID}"]')) ORDER BY published_at, reply_id`);
    const flat = human.stdout.replace(/\n {10,}/g, " ");
    expect(flat).toMatch(new RegExp(`^draft: +${DRAFT_ID} revision 3, updated 2026-01-03T00:00:00.000Z my answer$`, "m"));
    expect(flat).toMatch(/^reply: +rp_11111111-2222-4333-8444-555555555555 published 2026-01-04T00:00:00\.000Z, not fetched yet$/m);
    expect(Math.max(...widthsOf(human.stdout))).toBeLessThanOrEqual(80);
    installFakeWrangler(spawnMock, perStatement);
    const json = JSON.parse((await runMagnt(["review", "contacts", CONTACT_ID, "--json"])).stdout) as Record<string, unknown>;
    expect(json.drafts).toEqual([{ draft_id: DRAFT_ID, revision: 3, updated_at: draft.updated_at, body: "my answer" }]);
    expect(json.dialogue).toEqual({ ...STATE, replies: [{ reply_id: reply.reply_id, published_at: reply.published_at, fetched_at: null }] });
  });

  it("a contact without a dialogue says none; before 0007 the record still prints and names the migration", async () => {
    const row = contactRow("hello");
    installFakeWrangler(spawnMock, contactAndDialogue(row, []));
    expect((await runMagnt(["review", "contacts", CONTACT_ID])).stdout).toMatch(/^dialogue: +none$/m);

    installFakeWrangler(spawnMock, contactAndDialogue(row, "no such table: dialogue_contacts: SQLITE_ERROR"));
    const before = await runMagnt(["review", "contacts", CONTACT_ID]);
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/^dialogue: +unknown \(migration 0007_dialogue\.sql not applied\)$/m);
    installFakeWrangler(spawnMock, contactAndDialogue(row, "no such table: dialogue_contacts: SQLITE_ERROR"));
    expect(JSON.parse((await runMagnt(["review", "contacts", CONTACT_ID, "--json"])).stdout)).toEqual({ ...contactJson(row), drafts: [], marked_read: false });

    installFakeWrangler(spawnMock, contactAndDialogue(row, "database is locked"));
    expect((await runMagnt(["review", "contacts", CONTACT_ID])).code).toBe(3);
  });
});

describe("the owner's state, short ids and read marks (issue 18, issue 22)", () => {
  it("--state filters with owner_list_contacts' own filter; a state outside the list → exit 2; only for contacts", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    expect((await runMagnt(["review", "contacts", "--state", "archived"])).code).toBe(0);
    expect(sqlOf(calls[0]!.args)).toBe(contactsSql(false, "archived", 50));
    expect(sqlOf(calls[0]!.args)).toContain("COALESCE(s.state, 'pending') = 'archived'");
    expect((await runMagnt(["review", "contacts", "--state", "done"])).code).toBe(2);
    expect((await runMagnt(["review", "signals", "--state", "pending"])).code).toBe(2);
    expect(calls).toHaveLength(1);
  });

  it("the list shows the state owner_list_contacts returns (archived from contact_owner_state, pending without a row)", async () => {
    const rows = [
      { ...contactRow("archived one"), owner_state: "archived", state_updated_at: CREATED },
      { ...contactRow("untouched"), contact_id: CONTACT_ID.replace("mc_0", "mc_1") },
    ];
    installFakeWrangler(spawnMock, () => d1Rows(rows));
    const run = await runMagnt(["review", "contacts"]);
    expect(run.stdout.split("\n").find((line) => line.includes("archived one"))).toMatch(/│ archived +│/);
    expect(run.stdout.split("\n").find((line) => line.includes("untouched"))).toMatch(/│ pending +│/);
    installFakeWrangler(spawnMock, () => d1Rows(rows));
    expect((JSON.parse((await runMagnt(["review", "contacts", "--json"])).stdout) as { state: string }[]).map((row) => row.state)).toEqual(["archived", "pending"]);
  });

  it("a unique prefix is looked up in its table, then the record is shown", async () => {
    const { calls } = installFakeWrangler(spawnMock, (args) => (/AS id FROM task_signals/.test(sqlOf(args) ?? "") ? d1Rows([{ id: SIGNAL_ID }]) : d1Rows([{ signal_id: SIGNAL_ID, status: "active" }])));
    const run = await runMagnt(["review", "signals", "TS_0F8E2C1A"]);
    expect(run.code, run.stderr).toBe(0);
    expect(sqlOf(calls[0]!.args)).toBe("SELECT signal_id AS id FROM task_signals WHERE signal_id >= 'ts_0f8e2c1a' AND signal_id < 'ts_0f8e2c1a' || '~' ORDER BY signal_id LIMIT 11");
    expect(sqlOf(calls[1]!.args)).toContain(`WHERE signal_id = '${SIGNAL_ID}'`);
  });

  it("an ambiguous prefix → exit 2 naming the candidates; no match → exit 1; under 4 characters → exit 2 before anything runs", async () => {
    const other = CONTACT_ID.replace("2c1a", "2c1b");
    installFakeWrangler(spawnMock, () => d1Rows([{ id: CONTACT_ID }, { id: other }]));
    const ambiguous = await runMagnt(["review", "contacts", "mc_0f8e2c1"]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`mc_0f8e2c1 is ambiguous: it starts ${CONTACT_ID}, ${other}`);
    installFakeWrangler(spawnMock, () => d1Rows([]));
    const none = await runMagnt(["review", "contacts", "mc_0f8e", "--json"]);
    expect(none.code).toBe(1);
    expect(none.lastJson()).toEqual({ error: { code: "check_failed", message: "no contact id starts with mc_0f8e" } });
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const short = await runMagnt(["review", "contacts", "mc_0f8"]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("at least 4 characters after mc_");
    expect(calls).toHaveLength(0);
  });

  it("two ids shown with the same 8 characters get longer short forms, each still unique", async () => {
    const other = CONTACT_ID.replace("-3b4d", "-3b4e");
    installFakeWrangler(spawnMock, () => d1Rows([contactRow("a"), { ...contactRow("b"), contact_id: other }]));
    const run = await runMagnt(["review", "contacts"]);
    expect(run.stdout).toContain("mc_0f8e2c1a-3b4d ");
    expect(run.stdout).toContain("mc_0f8e2c1a-3b4e ");
  });

  describe("opening a contact in full marks it read, by the owner MCP's rule", () => {
    const project = (devVars: string): string => {
      const dir = tempProject();
      writeFileSync(join(dir, ".dev.vars"), devVars);
      return dir;
    };
    const RECEIPTS_ON = "DIALOGUE_ENABLED=true\nDIALOGUE_READ_RECEIPTS_ENABLED=true\n";
    const marks = (calls: { args: string[] }[]) => calls.filter((call) => /INSERT INTO dialogue_owner_reads/.test(sqlOf(call.args) ?? ""));

    it("with the dialogue and read receipts on: the owner MCP's statement, once, after the record was read", async () => {
      const { calls } = installFakeWrangler(spawnMock, contactAndDialogue(contactRow("x"), []));
      const run = await runMagnt(["review", "contacts", CONTACT_ID, "--json"], { cwd: project(RECEIPTS_ON) });
      expect(run.code, run.stderr).toBe(0);
      expect(marks(calls)).toHaveLength(1);
      expect(calls.at(-1)).toBe(marks(calls)[0]);
      const sql = sqlOf(marks(calls)[0]!.args)!;
      expect(sql).toMatch(new RegExp(`SELECT '${CONTACT_ID}', '\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z' WHERE EXISTS \\(SELECT 1 FROM contacts WHERE contact_id = '${CONTACT_ID}'\\)`));
      expect(sql).toContain("ON CONFLICT(contact_id) DO NOTHING");
      expect(JSON.parse(run.stdout)).toMatchObject({ marked_read: true });
    });

    it.each([
      ["--no-mark-read", RECEIPTS_ON, ["--no-mark-read"]],
      ["read receipts off", "DIALOGUE_ENABLED=true\n", []],
      ["receipts set but the dialogue off (they count as off)", "DIALOGUE_READ_RECEIPTS_ENABLED=true\n", []],
      ["a value other than exactly true", "DIALOGUE_ENABLED=TRUE\nDIALOGUE_READ_RECEIPTS_ENABLED=true\n", []],
    ])("%s: nothing is written", async (_name, devVars, extra) => {
      const { calls } = installFakeWrangler(spawnMock, contactAndDialogue(contactRow("x"), []));
      const run = await runMagnt(["review", "contacts", CONTACT_ID, ...extra], { cwd: project(devVars) });
      expect(run.code, run.stderr).toBe(0);
      expect(marks(calls)).toHaveLength(0);
      expect(run.stderr).toContain("not marked read");
    });

    it("lists never mark, nor a contact that does not exist, nor other kinds", async () => {
      const cwd = project(RECEIPTS_ON);
      const { calls } = installFakeWrangler(spawnMock, () => d1Rows([contactRow("x")]));
      expect((await runMagnt(["review", "contacts"], { cwd })).code).toBe(0);
      installFakeWrangler(spawnMock, () => d1Rows([]));
      expect((await runMagnt(["review", "contacts", CONTACT_ID], { cwd })).code).toBe(1);
      expect(marks(calls)).toHaveLength(0);
    });

    it("a database that refuses the mark: a warning, and the record is still shown (best effort, as in the owner MCP)", async () => {
      installFakeWrangler(spawnMock, (args) =>
        /INSERT INTO dialogue_owner_reads/.test(sqlOf(args) ?? "") ? d1Error("database is locked") : contactAndDialogue(contactRow("x"), [])(args),
      );
      const run = await runMagnt(["review", "contacts", CONTACT_ID], { cwd: project(RECEIPTS_ON) });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("contact_id:");
      expect(run.stderr).toContain("the read mark was not recorded");
    });
  });
});
