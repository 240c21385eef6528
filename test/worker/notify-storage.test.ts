/**
 * Migrations 0004 and 0005 (09 §3, 09 DoD): exact tables and indexes,
 * idempotent when applied twice, and the discovery and due-row queries of the
 * cron run planned on their indexes.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { discoverContacts, selectDue } from "../../worker/storage/outbox/store";
import { faultyD1 } from "../fakes/faulty-d1";
import { db, selectRows } from "../helpers/db";

async function plan(sql: string, params: unknown[]): Promise<string> {
  const rows = await selectRows<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, ...params);
  return rows.map((row) => row.detail).join("\n");
}

describe("migrations 0004 and 0005", () => {
  it("create the two tables with the columns of 09 §3 and the three indexes", async () => {
    const state = await selectRows<{ name: string; notnull: number; pk: number }>("PRAGMA table_info(notification_state)");
    expect(state.map((column) => column.name)).toEqual([
      "id", "activated_at", "owner_chat_hash", "lease_id", "lease_expires_at", "backoff_until", "consecutive_failures", "updated_at",
    ]);
    const outbox = await selectRows<{ name: string }>("PRAGMA table_info(notification_outbox)");
    expect(outbox.map((column) => column.name)).toEqual([
      "outbox_id", "source_kind", "source_id", "created_at", "state", "attempts", "next_attempt_at", "last_attempt_at",
      "last_error_code", "last_http_status", "delivered_at", "telegram_message_id",
    ]);
    const indexes = await selectRows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('idx_notification_outbox_due', 'idx_contacts_notify', 'idx_notification_outbox_kind') ORDER BY name");
    expect(indexes.map((index) => index.name)).toEqual(["idx_contacts_notify", "idx_notification_outbox_due", "idx_notification_outbox_kind"]);
  });

  it("enforce the singleton, the states and one row per source", async () => {
    await expect(db().prepare("INSERT INTO notification_state (id, activated_at, updated_at) VALUES (2, 'x', 'x')").run()).rejects.toThrow();
    await expect(
      db().prepare("INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, state, next_attempt_at) VALUES ('nt_a', 'contact', 's', 'x', 'lost', 'x')").run(),
    ).rejects.toThrow();
    await db().prepare("INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, next_attempt_at) VALUES ('nt_b', 'contact', 's', 'x', 'x')").run();
    await expect(
      db().prepare("INSERT INTO notification_outbox (outbox_id, source_kind, source_id, created_at, next_attempt_at) VALUES ('nt_c', 'contact', 's', 'x', 'x')").run(),
    ).rejects.toThrow();
    await db().prepare("DELETE FROM notification_outbox").run();
  });

  it("are no-ops when applied a second time", async () => {
    for (const migration of env.TEST_MIGRATIONS.filter((entry) => /^000[45]_/.test(entry.name))) {
      for (const query of migration.queries) await db().prepare(query).run();
    }
    expect((await selectRows("PRAGMA table_info(notification_outbox)")).length).toBe(12);
  });

  it("plan discovery on idx_contacts_notify and the due selection on idx_notification_outbox_due", async () => {
    const recorder = faultyD1(db());
    await discoverContacts(recorder, new Date().toISOString());
    await selectDue(recorder, new Date().toISOString());
    const [discovery, due] = recorder.statements;
    expect(await plan(discovery!.sql, discovery!.params)).toContain("idx_contacts_notify");
    expect(await plan(due!.sql, due!.params)).toContain("idx_notification_outbox_due");
  });
});
