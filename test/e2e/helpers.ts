/**
 * End-to-end helpers: free ports, temp state directories, the built CLI run
 * as a child process (offline environment, stdin not a TTY), and local doors
 * started in their own process group so that a whole tree (npm → node →
 * wrangler → workerd) is stopped by one group signal.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
export const MAGNT_BIN = join(REPO_ROOT, "bin", "magnt.js");

/** The offline environment of every Wrangler call (00 §5), plus no colour for stable output. */
export const OFFLINE_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
};

/** A port that was free a moment ago (bound to 0, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const tempDirs: string[] = [];
/** A fresh temp directory (a `--persist-to` state dir or a config dir), removed by `removeTempDirs`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `magnt-e2e-${prefix}-`));
  tempDirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node bin/magnt.js …`) with stdin closed, so nothing can ever prompt. */
export function magnt(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAGNT_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...OFFLINE_ENV, ...(options.env ?? {}) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      killGroup(child, "SIGKILL");
      reject(new Error(`magnt ${args.join(" ")} did not finish within ${options.timeoutMs ?? 120_000} ms (a prompt?)\n${stderr}`));
    }, options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Parses stdout as JSON lines. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export interface Door {
  port: number;
  origin: string;
  mcp: string;
  child: ChildProcess;
  output(): string;
  /** Milliseconds from spawn until the probe answered 200. */
  readyAfterMs: number;
}

/** Every door started by this test file, so `stopAllDoors` can clean up even after a failed start. */
const startedDoors: ChildProcess[] = [];

/** The line `magnt dev` prints last, once everything answers (08 §13). */
export const READY_LINE = "stop: Ctrl-C";

/**
 * Starts a door with `command args` (the CLI's `dev`, or `npm start`) in its
 * own process group and waits until `/__magnt_probe` answers — or, with
 * `untilPrinted`, until that text appears in its output (`magnt dev`'s own
 * readiness announcement), without sending any request first.
 */
export async function startDoor(
  command: string,
  args: string[],
  port: number,
  options: { env?: NodeJS.ProcessEnv; readyTimeoutMs?: number; untilPrinted?: string } = {},
): Promise<Door> {
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { ...OFFLINE_ENV, ...(options.env ?? {}) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  startedDoors.push(child);
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = started + (options.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      killGroup(child, "SIGKILL");
      throw new Error(`door exited early (${child.exitCode ?? child.signalCode}):\n${output}`);
    }
    if (options.untilPrinted !== undefined) {
      if (output.includes(options.untilPrinted)) break;
    } else {
      try {
        const response = await fetch(`${origin}/__magnt_probe`, { signal: AbortSignal.timeout(1000) });
        if (response.status === 200) break;
      } catch {
        // not listening yet
      }
    }
    if (Date.now() > deadline) {
      killGroup(child, "SIGKILL");
      throw new Error(`door did not ${options.untilPrinted === undefined ? "answer the probe" : `print ${JSON.stringify(options.untilPrinted)}`} within ${options.readyTimeoutMs ?? 90_000} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return { port, origin, mcp: `${origin}/mcp`, child, output: () => output, readyAfterMs: Date.now() - started };
}

/**
 * Starts the door exactly as the README does (`npm start -- --port <port>`),
 * plus `--persist-to` so each suite has its own state. Uses the npm that runs
 * this suite (`npm run test:e2e`) when known.
 */
export function startDoorWithNpm(
  port: number,
  state: string,
  extraArgs: string[] = [],
  options: { env?: NodeJS.ProcessEnv; readyTimeoutMs?: number; untilPrinted?: string } = {},
): Promise<Door> {
  const npmCli = process.env.npm_execpath;
  const [command, prefix] = npmCli !== undefined && npmCli.endsWith(".js") ? [process.execPath, [npmCli]] : ["npm", []];
  return startDoor(command, [...prefix, "start", "--", "--port", String(port), "--persist-to", state, ...extraArgs], port, options);
}

/**
 * The text of wrangler.local.jsonc for a copy that lives outside the
 * repository: every path in it (`main`, `migrations_dir`, the module `alias`
 * targets) made absolute, since Wrangler resolves them against the config's
 * own folder.
 */
export function relocatedLocalConfigText(): string {
  const text = readFileSync(join(REPO_ROOT, "wrangler.local.jsonc"), "utf8")
    .replace('"main": "worker/entries/monolith.ts"', `"main": ${JSON.stringify(join(REPO_ROOT, "worker/entries/monolith.ts"))}`)
    .replace('"migrations_dir": "migrations"', `"migrations_dir": ${JSON.stringify(join(REPO_ROOT, "migrations"))}`)
    .replace(/("alias":\s*\{[^}]*\})/, (alias) => alias.replace(/:\s*"\.\/([^"]+)"/g, (_, target: string) => `: ${JSON.stringify(join(REPO_ROOT, target))}`));
  if (/"\.\//.test(text.replace(/"\$schema"[^\n]*/, ""))) throw new Error("wrangler.local.jsonc has a relative path the relocated copy does not rewrite");
  return text;
}

/**
 * A copy of wrangler.local.jsonc in `target` (so the `.dev.vars` next to it is
 * the suite's own), pointing back at the repository's code and migrations.
 */
export function writeTempLocalConfig(target: string): string {
  const path = join(target, "wrangler.local.jsonc");
  writeFileSync(path, relocatedLocalConfigText());
  return path;
}

/** Signals the child's whole process group (it was started detached, so its pid is the group id). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is already gone
  }
}

/** Stops every door this file started (SIGTERM to each group, SIGKILL after 5 s). */
export async function stopAllDoors(): Promise<void> {
  await Promise.all(startedDoors.splice(0).map((child) => stopChild(child)));
}

/** Stops one door: SIGTERM to its group, SIGKILL after 5 s. */
export async function stopDoor(door: Door | undefined): Promise<void> {
  if (door !== undefined) await stopChild(door.child);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  // Whatever is left in the group (workerd) goes too.
  killGroup(child, "SIGKILL");
}

/** Whether anything still accepts connections on the port. */
export async function portAnswers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/__magnt_probe`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls `probe` until it returns a value other than `undefined` (bounded: up to
 * `timeoutMs`, every `intervalMs`), so a suite waits for a condition instead of
 * a fixed sleep. Returns the value, or throws with `describe()` of the last state.
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number; describe?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`condition not met within ${options.timeoutMs ?? 10_000} ms${options.describe ? `: ${options.describe()}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}
