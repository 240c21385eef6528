/**
 * Running the CLI in-process for the node suites: captured stdout/stderr, a
 * chosen TTY state, and a fake Wrangler behind `child_process.spawn`.
 *
 * Each test file mocks `node:child_process` itself (vi.mock is per file) with
 * `spawn: vi.fn()`; `installFakeWrangler` then scripts that mock. The fake
 * child is what the real CLI code sees: stdout/stderr streams, `kill`, and
 * `close`/`exit` events.
 */
import { EventEmitter } from "node:events";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Mock } from "vitest";
import type { CliContext } from "../../cli/lib/context";
import { runCli } from "../../cli/program";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout split into non-empty lines. */
  lines: string[];
  /** The last stdout line parsed as JSON (the `--json` error object on failure). */
  lastJson(): unknown;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  tty?: boolean;
  timeouts?: { local: number; remote: number };
  signals?: EventEmitter;
  /** Called with each stdout chunk as it is written (to see what was printed when). */
  onStdout?: (chunk: string) => void;
  /** `magnt dev`'s readiness limit (ms). */
  devReadyTimeoutMs?: number;
}

/** Runs `magnt <argv>` in-process. */
export async function runMagnt(argv: string[], options: RunOptions = {}): Promise<Captured> {
  let stdout = "";
  let stderr = "";
  const tty = options.tty ?? false;
  const signals = options.signals ?? new EventEmitter();
  const ctx: CliContext = {
    stdout: {
      write: (chunk: string) => {
        stdout += chunk;
        options.onStdout?.(chunk);
        return true;
      },
      isTTY: tty,
    },
    stderr: { write: (chunk: string) => (stderr += chunk), isTTY: tty },
    stdin: { isTTY: tty },
    env: { PATH: process.env.PATH, ...(options.env ?? {}) },
    cwd: options.cwd ?? REPO_ROOT,
    wranglerTimeoutMs: options.timeouts ?? { local: 60_000, remote: 120_000 },
    signals: {
      on: (signal, listener) => signals.on(signal, listener),
      off: (signal, listener) => signals.off(signal, listener),
    },
    ...(options.devReadyTimeoutMs === undefined ? {} : { devReadyTimeoutMs: options.devReadyTimeoutMs }),
  };
  const code = await runCli(argv, ctx);
  const lines = stdout.split("\n").filter((line) => line.trim() !== "");
  return { code, stdout, stderr, lines, lastJson: () => JSON.parse(lines.at(-1) ?? "null") as unknown };
}

/** What the fake Wrangler answers for one invocation. */
export interface FakeAnswer {
  code?: number;
  stdout?: string;
  stderr?: string;
  /** Never exit on its own (for time-limit and signal tests). */
  hang?: boolean;
  /** Run when the child starts (a fake `wrangler dev` that listens, say); what it returns runs when the child ends. */
  started?: () => () => void;
}

export interface SpawnCall {
  command: string;
  /** argv after `bin/wrangler.js`. */
  args: string[];
  /** The script path (first argv element). */
  script: string;
  options: { shell?: boolean; env?: NodeJS.ProcessEnv; stdio?: unknown; cwd?: string };
}

export interface FakeChild extends EventEmitter {
  stdout: PassThrough;
  stderr: PassThrough;
  killedWith: NodeJS.Signals[];
  kill(signal?: NodeJS.Signals): boolean;
}

/**
 * Scripts the mocked `spawn`: `answer` is called with Wrangler's argv and
 * returns what the child does. Returns the recorded calls and children.
 */
export function installFakeWrangler(spawnMock: Mock, answer: (args: string[], call: SpawnCall) => FakeAnswer): { calls: SpawnCall[]; children: FakeChild[] } {
  const calls: SpawnCall[] = [];
  const children: FakeChild[] = [];
  spawnMock.mockReset();
  spawnMock.mockImplementation((command: string, argv: string[], options: SpawnCall["options"]) => {
    const [script = "", ...args] = argv;
    const call: SpawnCall = { command, script, args, options };
    calls.push(call);
    const child = new EventEmitter() as FakeChild;
    child.stdout = new PassThrough();
    child.stderr = new PassThrough();
    child.killedWith = [];
    let done = false;
    let cleanUp: (() => void) | undefined;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (done) return;
      done = true;
      cleanUp?.();
      child.stdout.end();
      child.stderr.end();
      setImmediate(() => {
        child.emit("exit", code, signal);
        child.emit("close", code, signal);
      });
    };
    child.kill = (signal: NodeJS.Signals = "SIGTERM") => {
      child.killedWith.push(signal);
      finish(null, signal);
      return true;
    };
    children.push(child);
    const reply = answer(args, call);
    cleanUp = reply.started?.();
    setImmediate(() => {
      if (reply.stdout !== undefined) child.stdout.write(reply.stdout);
      if (reply.stderr !== undefined) child.stderr.write(reply.stderr);
      if (reply.hang !== true) finish(reply.code ?? 0, null);
    });
    return child;
  });
  return { calls, children };
}

/** `d1 execute --json` success output for one statement. */
export function d1Rows(rows: Record<string, unknown>[]): FakeAnswer {
  return { code: 0, stdout: JSON.stringify([{ results: rows, success: true, meta: { duration: 0 } }], null, 2) };
}

/** `d1 execute --json` failure output (exit 1, blank line, error object). */
export function d1Error(text: string): FakeAnswer {
  return { code: 1, stdout: `\n${JSON.stringify({ error: { text } }, null, 2)}` };
}

/** The `--command` SQL of a `d1 execute` argv. */
export function sqlOf(args: string[]): string | undefined {
  const index = args.indexOf("--command");
  return index === -1 ? undefined : args[index + 1];
}

/**
 * A temp project: the local and production configs and the migrations copied
 * from the repository, so tests can edit them. `realId` replaces the
 * production placeholder with a real-looking id.
 */
export function tempProject(options: { realId?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "magnt-cli-"));
  for (const file of ["wrangler.jsonc", "wrangler.local.jsonc"]) cpSync(join(REPO_ROOT, file), join(dir, file));
  cpSync(join(REPO_ROOT, "migrations"), join(dir, "migrations"), { recursive: true });
  if (options.realId === true) {
    const path = join(dir, "wrangler.jsonc");
    writeFileSync(path, readFileSync(path, "utf8").replace("00000000-0000-0000-0000-000000000000", "3f2a8c1e-5b7d-4e9f-a1c3-5d7e9f1a3b5c"));
  }
  return dir;
}

/** The migration file names of the repository, sorted. */
export function repoMigrationNames(): string[] {
  return Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, "migrations", "checksums.json"), "utf8")) as Record<string, string>).sort();
}
