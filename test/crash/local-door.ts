/**
 * The real local door on its own state, for the suites that crash and restart
 * it (`npm run test:crash`) or drive its cron under load (test/e2e/cron-overlap).
 *
 * - A temp copy of wrangler.local.jsonc (so its `.dev.vars` — bot token, chat
 *   id, `TELEGRAM_API_ORIGIN` of a loopback stand-in, the flags — is the
 *   suite's own) and a temp `--persist-to` state directory.
 * - Started exactly as the README starts it, `npm start -- --port … --config …
 *   --persist-to …`, in its own process group (npm → node magnt → node
 *   wrangler → workerd), so one group signal reaches the whole tree.
 * - `kill()` sends SIGKILL to the group and returns only once no process of the
 *   group is alive (zombies aside), so nothing of the old door can still write
 *   when the suite reads the state or restarts on it.
 * - D1 is read through `wrangler d1 execute --local --persist-to` (async, so an
 *   in-process stand-in keeps answering meanwhile).
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ScheduledEvent } from "../../worker/contracts/events";
import { freePort, killGroup, magnt, OFFLINE_ENV, REPO_ROOT, startDoor, stopDoor, tempDir, writeTempLocalConfig, type CliRun, type Door } from "../e2e/helpers";

/** A bot token and chat id of the Bot API's shapes; only the stand-in ever sees them. */
export const STAND_IN_TOKEN = "777000111:CRASHtestTOKEN";
export const STAND_IN_CHAT_ID = "5550001112";

/** Bounded waits, generous for a loaded 2-core machine: they stop a hang, never measure speed. */
const READY_TIMEOUT_MS = 240_000;
const GONE_TIMEOUT_MS = 30_000;
const D1_TIMEOUT_MS = 180_000;

export class LocalDoor {
  readonly dir: string;
  readonly state: string;
  readonly config: string;
  port = 0;
  door: Door | undefined;
  /** The output of every start so far (one entry per process group). */
  readonly outputs: Array<() => string> = [];

  private constructor(label: string) {
    this.dir = tempDir(label);
    this.state = tempDir(`${label}-state`);
    this.config = writeTempLocalConfig(this.dir);
  }

  /**
   * `.dev.vars` with the stand-in's origin and the flags. With `flagsVia:
   * "cli"` (the default) the state is migrated first and each flag goes
   * through `magnt flags enable`, as an operator does it; `"dev-vars"` writes
   * the flag lines directly and leaves the migrations to `npm start` — the same
   * file content, without the ≈ 10 s of Wrangler per flag on a loaded machine
   * (the CLI path has its own suites: test/e2e/flags, notify).
   */
  static async prepare(label: string, options: { telegramApiOrigin: string; flags: readonly string[]; flagsVia?: "cli" | "dev-vars" }): Promise<LocalDoor> {
    const local = new LocalDoor(label);
    const viaCli = (options.flagsVia ?? "cli") === "cli";
    if (viaCli) await local.cli("migrate", "--quiet");
    const flagLines = viaCli ? "" : options.flags.map((flag) => `${flag}=true\n`).join("");
    writeFileSync(
      join(local.dir, ".dev.vars"),
      `# ${label} only\nTELEGRAM_BOT_TOKEN=${STAND_IN_TOKEN}\nTELEGRAM_OWNER_CHAT_ID=${STAND_IN_CHAT_ID}\nTELEGRAM_API_ORIGIN=${options.telegramApiOrigin}\n${flagLines}`,
      { mode: 0o600 },
    );
    if (viaCli) for (const flag of options.flags) await local.cli("flags", "enable", flag, "--yes");
    local.port = await freePort();
    return local;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get mcp(): string {
    return `${this.origin}/mcp`;
  }

  /** `magnt <args> --config <copy> --persist-to <state>`; throws unless it exits 0. */
  async cli(...args: string[]): Promise<CliRun> {
    const run = await this.cliRun(...args);
    if (run.code !== 0) throw new Error(`magnt ${args.join(" ")} exited ${run.code}:\n${run.stderr}`);
    return run;
  }

  /** `magnt <args> --config <copy> --persist-to <state>`, whatever its exit code. */
  cliRun(...args: string[]): Promise<CliRun> {
    return magnt([...args, "--config", this.config, "--persist-to", this.state], { timeoutMs: D1_TIMEOUT_MS });
  }

  /** `npm start` on the same port and state; resolves when the probe answers 200. */
  async start(): Promise<Door> {
    const npmCli = process.env.npm_execpath;
    const [command, prefix] = npmCli !== undefined && npmCli.endsWith(".js") ? [process.execPath, [npmCli]] : ["npm", []];
    this.door = await startDoor(command, [...prefix, "start", "--", "--port", String(this.port), "--config", this.config, "--persist-to", this.state], this.port, {
      readyTimeoutMs: READY_TIMEOUT_MS,
    });
    this.outputs.push(this.door.output);
    return this.door;
  }

  /** SIGKILL to the whole process group; returns once none of its processes is alive. */
  async kill(): Promise<void> {
    const door = this.door;
    if (door === undefined) return;
    this.door = undefined;
    killGroup(door.child, "SIGKILL");
    const deadline = Date.now() + GONE_TIMEOUT_MS;
    while (liveGroupMembers(door.child.pid!).length > 0 || (door.child.exitCode === null && door.child.signalCode === null)) {
      if (Date.now() > deadline) throw new Error(`process group ${door.child.pid} still alive ${GONE_TIMEOUT_MS} ms after SIGKILL: ${liveGroupMembers(door.child.pid!).join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The normal stop (SIGTERM to the group, SIGKILL after 5 s), as Ctrl-C would. */
  async stop(): Promise<void> {
    const door = this.door;
    this.door = undefined;
    await stopDoor(door);
  }

  /**
   * One cron pass through Wrangler's scheduled-handler URL. `time` (ms) sets
   * the controller's `scheduledTime` — a minute-0 time runs the hourly cleanup;
   * the run itself always uses the real clock. Resolves with the HTTP status, or
   * "network_error" when the door is down or dies during the pass.
   */
  async cronPass(time?: number): Promise<string> {
    const query = `cron=${encodeURIComponent("* * * * *")}${time === undefined ? "" : `&time=${time}`}`;
    try {
      const response = await fetch(`${this.origin}/cdn-cgi/handler/scheduled?${query}`, { signal: AbortSignal.timeout(120_000) });
      await response.text();
      return String(response.status);
    } catch {
      return "network_error";
    }
  }

  /** Every `scheduled` event line the door has logged, over all its starts. */
  scheduledEvents(): ScheduledEvent[] {
    return this.outputs.flatMap((output) =>
      output()
        .split("\n")
        .filter((line) => line.includes('"event_type":"scheduled"'))
        .map((line) => JSON.parse(line.slice(line.indexOf("{"))) as ScheduledEvent),
    );
  }

  /** Rows of one SQL statement on the local D1 (`wrangler d1 execute --local --json`). */
  async d1(sql: string): Promise<Record<string, unknown>[]> {
    const [rows] = await this.d1Statements([sql]);
    return rows ?? [];
  }

  /** The rows of each statement, in order, from one `wrangler d1 execute` (each call costs seconds on a loaded machine). */
  d1Statements(statements: readonly string[]): Promise<Record<string, unknown>[][]> {
    const sql = statements.map((statement) => statement.trim().replace(/;$/, "")).join(";\n");
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [wranglerBin(), "d1", "execute", "CONTACTS", "--local", "--config", this.config, "--persist-to", this.state, "--json", "--command", sql], {
        cwd: REPO_ROOT,
        env: OFFLINE_ENV,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill("SIGKILL"), D1_TIMEOUT_MS);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        if (code !== 0) {
          reject(new Error(`wrangler d1 execute exited ${code}: ${stderr.slice(0, 2000)}`));
          return;
        }
        try {
          const results = (JSON.parse(stdout) as Array<{ results: Record<string, unknown>[] }>).map((entry) => entry.results);
          if (results.length !== statements.length) throw new Error(`wrangler d1 execute answered ${results.length} results for ${statements.length} statements`);
          resolve(results);
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
  }
}

function wranglerBin(): string {
  return join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");
}

/** Pids of the group's processes that are still alive (not zombies), read from /proc. */
export function liveGroupMembers(groupId: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid pgrp …; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === groupId && fields[0] !== "Z" && fields[0] !== "X") live.push(Number(entry));
  }
  return live;
}
