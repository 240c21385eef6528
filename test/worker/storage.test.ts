/**
 * Storage (09): migrations are idempotent, the search uses its index, and the
 * door behaves as specified when a migration is missing (this file drops
 * tables, so it runs on its own database).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { SEARCH_WINDOW_SQL } from "../../worker/storage/signals/sql";
import { captureConsole } from "../helpers/door";
import { countRows, db } from "../helpers/db";
import { search, contribute, uniqueWord } from "../helpers/signals";
import { callToolModern } from "../helpers/mcp";

describe("migrations (09 §2–§3)", () => {
  it("applying every migration file a second time is a no-op", async () => {
    const tables = async () =>
      (await db().prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name").all()).results;
    const before = await tables();
    for (const migration of env.TEST_MIGRATIONS) {
      for (const query of migration.queries) await db().prepare(query).run();
    }
    expect(await tables()).toEqual(before);
  });

  it("has exactly the specified columns and constraints", async () => {
    const columns = async (table: string) =>
      (await db().prepare(`PRAGMA table_info(${table})`).all<{ name: string; type: string; notnull: number; pk: number }>()).results.map(
        (column) => `${column.name}:${column.type}${column.notnull ? "!" : ""}${column.pk ? "*" : ""}`,
      );
    expect(await columns("contacts")).toEqual([
      "contact_id:TEXT*", "created_at:TEXT!", "review_status:TEXT!", "summary:TEXT!", "intent:TEXT", "what_you_need_from_human:TEXT",
      "agent_identity:TEXT", "operator:TEXT", "reply_to:TEXT", "found_via:TEXT", "previous_contact_id:TEXT", "self_reported_test:INTEGER!",
      "submission_id:TEXT!", "payload_hash:TEXT!", "client_name:TEXT", "client_version:TEXT", "protocol_version:TEXT",
    ]);
    expect(await columns("task_signals")).toEqual([
      "signal_id:TEXT*", "created_at:TEXT!", "goal:TEXT!", "blocker:TEXT", "tried:TEXT", "learned:TEXT", "submission_id:TEXT!",
      "payload_hash:TEXT!", "self_reported_test:INTEGER!", "status:TEXT!",
    ]);
    expect(await columns("task_signal_tokens")).toEqual(["signal_id:TEXT*", "tokenizer_version:INTEGER!", "tokens:TEXT!"]);
    expect(await columns("observed_task_signals")).toEqual([
      "observation_id:TEXT*", "created_at:TEXT!", "goal:TEXT!", "blocker:TEXT", "tried:TEXT", "self_reported_test:INTEGER!",
    ]);
    await expect(
      db().prepare("INSERT INTO task_signals (signal_id, created_at, goal, submission_id, payload_hash, status) VALUES ('ts_x', 'now', 'g', 's', 'h', 'deleted')").run(),
    ).rejects.toThrow();
    await expect(
      db().prepare("INSERT INTO observed_task_signals (observation_id, created_at, goal, self_reported_test) VALUES ('ob_x', 'now', 'g', 2)").run(),
    ).rejects.toThrow();
  });

  it("serves the search window from idx_task_signals_search", async () => {
    const plan = await db().prepare(`EXPLAIN QUERY PLAN ${SEARCH_WINDOW_SQL}`).bind(0, 100, 1, 1000, JSON.stringify(["ts_00000000-0000-4000-8000-000000000000"])).all<{ detail: string }>();
    const details = plan.results.map((row) => row.detail).join("\n");
    expect(details).toContain("idx_task_signals_search");
    expect(details).not.toMatch(/TEMP B-TREE/);
  });
});

describe("missing migrations (03 §6–§7)", () => {
  it("0003 missing: the search still answers, with observed_task_saved: false", async () => {
    await db().prepare("DROP TABLE observed_task_signals").run();
    const logs = captureConsole();
    const { structured, result } = await search({ goal: uniqueWord() });
    expect(result!.isError).toBeFalsy();
    expect(structured!.status).toBe("no_relevant_experience");
    expect(logs.events()[0]).toMatchObject({ tool_result: "no_relevant_experience", observed_task_saved: false });
  });

  it("0008 missing: search and contribute → storage_error (never a no-match), nothing half-written", async () => {
    await db().prepare("DROP TABLE task_signal_tokens").run();
    const goal = uniqueWord();
    const searched = await search({ goal });
    expect(searched.result!.isError).toBe(true);
    expect(searched.structured!.status).toBe("storage_error");
    const contributed = await contribute({ goal });
    expect(contributed.structured!.status).toBe("storage_error");
    expect(await countRows("task_signals", "goal = ?", goal)).toBe(0);
  });

  it("0002 missing: search → storage_error (never a no-match), contribute → storage_error, no table created", async () => {
    await db().prepare("DROP TABLE task_signals").run();
    const logs = captureConsole();
    const searched = await search({ goal: uniqueWord() });
    expect(searched.result!.isError).toBe(true);
    expect(searched.structured!.status).toBe("storage_error");
    const contributed = await contribute({ goal: uniqueWord() });
    expect(contributed.structured!.status).toBe("storage_error");
    const exists = await db().prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'task_signals'").first<{ n: number }>();
    expect(exists!.n).toBe(0);
    expect(logs.events().map((event) => event.tool_result)).toEqual(["storage_error", "storage_error"]);
  });

  it("0001 missing: propose_contact creates its table lazily and stores the message", async () => {
    await db().prepare("DROP TABLE contacts").run();
    // A fresh binding object, so the isolate's memo of an existing table does not apply.
    const fresh = new Proxy(env.CONTACTS!, {});
    const { result } = await callToolModern("propose_contact", { summary: "lazy table" }, { overrides: { CONTACTS: fresh } });
    expect((result!.structuredContent as Record<string, unknown>).status).toBe("accepted_for_human_review");
    expect(await countRows("contacts")).toBe(1);
  });
});
