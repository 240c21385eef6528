/**
 * The owner server under every combination of the flags that shape it (06 §6,
 * 07 §1, §4.1): core's OWNER_MCP_ENABLED, OWNER_MCP_WRITE_ENABLED,
 * DIALOGUE_ENABLED, DIALOGUE_REPLIES_ENABLED and DIALOGUE_READ_RECEIPTS_ENABLED
 * — 32 rows, each through the owner gateway's real routes and core's real
 * `handleOwnerMcp` with a real token and the official v2 client. Each row
 * checks which tools are listed, what the instructions promise, that a call to
 * an unregistered publish tool is `-32602` and stores nothing, and that saving
 * over a published draft answers `draft_published` whatever the flags (the
 * record of what was sent never drifts from what the visitor fetches).
 * Then: with migration 0007 absent (a B.1 database) a save still works.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { Env } from "../../worker/config/env";
import { countRows, db } from "../helpers/db";
import { exchange, harness, link, OWNER_ORIGIN, type Harness } from "../helpers/owner";
import { openDialogue, type Structured } from "./dialogue-harness";
import { ownerStack, ownerTool, type OwnerFetch } from "./owner-stack";

interface Row {
  readonly owner: boolean;
  readonly write: boolean;
  readonly dialogue: boolean;
  readonly replies: boolean;
  readonly receipts: boolean;
}

const ROWS: readonly Row[] = Array.from({ length: 32 }, (_, bits) => ({
  owner: (bits & 16) !== 0,
  write: (bits & 8) !== 0,
  dialogue: (bits & 4) !== 0,
  replies: (bits & 2) !== 0,
  receipts: (bits & 1) !== 0,
}));

const label = (row: Row) =>
  Object.entries(row)
    .map(([name, on]) => `${name}:${on ? "on" : "off"}`)
    .join(" ");

/** Core's flags for a row: "true" or absent, never anything else. */
function coreFlags(row: Row): Partial<Env> {
  const flag = (on: boolean) => (on ? "true" : undefined);
  return {
    OWNER_MCP_ENABLED: flag(row.owner),
    OWNER_MCP_WRITE_ENABLED: flag(row.write),
    DIALOGUE_ENABLED: flag(row.dialogue),
    DIALOGUE_REPLIES_ENABLED: flag(row.replies),
    DIALOGUE_READ_RECEIPTS_ENABLED: flag(row.receipts),
  };
}

/** What 06 §6 and 07 §1 say the owner server registers in a row, in `tools/list` order. */
function expectedTools(row: Row): string[] {
  const tools = ["owner_list_contacts", "owner_list_observed_goals"];
  if (row.write) tools.push("owner_save_draft", "owner_set_contact_state");
  if (row.write && row.dialogue && row.replies) tools.push("owner_publish_reply");
  if (row.write && row.dialogue) tools.push("owner_revoke_dialogue");
  return tools;
}

interface Session {
  readonly h: Harness;
  readonly token: string;
  /** A contact in an open dialogue. */
  readonly contactId: string;
  /** A new draft of that contact, published through the owner server with every flag on. */
  publishedDraft(text: string): Promise<string>;
}

let session: Promise<Session> | undefined;

/** One linked owner (all three scopes) and one dialogue, made by the first row that needs them. */
function sharedSession(): Promise<Session> {
  session ??= (async () => {
    const h = harness();
    h.time.now = Date.now();
    const tokens = await exchange(h, await link(h, { scope: "owner.read owner.write owner.publish" }));
    const token = tokens.access_token;
    const everything = ownerStack(h.env, { core: coreFlags({ owner: true, write: true, dialogue: true, replies: true, receipts: true }) });
    const { contactId } = await openDialogue("the flag matrix");
    const publishedDraft = async (text: string) => {
      const saved = await ownerTool(everything, token, "owner_save_draft", { contact_id: contactId, text });
      const draftId = saved.structured!.draft_id as string;
      const published = await ownerTool(everything, token, "owner_publish_reply", { draft_id: draftId, expected_revision: 1 });
      if (published.structured?.status !== "reply_published") throw new Error(`setup: ${published.text}`);
      return draftId;
    };
    return { h, token, contactId, publishedDraft };
  })();
  return session;
}

async function connect(stack: OwnerFetch, token: string): Promise<Client> {
  const client = new Client({ name: "owner-matrix", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  const fetch = (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    return stack(new Request(request, { headers }));
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${OWNER_ORIGIN}/mcp`), { fetch }));
  return client;
}

const draftRow = (draftId: string) => db().prepare("SELECT body, revision FROM owner_drafts WHERE draft_id = ?").bind(draftId).first();

describe("the owner server under every flag combination (06 §6, 07 §1, §4.1)", () => {
  it.each(ROWS.map((row) => [label(row), row] as const))("%s", async (_name, row) => {
    const { h, token, contactId, publishedDraft } = await sharedSession();
    // Each row its own published draft, so one row's outcome never shapes another's.
    const publishedText = `Published once, never changed (${label(row)}).`;
    const publishedDraftId = await publishedDraft(publishedText);
    const stack = ownerStack(h.env, { core: coreFlags(row) });

    if (!row.owner) {
      // Core's own OWNER_MCP_ENABLED wins: no owner server, no tool, nothing stored.
      const refused = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, draft_id: publishedDraftId, expected_revision: 1, text: "x" });
      expect(refused.status).toBe(404);
      expect(await draftRow(publishedDraftId)).toEqual({ body: publishedText, revision: 1 });
      return;
    }

    const client = await connect(stack, token);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const instructions = client.getInstructions() ?? "";
    await client.close();

    // Which tools exist.
    expect(tools).toEqual(expectedTools(row));
    const publishes = tools.includes("owner_publish_reply");

    // The instructions describe what this row allows, and nothing it does not.
    expect(instructions).toContain("visitor_content");
    if (publishes) {
      expect(instructions).toContain("owner_publish_reply");
      expect(instructions).toContain("cannot be changed");
      expect(instructions).not.toContain("nothing is ever sent or published");
    } else {
      expect(instructions).toContain("nothing is ever sent or published");
      expect(instructions).not.toContain("owner_publish_reply");
    }
    expect(/read receipts/i.test(instructions)).toBe(row.dialogue && row.receipts);

    // An unregistered publish tool is an unknown tool and stores nothing.
    const replies = await countRows("dialogue_replies");
    const publish = await ownerTool(stack, token, "owner_publish_reply", { draft_id: publishedDraftId, expected_revision: 1 });
    if (publishes) expect(publish.structured).toMatchObject({ status: "already_published", draft_id: publishedDraftId });
    else expect(publish.message?.error?.code).toBe(-32602);
    expect(await countRows("dialogue_replies")).toBe(replies);

    if (!row.write) {
      const save = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, draft_id: publishedDraftId, expected_revision: 1, text: "x" });
      expect(save.message?.error?.code).toBe(-32602);
      expect(await draftRow(publishedDraftId)).toEqual({ body: publishedText, revision: 1 });
      return;
    }

    // A published draft never changes, whatever the flags.
    const overPublished = await ownerTool(stack, token, "owner_save_draft", {
      contact_id: contactId,
      draft_id: publishedDraftId,
      expected_revision: 1,
      text: "rewritten while the dialogue flags were off",
    });
    expect(overPublished.structured).toMatchObject({ status: "draft_published" });
    expect(overPublished.isError).toBe(true);
    expect(await draftRow(publishedDraftId)).toEqual({ body: publishedText, revision: 1 });

    // An unpublished draft still saves, and a stale revision is still a conflict.
    const fresh = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, text: "a private draft" });
    const freshId = fresh.structured!.draft_id as string;
    const edited = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, draft_id: freshId, expected_revision: 1, text: "edited" });
    expect(edited.structured).toMatchObject({ status: "draft_saved", revision: 2 });
    const stale = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, draft_id: freshId, expected_revision: 1, text: "stale" });
    expect(stale.structured).toMatchObject({ status: "revision_conflict", current_revision: 2 });
  });
});

describe("owner_save_draft on a database without migration 0007 (B.1)", () => {
  it("no reply can exist there, so the update is the B.1 one: saved, then a conflict at a stale revision", async () => {
    const { h, token, contactId } = await sharedSession();
    const stack = ownerStack(h.env, { core: coreFlags({ owner: true, write: true, dialogue: false, replies: false, receipts: false }) });
    const fresh = (await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, text: "written in B.1" })).structured as Structured;
    // Hide the table as if 0007 had never been applied; this file's storage is its own (setup.ts).
    await db().exec("ALTER TABLE dialogue_replies RENAME TO dialogue_replies_hidden");
    try {
      const edited = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, draft_id: fresh.draft_id, expected_revision: 1, text: "edited in B.1" });
      expect(edited.structured).toMatchObject({ status: "draft_saved", revision: 2 });
      const stale = await ownerTool(stack, token, "owner_save_draft", { contact_id: contactId, draft_id: fresh.draft_id, expected_revision: 1, text: "stale" });
      expect(stale.structured).toMatchObject({ status: "revision_conflict", current_revision: 2 });
      expect(await draftRow(fresh.draft_id as string)).toEqual({ body: "edited in B.1", revision: 2 });
    } finally {
      await db().exec("ALTER TABLE dialogue_replies_hidden RENAME TO dialogue_replies");
    }
  });
});
