/**
 * Everything a command touches outside its own arguments: the three standard
 * streams, the environment, the working directory, Wrangler's time limits and
 * signal registration. Commands receive it instead of reaching for `process`,
 * so the node tests can run the whole CLI in-process with captured streams,
 * a chosen TTY state and shortened timeouts.
 */

/** A text stream the CLI writes to (a `process.stdout`-like object). */
export interface TextSink {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

/** The parts of `process` that `magnt dev` uses to forward SIGINT/SIGTERM. */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

export interface CliContext {
  stdout: TextSink;
  stderr: TextSink;
  stdin: { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Per-call Wrangler limits in ms (08 §4: 300 s local, 120 s remote). */
  wranglerTimeoutMs: { local: number; remote: number };
  signals: SignalSource;
  /** How long `magnt dev` waits for the door to answer before it gives up (08 §13; tests shorten it). */
  devReadyTimeoutMs?: number;
}

/**
 * Wrangler time limits of 08 §4. They stop a hung child, not a slow one: a
 * local `d1 migrations apply` of eight files took over 60 s on a loaded 2-core
 * machine (each file is its own workerd round), so the local limit is 300 s.
 */
export const WRANGLER_TIMEOUT_MS = { local: 300_000, remote: 120_000 } as const;

/** The real process as a context (used by `cli/main.ts`). */
export function processContext(): CliContext {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    wranglerTimeoutMs: { ...WRANGLER_TIMEOUT_MS },
    signals: process,
  };
}
