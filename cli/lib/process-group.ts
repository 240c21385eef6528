/**
 * A group of child processes that runs and ends as one unit: `magnt dev`'s
 * one `wrangler dev` process, or the three of `magnt dev --owner` (08 §13).
 *
 * - Signals: SIGINT and SIGTERM of the CLI are forwarded to each running
 *   member itself (never to a shell or a wrapper), so Wrangler stops workerd
 *   in turn; the listeners are removed once the group has ended.
 * - One unit: when a member ends, or cannot start, while others still run, the
 *   others get SIGTERM — half of a split run is no usable door.
 * - Outcome: resolves when every member ended normally, or after a signal we
 *   forwarded, or because we stopped it after another member ended normally
 *   (Wrangler's `x` hotkey); rejects with an `EnvironmentError` naming the
 *   first member that crashed or could not start (exit 3).
 */
import type { ChildProcess } from "node:child_process";
import type { SignalSource } from "./context";
import { EnvironmentError } from "./errors";

const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

export interface GroupMember {
  /** Names the member in a failure (`wrangler dev (core)`). */
  label: string;
  /** Spawns the member's process. */
  start(): ChildProcess;
}

interface Running {
  label: string;
  child: ChildProcess;
  done: boolean;
}

/** Starts every member and settles once all of them have ended (see the header). */
export function runProcessGroup(signals: SignalSource, members: readonly GroupMember[]): Promise<void> {
  const running = startAll(members);
  let forwarded: NodeJS.Signals | undefined;
  let stopping = false;
  let failure: EnvironmentError | undefined;
  const stopOthers = (): void => {
    stopping = true;
    for (const entry of running) if (!entry.done) entry.child.kill("SIGTERM");
  };
  const forwarders = FORWARDED_SIGNALS.map((signal) => {
    const forward = (): void => {
      forwarded = signal;
      for (const entry of running) if (!entry.done) entry.child.kill(signal);
    };
    signals.on(signal, forward);
    return { signal, forward };
  });
  return new Promise<void>((resolve, reject) => {
    const settleIfDone = (): void => {
      if (running.some((entry) => !entry.done)) return;
      for (const { signal, forward } of forwarders) signals.off(signal, forward);
      if (failure !== undefined) reject(failure);
      else resolve();
    };
    for (const entry of running) {
      entry.child.on("error", (error: NodeJS.ErrnoException) => {
        if (entry.done) return;
        entry.done = true;
        failure ??= new EnvironmentError(`cannot start ${entry.label}: ${error.code ?? error.message}`);
        stopOthers();
        settleIfDone();
      });
      entry.child.on("exit", (code, signal) => {
        if (entry.done) return;
        entry.done = true;
        if (code !== 0 && forwarded === undefined && !stopping) {
          failure ??= new EnvironmentError(`${entry.label} ended with ${signal === null ? `exit code ${String(code)}` : signal}`);
        }
        if (!stopping && forwarded === undefined) stopOthers();
        settleIfDone();
      });
    }
  });
}

/** Spawns the members in order; when one cannot even be spawned, the ones already running are stopped first. */
function startAll(members: readonly GroupMember[]): Running[] {
  const running: Running[] = [];
  try {
    for (const member of members) running.push({ label: member.label, child: member.start(), done: false });
  } catch (error) {
    for (const entry of running) entry.child.kill("SIGTERM");
    throw error;
  }
  return running;
}
