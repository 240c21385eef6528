/**
 * Owner notifications end to end, offline (issue 11 acceptance): a temporary
 * copy of the local config with its own `.dev.vars` (token, chat id and a
 * loopback stand-in Telegram — scripts/telegram-stand-in.mjs), flags switched
 * on with `magnt flags`, `npm start`, an official MCP client leaving contacts,
 * and cron passes through Wrangler's scheduled-handler URL. `magnt outbox
 * --json` reads the same local state while the door runs.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, killGroup, magnt, OFFLINE_ENV, READY_LINE, removeTempDirs, REPO_ROOT, startDoor, stopAllDoors, tempDir, writeTempLocalConfig, type Door } from "./helpers";

const TOKEN = `777000111:CANARYtoken${crypto.randomUUID().replaceAll("-", "")}`;
const CHAT_ID = `5${Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => byte % 10).join("")}`;
const canaries: string[] = [TOKEN, CHAT_ID];
const canary = (label: string) => {
  const value = `CANARY${label}${crypto.randomUUID().replaceAll("-", "")}`;
  canaries.push(value);
  return value;
};

let dir: string;
let state: string;
let config: string;
let door: Door;
let standIn: ChildProcess;
let standInLines: string[] = [];

function local(...args: string[]): string[] {
  return [...args, "--config", config, "--persist-to", state];
}

async function startStandIn(port: number, answers: string): Promise<void> {
  standIn = spawn(process.execPath, [join(REPO_ROOT, "scripts", "telegram-stand-in.mjs"), "--port", String(port), "--answers", answers], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let buffer = "";
  standIn.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    standInLines.push(...lines.filter((line) => line.trim() !== ""));
  });
  await new Promise<void>((resolve, reject) => {
    standIn.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      if (chunk.includes("listening")) resolve();
    });
    standIn.on("exit", (code) => reject(new Error(`stand-in exited with ${code}`)));
  });
}

interface StandInRequest {
  path: string;
  status: number;
  chat_id: unknown;
  text: string;
}
const received = (): StandInRequest[] => standInLines.map((line) => JSON.parse(line) as StandInRequest);

/** One cron pass, exactly as docs/notifications.md shows it (`curl …/cdn-cgi/handler/scheduled`). */
async function cronPass(): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${door.port}/cdn-cgi/handler/scheduled`);
  expect(response.status).toBe(200);
  await response.text();
}

/** Waits until the door's log shows `n` scheduled events (the handler's event is written when the run ends). */
async function scheduledEvents(n: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200; i += 1) {
    const events = door
      .output()
      .split("\n")
      .filter((line) => line.includes('"event_type":"scheduled"'))
      .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as Record<string, unknown>);
    if (events.length >= n) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`expected ${n} scheduled events:\n${door.output()}`);
}

async function leaveContact(fields: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: "e2e-notify", version: "2.4.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(door.mcp)));
  const result = await client.callTool({ name: "propose_contact", arguments: { submission_id: crypto.randomUUID(), ...fields } });
  await client.close();
  const receipt = result.structuredContent as { status: string; contact_id: string };
  expect(receipt.status).toBe("accepted_for_human_review");
  return receipt.contact_id;
}

interface OutboxJson {
  state: { activated_at: string; chat_pinned: boolean } | null;
  counts: Record<string, number>;
  rows: { source_id: string; state: string; attempts: number; last_error_code: string | null; next_attempt_at: string; telegram_message_id: number | null }[];
}

async function outbox(): Promise<OutboxJson> {
  const run = await magnt(local("outbox", "--json", "--quiet"));
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as OutboxJson;
}

/** Moves a waiting row's next attempt to now (stands in for waiting out the 60 s retry delay of 05 §4). */
async function fastForwardRetry(contactId: string): Promise<void> {
  const wrangler = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");
  const sql = `UPDATE notification_outbox SET next_attempt_at = '${new Date().toISOString()}' WHERE source_id = '${contactId}' AND state = 'retry_wait'`;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [wrangler, "d1", "execute", "CONTACTS", "--local", ...local("--command", sql)], {
      cwd: REPO_ROOT,
      env: OFFLINE_ENV,
      stdio: "ignore",
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`wrangler d1 execute exited ${code}`))));
  });
}

beforeAll(async () => {
  dir = tempDir("notify");
  state = tempDir("notify-state");
  config = writeTempLocalConfig(dir);
  const standInPort = await freePort();
  // 1st send ok; then 429 (retry_after 1), 500, ok for the retry scenario; everything after: ok.
  await startStandIn(standInPort, "ok,429:1,500,ok");

  // Flags before anything exists: refused, nothing written.
  const refused = await magnt(local("flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"));
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("0004_owner_notifications.sql");
  expect((await magnt(local("migrate", "--quiet"))).code).toBe(0);
  writeFileSync(
    join(dir, ".dev.vars"),
    `# e2e only\nTELEGRAM_BOT_TOKEN=${TOKEN}\nTELEGRAM_OWNER_CHAT_ID=${CHAT_ID}\nTELEGRAM_API_ORIGIN=http://127.0.0.1:${standInPort}\n`,
    { mode: 0o600 },
  );
  const enabled = await magnt(local("flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--yes"));
  expect(enabled.code, enabled.stderr).toBe(0);

  const port = await freePort();
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli !== undefined && npmCli.endsWith(".js") ? [process.execPath, [npmCli]] : ["npm", []];
  door = await startDoor(command, [...prefix, "start", "--", "--port", String(port), "--config", config, "--persist-to", state], port, { untilPrinted: READY_LINE });
});

afterAll(async () => {
  await stopAllDoors();
  if (standIn !== undefined) killGroup(standIn, "SIGKILL");
  removeTempDirs();
});

describe("Telegram notifications through npm start and a stand-in", () => {
  it("magnt dev prints how to run one cron pass, on the port where the cron runs", () => {
    expect(door.output()).toContain(`one cron pass (Telegram outbox, runs on this door, port ${door.port}):\n  curl http://127.0.0.1:${door.port}/cdn-cgi/handler/scheduled\n`);
  });

  it("one pass delivers exactly one message for a new contact, a second pass sends nothing; earlier and test contacts never", async () => {
    const beforeActivation = await leaveContact({ summary: canary("early") });
    await cronPass();
    const [pin] = await scheduledEvents(1);
    expect(pin).toMatchObject({ outcome: "ok", discovered: 0, delivered: 0 });
    const activated = await outbox();
    expect(activated.state).toMatchObject({ chat_pinned: true });

    const summary = canary("summary");
    const contactId = await leaveContact({ summary, reply_to: canary("replyto"), operator: canary("operator") });
    const testContact = await leaveContact({ summary: canary("test"), is_test: true });
    await cronPass();
    expect((await scheduledEvents(2))[1]).toMatchObject({ outcome: "ok", discovered: 1, delivered: 1 });
    await cronPass();
    expect((await scheduledEvents(3))[2]).toMatchObject({ outcome: "ok", discovered: 0, attempted: 0 });

    const requests = received();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ path: "/bot<token>/sendMessage", status: 200, chat_id: Number(CHAT_ID) });
    expect(requests[0]!.text).toContain(`id: ${contactId}`);
    expect(requests[0]!.text).toContain(`read: magnt review contacts ${contactId}`);
    expect(requests[0]!.text).toContain(summary);

    const report = await outbox();
    expect(report.counts.delivered).toBe(1);
    expect(report.rows.map((row) => row.source_id)).toEqual([contactId]);
    expect(report.rows[0]).toMatchObject({ state: "delivered", attempts: 1, telegram_message_id: 1 });
    expect(report.rows.some((row) => row.source_id === beforeActivation || row.source_id === testContact)).toBe(false);
  });

  it("429 with retry_after, then 500, then success: exactly one delivered message, the contact intact", async () => {
    const summary = canary("retry");
    const contactId = await leaveContact({ summary });
    const sent = received().length;

    await cronPass();
    let events = await scheduledEvents(4);
    expect(events[3]).toMatchObject({ attempted: 1, retried: 1 });
    expect((await outbox()).rows.find((row) => row.source_id === contactId)).toMatchObject({ state: "retry_wait", last_error_code: "http_429" });

    // Until retry_after (1 s) has passed, a pass is in backoff or finds nothing due; then the 500 arrives.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await cronPass();
    events = await scheduledEvents(5);
    expect(events[4]).toMatchObject({ attempted: 1, retried: 1 });
    const waiting = (await outbox()).rows.find((row) => row.source_id === contactId)!;
    expect(waiting).toMatchObject({ state: "retry_wait", attempts: 2, last_error_code: "http_5xx" });
    expect(Date.parse(waiting.next_attempt_at)).toBeGreaterThan(Date.now() + 30_000);

    await cronPass();
    expect((await scheduledEvents(6))[5]).toMatchObject({ attempted: 0 });
    await fastForwardRetry(contactId);
    await cronPass();
    expect((await scheduledEvents(7))[6]).toMatchObject({ attempted: 1, delivered: 1 });

    const requests = received().slice(sent);
    expect(requests.map((request) => request.status)).toEqual([429, 500, 200]);
    expect(requests.filter((request) => request.status === 200)).toHaveLength(1);
    expect((await outbox()).rows.find((row) => row.source_id === contactId)).toMatchObject({ state: "delivered", attempts: 3, last_error_code: null });

    const review = await magnt(local("review", "contacts", contactId, "--json", "--quiet"));
    expect(review.code).toBe(0);
    expect(JSON.parse(review.stdout)).toMatchObject({ contact_id: contactId, summary });
  });

  it("overlapping passes never deliver twice", async () => {
    const contactId = await leaveContact({ summary: canary("overlap") });
    const sent = received().length;
    await Promise.all([cronPass(), cronPass(), cronPass()]);
    const events = (await scheduledEvents(10)).slice(7);
    expect(events.reduce((sum, event) => sum + Number(event.delivered), 0)).toBe(1);
    expect(received().slice(sent)).toHaveLength(1);
    expect((await outbox()).rows.find((row) => row.source_id === contactId)).toMatchObject({ state: "delivered", attempts: 1 });
  });

  it("no line of the door's log carries the token, the chat id or any visitor text", () => {
    const log = door.output();
    for (const value of canaries) expect(log).not.toContain(value);
    expect(log).not.toContain(TOKEN.split(":")[1]!);
  });
});
