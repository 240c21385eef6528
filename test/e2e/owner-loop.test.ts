/**
 * The owner's whole loop in one command (issue 19 items 1, 2 and 4), as a
 * new owner runs it: a fresh local config with no `.dev.vars`, then `npm
 * start -- --owner` and nothing else — no stand-in started by hand, no line
 * written into any `.dev.vars`.
 *
 * - It announces readiness only once everything answers: the first public
 *   `tools/list` after the announcement is a 200 (never the 503 of a gateway
 *   whose binding to core is not connected yet), and so is the owner
 *   metadata; nothing is requested before the announcement.
 * - It prints the URLs, the client configurations, the cron pass of the port
 *   where the cron runs, where the Telegram stand-in's messages show, and how
 *   to stop.
 * - A contact left at the door, then the printed cron command, once: the
 *   Telegram stand-in receives exactly one message for it, shown in the run's
 *   own output.
 * - `magnt flags list --owner --json` lists the eight flags as an array.
 * - Canary: no generated value (key, client, id, bot token, chat id) appears
 *   anywhere in the run's stdout/stderr, nor in the `magnt flags` output.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDevVars } from "../../cli/lib/dev-vars";
import { GENERATED_MARKER, GENERATED_SECRETS } from "../../cli/lib/generated-dev-vars";
import { toolsListRequest } from "../../cli/lib/readiness";
import { freePort, magnt, READY_LINE, removeTempDirs, startDoorWithNpm, stopAllDoors, tempDir, waitFor, writeTempLocalConfig, type Door } from "./helpers";

let door: Door;
let config: string;
let state: string;
let ownerPort: number;
let generatedPath: string;
const outputs: string[] = [];

beforeAll(async () => {
  const dir = tempDir("loop");
  state = tempDir("loop-state");
  config = writeTempLocalConfig(dir);
  generatedPath = join(dir, ".wrangler", "magnt-dev-owner", ".dev.vars");
  expect(existsSync(join(dir, ".dev.vars"))).toBe(false);
  const port = await freePort();
  ownerPort = await freePort();
  door = await startDoorWithNpm(port, state, ["--owner", "--owner-port", String(ownerPort), "--config", config], { untilPrinted: READY_LINE, readyTimeoutMs: 240_000 });
}, 300_000);

afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

describe("npm start -- --owner on a fresh local config", () => {
  it("the first public tools/list after the announcement is 200, and so is the owner metadata", async () => {
    const response = await fetch(door.mcp, toolsListRequest());
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { tools: { name: string }[] } };
    expect(body.result.tools.map((tool) => tool.name)).toContain("propose_contact");
    const metadata = await fetch(`http://localhost:${ownerPort}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect(((await metadata.json()) as { issuer: string }).issuer).toBe(`http://localhost:${ownerPort}`);
  });

  it("nothing was requested of the door before the announcement but magnt dev's own readiness checks", () => {
    const before = door.output().slice(0, door.output().indexOf("MAGNT door:"));
    const requests = before.split("\n").filter((line) => line.includes('"event_type"') && line.includes('"path":"/mcp"'));
    expect(requests.length).toBeGreaterThan(0);
    for (const line of requests) expect(line).toContain('"controlled_test":true');
  });

  it("prints the URLs, the client configurations, the cron pass on core's port, where the stand-ins show, and how to stop", () => {
    const output = door.output();
    const doorOrigin = `http://localhost:${door.port}`;
    const owner = `http://localhost:${ownerPort}`;
    expect(output).toContain(`MAGNT door: ${doorOrigin}/ (MCP: ${doorOrigin}/mcp) — ready`);
    expect(output).toContain(`MAGNT owner: ${owner}/ (owner MCP: ${owner}/mcp, OAuth: ${owner}/.well-known/oauth-authorization-server)`);
    expect(output).toMatch(/one cron pass \(Telegram outbox; the cron runs on core, port (\d+)\): curl http:\/\/127\.0\.0\.1:\1\/cdn-cgi\/handler\/scheduled/);
    expect(output).toContain(`secrets and flags: ${generatedPath} (local-only values generated now, never printed;`);
    expect(output).toMatch(/GitHub: stand-in at http:\/\/127\.0\.0\.1:\d+, signs you in as the owner at once/);
    expect(output).toMatch(/Telegram: stand-in at http:\/\/127\.0\.0\.1:\d+; every message it receives shows here as "telegram stand-in:" lines/);
    expect(output).toContain(`claude mcp add --transport http magnt-owner ${owner}/mcp`);
    expect(output).toContain(`"magnt-owner":{"command":"npx","args":["-y","mcp-remote","${owner}/mcp"]}`);
    expect(output).toContain(`"servers":{"magnt-owner":{"type":"stdio","command":"npx","args":["-y","mcp-remote","${owner}/mcp"]}`);
    expect(output).toContain("stop: Ctrl-C (stops every process this run started)");
    expect(readFileSync(generatedPath, "utf8").split("\n")[0]).toBe(GENERATED_MARKER);
  });

  it("magnt flags list --owner --json: the eight flags, as an array", async () => {
    const run = await magnt(["flags", "list", "--owner", "--json", "--config", config, "--persist-to", state]);
    expect(run.code, run.stderr).toBe(0);
    outputs.push(run.stdout, run.stderr);
    const { flags } = JSON.parse(run.stdout) as { flags: { flag: string; state: string }[] };
    expect(Array.isArray(flags)).toBe(true);
    expect(flags).toHaveLength(8);
    expect(flags.filter((flag) => flag.state === "on").map((flag) => flag.flag)).toEqual([
      "TELEGRAM_NOTIFICATIONS_ENABLED",
      "OWNER_MCP_ENABLED",
      "OWNER_MCP_WRITE_ENABLED",
      "DIALOGUE_ENABLED",
      "DIALOGUE_REPLIES_ENABLED",
      "DIALOGUE_READ_RECEIPTS_ENABLED",
    ]);
  });

  it("a new contact, then the printed cron command once: the Telegram stand-in receives exactly one message for it", async () => {
    const client = new Client({ name: "e2e-owner-loop", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(door.mcp)));
    const result = await client.callTool({ name: "propose_contact", arguments: { submission_id: crypto.randomUUID(), summary: "Hello from the one-command loop" } });
    await client.close();
    const receipt = result.structuredContent as { status: string; contact_id: string };
    expect(receipt.status).toBe("accepted_for_human_review");

    const cron = /one cron pass \([^)]*\): curl (\S+)/.exec(door.output())![1]!;
    const pass = await fetch(cron);
    expect(pass.status).toBe(200);
    await pass.text();
    const messages = () => door.output().split("\n").filter((line) => line.startsWith("telegram stand-in: POST /bot<token>/sendMessage answered"));
    await waitFor(() => (messages().length > 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200, describe: () => door.output().slice(-3000) });
    expect(messages()).toEqual(["telegram stand-in: POST /bot<token>/sendMessage answered 200, message:"]);
    expect(door.output()).toContain(`telegram stand-in: | id: ${receipt.contact_id}`);
    expect(door.output()).toContain("telegram stand-in: | Hello from the one-command loop");
  });

  it("no generated value appears in the run's output or in magnt flags' output", () => {
    const values = parseDevVars(readFileSync(generatedPath, "utf8"));
    const everything = [door.output(), ...outputs].join("\n");
    for (const name of GENERATED_SECRETS) {
      const value = values.get(name);
      expect(value, name).toEqual(expect.any(String));
      expect(everything.includes(value!), `${name} appears in the output`).toBe(false);
    }
    expect(dirname(generatedPath)).not.toBe(dirname(config));
  });
});
