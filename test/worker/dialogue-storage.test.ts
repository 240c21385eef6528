/**
 * Migration 0007 (09 §3) as applied: the exact columns, keys and constraints of
 * the five dialogue tables, the role CHECK, and the claim of the oldest unread
 * reply using its index.
 */
import { describe, expect, it } from "vitest";
import { db } from "../helpers/db";

const columns = async (table: string) =>
  (await db().prepare(`PRAGMA table_info(${table})`).all<{ name: string; type: string; notnull: number; pk: number }>()).results.map(
    (column) => `${column.name}:${column.type}${column.notnull ? "!" : ""}${column.pk ? `*${column.pk}` : ""}`,
  );

describe("0007_dialogue.sql (09 §3)", () => {
  it("creates the five tables with exactly the specified columns", async () => {
    expect(await columns("dialogues")).toEqual(["dialogue_id:TEXT*1", "token_hash:TEXT!", "root_contact_id:TEXT!", "created_at:TEXT!", "revoked_at:TEXT"]);
    expect(await columns("dialogue_contacts")).toEqual(["contact_id:TEXT*1", "dialogue_id:TEXT!", "role:TEXT!", "joined_at:TEXT!"]);
    expect(await columns("dialogue_replies")).toEqual([
      "reply_id:TEXT*1", "dialogue_id:TEXT!", "contact_id:TEXT!", "draft_id:TEXT!", "draft_revision:INTEGER!", "body:TEXT!", "published_at:TEXT!", "fetched_at:TEXT",
    ]);
    expect(await columns("dialogue_owner_reads")).toEqual(["contact_id:TEXT*1", "read_at:TEXT!"]);
    expect(await columns("dialogue_fetch_attempts")).toEqual(["key_hash:TEXT!*1", "window_start:TEXT!*2", "failures:INTEGER!"]);
  });

  it("enforces root_contact_id and draft_id UNIQUE and the role CHECK", async () => {
    const root = `mc_${crypto.randomUUID()}`;
    const insertDialogue = (id: string) =>
      db().prepare("INSERT INTO dialogues (dialogue_id, token_hash, root_contact_id, created_at) VALUES (?, 'h', ?, 'now')").bind(id, root).run();
    await insertDialogue(`dg_${crypto.randomUUID()}`);
    await expect(insertDialogue(`dg_${crypto.randomUUID()}`)).rejects.toThrow(/UNIQUE/);
    await expect(
      db().prepare("INSERT INTO dialogue_contacts (contact_id, dialogue_id, role, joined_at) VALUES (?, 'dg_x', 'owner', 'now')").bind(`mc_${crypto.randomUUID()}`).run(),
    ).rejects.toThrow(/CHECK/);
    const draft = `dr_${crypto.randomUUID()}`;
    const insertReply = () =>
      db()
        .prepare("INSERT INTO dialogue_replies (reply_id, dialogue_id, contact_id, draft_id, draft_revision, body, published_at) VALUES (?, 'dg_x', 'mc_x', ?, 1, 'b', 'now')")
        .bind(`rp_${crypto.randomUUID()}`, draft)
        .run();
    await insertReply();
    await expect(insertReply()).rejects.toThrow(/UNIQUE/);
  });

  it("claims the oldest unread reply through idx_dialogue_replies_unread", async () => {
    const plan = await db()
      .prepare(
        "EXPLAIN QUERY PLAN SELECT reply_id FROM dialogue_replies WHERE dialogue_id = ? AND fetched_at IS NULL ORDER BY published_at, reply_id LIMIT 1",
      )
      .bind("dg_x")
      .all<{ detail: string }>();
    const details = plan.results.map((row) => row.detail).join("\n");
    expect(details).toContain("idx_dialogue_replies_unread");
    expect(details).not.toContain("USE TEMP B-TREE");
  });
});
