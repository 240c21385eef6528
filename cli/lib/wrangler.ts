/**
 * Running Wrangler (08 §4): always `process.execPath` + the resolved
 * `wrangler/bin/wrangler.js`, `shell: false`, never npx or the `.bin` shim
 * (those pick whatever `node` is first on PATH and go through a shell), with
 * the offline environment, a time limit, and stderr forwarded unless `--quiet`.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { CliContext } from "./context";
import { EnvironmentError } from "./errors";

/** The environment every Wrangler child gets on top of the parent's (00 §5). */
export const WRANGLER_OFFLINE_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
} as const;

export type TargetMode = "local" | "remote";

/** Resolves `wrangler/bin/wrangler.js` next to the CLI; missing → exit 3 "run npm ci". */
export function resolveWranglerBin(): string {
  try {
    const require = createRequire(import.meta.url);
    return join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");
  } catch {
    throw new EnvironmentError("Wrangler is not installed next to the CLI: run npm ci");
  }
}

/**
 * The child environment: the parent's plus the offline switches, plus `CI=1`
 * for commands Wrangler would otherwise confirm interactively.
 */
export function wranglerEnv(parent: Readonly<Record<string, string | undefined>>, nonInteractive: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...parent, ...WRANGLER_OFFLINE_ENV };
  if (nonInteractive) env.CI = "1";
  return env;
}

/** Spawns Wrangler the one allowed way. Every other function here goes through this. */
export function spawnWrangler(
  ctx: CliContext,
  args: readonly string[],
  options: { stdio: StdioOptions; nonInteractive: boolean },
): ChildProcess {
  const bin = resolveWranglerBin();
  return spawn(process.execPath, [bin, ...args], {
    cwd: ctx.cwd,
    env: wranglerEnv(ctx.env, options.nonInteractive),
    stdio: options.stdio,
    shell: false,
    windowsHide: true,
  });
}

export interface WranglerRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one Wrangler command to completion and captures its stdout. Its stderr
 * is captured and, unless `quiet`, forwarded to ours (stdout is never
 * forwarded: in `--json` mode only the CLI writes to stdout). On the time
 * limit the child is killed (SIGTERM, then SIGKILL) and the call fails with exit 3.
 * With `input`, that text is written to the child's stdin (a secret value never
 * travels in argv); with `forwardStderr: false`, stderr is only captured, for a
 * caller that inspects it and explains the failure itself.
 */
export function runWrangler(
  ctx: CliContext,
  args: readonly string[],
  options: {
    mode: TargetMode;
    quiet: boolean;
    nonInteractive?: boolean;
    forwardStdout?: boolean;
    forwardStderr?: boolean;
    input?: string;
  },
): Promise<WranglerRun> {
  const timeoutMs = ctx.wranglerTimeoutMs[options.mode];
  const stdin = options.input === undefined ? "ignore" : "pipe";
  const child = spawnWrangler(ctx, args, { stdio: [stdin, "pipe", "pipe"], nonInteractive: options.nonInteractive ?? false });
  return new Promise<WranglerRun>((resolvePromise, reject) => {
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      stdout += chunk;
      if (options.forwardStdout === true && !options.quiet) ctx.stderr.write(chunk);
    });
    child.stderr?.on("data", (chunk: string) => {
      stderr += chunk;
      if (!options.quiet && options.forwardStderr !== false) ctx.stderr.write(chunk);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 2000).unref();
    }, timeoutMs);
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new EnvironmentError(`cannot start Wrangler: ${error.code ?? error.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(new EnvironmentError(`wrangler ${args[0] ?? ""} ${args[1] ?? ""} timed out after ${Math.round(timeoutMs / 1000)} s and was stopped`.replace(/\s+/g, " ")));
        return;
      }
      resolvePromise({ code: code ?? (signal === null ? 0 : 128), stdout, stderr });
    });
    if (options.input !== undefined) {
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(options.input);
    }
  });
}
