/**
 * The owner's terminal and his MCP client show one truth (issue 18 items 2
 * and 3), through the real local split deployment: `npm start -- --owner`
 * (gateway + core + owner gateway on one local D1, the generated `.dev.vars`
 * with the dialogue and read receipts on), the official MCP client v2 on the
 * visitor's and on the owner's side (its token from the Chromium consent,
 * `startOwnerStack`), and the built `magnt` CLI on the terminal side against
 * the same local database (`--config <the run's config> --persist-to <its
 * state>`, as `magnt flags … --owner` is run).
 *
 * - Triage: the state the owner sets with `owner_set_contact_state` is the
 *   state `magnt review contacts` shows (table at 80 columns and `--json`),
 *   and `--state` filters by it, exactly as `owner_list_contacts` does.
 * - Read marks: opening a contact with `magnt review contacts <short id>
 *   --owner` marks it read — the visitor's `fetch_contact_reply` shows
 *   `read_by_owner: true` — and `--no-mark-read` does not; the owner MCP sees
 *   the same first-read time.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { magnt, removeTempDirs } from "./helpers";
import { startOwnerStack, type OwnerStack } from "./owner-helpers";

type Structured = Record<string, any>;

let stack: OwnerStack;
let visitor: Client;
let owner: Client;
/**
 * Every `magnt review` here is one to four `wrangler d1 execute` processes; on a loaded machine each
 * takes many seconds, so the tests wait by progress (each step awaited), never by a clock.
 */
const STEP_TIMEOUT_MS = 900_000;

/** The run's config and `--persist-to` state, read from the command line `startOwnerStack` started (the helper as it is). */
let target: string[];
const contacts: { id: string; token: string }[] = [];

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return result.structuredContent as Structured;
}

/** `magnt <args>` against the split run's database; exit 0 asserted. */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  const run = await magnt([...args, ...target], { env, timeoutMs: STEP_TIMEOUT_MS });
  expect(run.code, run.stderr).toBe(0);
  return run;
}

function argAfter(argv: readonly string[], flag: string): string {
  const index = argv.indexOf(flag);
  expect(index, `${flag} in ${argv.join(" ")}`).toBeGreaterThan(-1);
  return argv[index + 1]!;
}

async function receiptOf(contact: { id: string; token: string }): Promise<Structured> {
  const answer = await call(visitor, "fetch_contact_reply", { contact_id: contact.id, dialogue_token: contact.token });
  return (answer.read_receipts as Structured[]).find((receipt) => receipt.contact_id === contact.id)!;
}

beforeAll(async () => {
  stack = await startOwnerStack();
  const argv = stack.door.child.spawnargs;
  target = ["--config", argAfter(argv, "--config"), "--persist-to", argAfter(argv, "--persist-to")];
  visitor = new Client({ name: "e2e-visitor", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  await visitor.connect(new StreamableHTTPClientTransport(new URL(stack.door.mcp)));
  for (const summary of ["first message for the terminal", "second message for the terminal"]) {
    const receipt = await call(visitor, "propose_contact", { submission_id: crypto.randomUUID(), summary, reply_to: "e2e@example.invalid" });
    expect(receipt).toMatchObject({ status: "accepted_for_human_review", dialogue: { status: "token_issued" } });
    contacts.push({ id: receipt.contact_id, token: receipt.dialogue.dialogue_token });
  }
  const { tokens } = await stack.linkWithScope("owner.read owner.write");
  owner = await stack.ownerClient(tokens.access_token);
}, 300_000);

afterAll(async () => {
  await visitor?.close();
  await owner?.close();
  await stack?.stop();
  removeTempDirs();
});

describe("magnt review and the owner MCP show one state, and reading is reading", () => {
  it("the state set with owner_set_contact_state is the state the terminal shows and filters by", { timeout: STEP_TIMEOUT_MS }, async () => {
    const [archived, pending] = contacts;
    expect(await call(owner, "owner_set_contact_state", { contact_id: archived!.id, state: "archived" })).toMatchObject({ status: "state_set", state: "archived" });

    const listed = await call(owner, "owner_list_contacts", {});
    const mcpState = new Map((listed.items as Structured[]).map((item) => [item.contact_id as string, item.state as string]));
    expect(mcpState.get(archived!.id)).toBe("archived");
    expect(mcpState.get(pending!.id)).toBe("pending");

    const json = JSON.parse((await cli(["review", "contacts", "--json"])).stdout) as Structured[];
    expect(new Map(json.map((row) => [row.contact_id as string, row.state as string]))).toEqual(mcpState);

    const table = await cli(["review", "contacts"], { COLUMNS: "80" });
    const lines = table.stdout.split("\n");
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(80);
    expect(lines.find((line) => line.includes(archived!.id.slice(0, 11)))).toMatch(/│ archived +│ first message/);
    expect(lines.find((line) => line.includes(pending!.id.slice(0, 11)))).toMatch(/│ pending +│ second message/);
    expect(lines.find((line) => line.includes("│ id "))).toMatch(/│ id +│ received +│ state +│ summary/);

    const filtered = JSON.parse((await cli(["review", "contacts", "--state", "archived", "--json"])).stdout) as Structured[];
    expect(filtered.map((row) => row.contact_id)).toEqual([archived!.id]);
  });

  it("--no-mark-read peeks: the visitor's read receipt stays unread", { timeout: STEP_TIMEOUT_MS }, async () => {
    const peeked = contacts[1]!;
    expect(await receiptOf(peeked)).toMatchObject({ read_by_owner: false, read_at: null });
    const run = await cli(["review", "contacts", peeked.id.slice(0, 11), "--owner", "--no-mark-read"]);
    expect(run.stdout).toContain(`contact_id:`);
    expect(run.stdout).toContain(peeked.id);
    expect(run.stderr).toContain("not marked read (--no-mark-read)");
    expect(await receiptOf(peeked)).toMatchObject({ read_by_owner: false, read_at: null });
  });

  it("opening a contact in full in the terminal marks it read, as the owner MCP's full view does", { timeout: STEP_TIMEOUT_MS }, async () => {
    const opened = contacts[0]!;
    expect(await receiptOf(opened)).toMatchObject({ read_by_owner: false, read_at: null });
    const run = await cli(["review", "contacts", opened.id.slice(0, 11), "--owner"]);
    expect(run.stdout).toMatch(/^state: +archived$/m);
    expect(run.stdout).toMatch(/^dialogue: +root$/m);
    expect(run.stderr).toMatch(/^marked read: the visitor/m);
    const receipt = await receiptOf(opened);
    expect(receipt).toMatchObject({ read_by_owner: true, read_at: expect.any(String) });

    // The same row: the terminal's record now shows the first read, and a second open keeps its time.
    const again = JSON.parse((await cli(["review", "contacts", opened.id, "--owner", "--json"])).stdout) as Structured;
    expect(again.dialogue.owner_read_at).toBe(receipt.read_at);
    expect(again.state).toBe("archived");
    expect((await receiptOf(opened)).read_at).toBe(receipt.read_at);
    // The peeked one is still unread, and a list never marks.
    await cli(["review", "contacts"]);
    expect(await receiptOf(contacts[1]!)).toMatchObject({ read_by_owner: false });
  });
});
