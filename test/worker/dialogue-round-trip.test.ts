/**
 * The C.1 round trip through the real owner MCP server (worker/mcp/owner-server.ts,
 * served by `serveOwnerMcp` with the SDK's per-tool scope challenges) and the
 * real public door, with the official v2 client on both sides: a visitor leaves
 * a message and gets a `dt_` token; the owner drafts and publishes two replies;
 * two fetches return them one at a time, oldest first; the third says none
 * pending; a delivered reply is re-read by `reply_id`; read receipts on both
 * sides; a token without `owner.publish` gets the 403 challenge and changes
 * nothing. (Token verification in core is covered by the split suites; here the
 * verified identity is handed to `serveOwnerMcp` as core hands it.)
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../worker/config/env";
import { createDoor, textRejections, type Route } from "../../worker/edge/pipeline";
import { mcpRejections } from "../../worker/mcp/http";
import { serveOwnerMcp } from "../../worker/mcp/owner-server";
import { captureConsole, doorEnv } from "../helpers/door";
import { countRows } from "../helpers/db";
import { fetchReply, openDialogue, RECEIPTS_ON, type Structured } from "./dialogue-harness";

const OWNER_ORIGIN = "https://owner.magnt.ru";
const OWNER_FLAGS = { ...RECEIPTS_ON, OWNER_MCP_ENABLED: "true", OWNER_MCP_WRITE_ENABLED: "true", DIALOGUE_REPLIES_ENABLED: "true" };

/** The owner server as core serves it, for a token with `scopes`. */
async function ownerClient(scopes: readonly string[], overrides: Partial<Record<keyof Env, unknown>> = OWNER_FLAGS) {
  const authInfo: AuthInfo = {
    token: "verified-by-core",
    clientId: "test-client",
    scopes: [...scopes],
    expiresAt: Math.floor(Date.now() / 1000) + 600,
    resource: new URL(`${OWNER_ORIGIN}/mcp`),
  };
  const route: Route = {
    eventType: "owner_mcp_request",
    checkOrigin: false,
    methods: { POST: (req) => serveOwnerMcp(req, { authInfo, writeEnabled: true, ownerOrigin: OWNER_ORIGIN }) },
    ...mcpRejections,
  };
  const door = createDoor("core", (path) => (path === "/mcp" ? route : { ...route, methods: {}, ...textRejections }));
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const ctx = createExecutionContext();
    const response = await door.fetch(new Request(input, init), doorEnv(overrides), ctx);
    await waitOnExecutionContext(ctx);
    return response;
  };
  const client = new Client({ name: "owner-test", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL("https://magnt.ru/mcp"), { fetch }));
  return { client, fetch };
}

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  return result.structuredContent as Structured;
}

describe("dialogue round trip through the owner server (07 §4–§6)", () => {
  it("visitor token → owner drafts and publishes two replies → two fetches, oldest first → none pending → re-read → read receipts", async () => {
    const logs = captureConsole();
    const visitor = await openDialogue("Hello Alexander, may we talk?");
    expect(visitor.token).toMatch(/^dt_/);

    const { client } = await ownerClient(["owner.read", "owner.write", "owner.publish"]);
    const names = (await client.listTools()).tools.map((entry) => entry.name);
    expect(names).toEqual([
      "owner_list_contacts",
      "owner_list_observed_goals",
      "owner_save_draft",
      "owner_set_contact_state",
      "owner_publish_reply",
      "owner_revoke_dialogue",
    ]);
    expect(client.getInstructions()).toContain("owner_publish_reply");

    const published: string[] = [];
    for (const text of ["First reply from Alexander.", "Second reply from Alexander."]) {
      const draft = await tool(client, "owner_save_draft", { contact_id: visitor.contactId, text });
      expect(draft.status).toBe("draft_saved");
      const reply = await tool(client, "owner_publish_reply", { draft_id: draft.draft_id, expected_revision: draft.revision });
      expect(reply.status).toBe("reply_published");
      published.push(reply.reply_id as string);
      // A published draft is immutable.
      const edit = await tool(client, "owner_save_draft", {
        contact_id: visitor.contactId, draft_id: draft.draft_id, expected_revision: draft.revision, text: "changed",
      });
      expect(edit.status).toBe("draft_published");
    }

    const first = (await fetchReply({ contact_id: visitor.contactId, dialogue_token: visitor.token }, OWNER_FLAGS)).structured!;
    const second = (await fetchReply({ contact_id: visitor.contactId, dialogue_token: visitor.token }, OWNER_FLAGS)).structured!;
    const third = (await fetchReply({ contact_id: visitor.contactId, dialogue_token: visitor.token }, OWNER_FLAGS)).structured!;
    expect([first.status, second.status, third.status]).toEqual(["reply_delivered", "reply_delivered", "no_reply_pending"]);
    expect([first.reply.reply_id, second.reply.reply_id]).toEqual(published);
    expect(first.reply.text).toBe("First reply from Alexander.");
    const again = (await fetchReply({ contact_id: visitor.contactId, dialogue_token: visitor.token, reply_id: published[0] }, OWNER_FLAGS)).structured!;
    expect(again.reply).toMatchObject({ reply_id: published[0], text: "First reply from Alexander." });

    // The owner sees when each reply was fetched; a listing does not mark the contact read…
    const listed = await tool(client, "owner_list_contacts", { include_tests: true });
    const item = (listed.items as Structured[]).find((entry) => entry.contact_id === visitor.contactId)!;
    expect(item.dialogue.replies.map((reply: Structured) => typeof reply.fetched_at)).toEqual(["string", "string"]);
    expect(item.drafts.map((draft: Structured) => draft.published_reply_id).sort()).toEqual([...published].sort());
    const beforeRead = (await fetchReply({ contact_id: visitor.contactId, dialogue_token: visitor.token }, OWNER_FLAGS)).structured!;
    expect(beforeRead.read_receipts).toEqual([expect.objectContaining({ contact_id: visitor.contactId, read_by_owner: false, read_at: null })]);
    // …opening that one contact in full does.
    await tool(client, "owner_list_contacts", { contact_id: visitor.contactId, detail: "full" });
    const afterRead = (await fetchReply({ contact_id: visitor.contactId, dialogue_token: visitor.token }, OWNER_FLAGS)).structured!;
    expect(afterRead.read_receipts).toEqual([
      expect.objectContaining({ contact_id: visitor.contactId, read_by_owner: true, read_at: expect.any(String) }),
    ]);

    // Tokens and reply text never reach a log line.
    const lines = logs.lines().join("\n");
    expect(lines).not.toContain(visitor.token);
    expect(lines).not.toContain("First reply from Alexander.");
    await client.close();
  });

  it("a token without owner.publish gets the 403 challenge and nothing is published", async () => {
    const visitor = await openDialogue("Another message");
    const writer = await ownerClient(["owner.read", "owner.write", "owner.publish"]);
    const draft = await tool(writer.client, "owner_save_draft", { contact_id: visitor.contactId, text: "Not to be published" });
    const before = await countRows("dialogue_replies");
    const { fetch } = await ownerClient(["owner.read", "owner.write"]);
    const response = await fetch("https://magnt.ru/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "owner_publish_reply",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "owner_publish_reply",
          arguments: { draft_id: draft.draft_id, expected_revision: 1 },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate") ?? "").toContain('error="insufficient_scope"');
    expect(response.headers.get("www-authenticate") ?? "").toContain("owner.publish");
    expect(await countRows("dialogue_replies")).toBe(before);
    await writer.client.close();
  });

  it("with DIALOGUE_REPLIES_ENABLED off, the publish tool is not registered and the instructions promise no publication", async () => {
    const { client } = await ownerClient(["owner.read", "owner.write", "owner.publish"], { ...OWNER_FLAGS, DIALOGUE_REPLIES_ENABLED: undefined });
    const names = (await client.listTools()).tools.map((entry) => entry.name);
    expect(names).not.toContain("owner_publish_reply");
    expect(client.getInstructions()).toContain("nothing is ever sent or published");
    await client.close();
  });
});
