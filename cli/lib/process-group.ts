/**
 * A group of child processes that runs and ends as one unit: `magnt dev`'s
 * one `wrangler dev` process, or the three of `magnt dev --owner` with its
 * two stand-ins (08 §13), added in stages (`startProcessGroup`).
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
  const group = startProcessGroup(signals);
  group.add(members);
  return group.ended;
}

/**
 * A group whose members join in stages (`magnt dev --owner` starts core and
 * the stand-ins first, the two gateways once core is registered). The rules
 * of the header hold for the whole group: a signal reaches every running
 * member, the first member that crashes stops the others, and `ended`
 * settles once every member added so far has ended — members added after
 * that are stopped at once and change nothing.
 */
export interface ProcessGroup {
  /** Spawns members (in order) into the group. */
  add(members: readonly GroupMember[]): void;
  /** SIGTERM to every running member (a stop we chose: not a failure). */
  stop(): void;
  /** Whether the group has ended (every member added has ended). */
  readonly isEnded: boolean;
  /** Resolves or rejects as `runProcessGroup` does. */
  readonly ended: Promise<void>;
}

export function startProcessGroup(signals: SignalSource): ProcessGroup {
  const running: Running[] = [];
  let forwarded: NodeJS.Signals | undefined;
  let stopping = false;
  let failure: EnvironmentError | undefined;
  let isEnded = false;
  let settle: { resolve: () => void; reject: (error: EnvironmentError) => void } | undefined;
  const ended = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited by the caller; a group nobody awaits (its first spawn threw) must not be an unhandled rejection.
  ended.catch(() => undefined);
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
  const settleIfDone = (): void => {
    if (isEnded || running.some((entry) => !entry.done)) return;
    isEnded = true;
    for (const { signal, forward } of forwarders) signals.off(signal, forward);
    if (failure !== undefined) settle!.reject(failure);
    else settle!.resolve();
  };
  const watch = (entry: Running): void => {
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
  };
  return {
    add(members) {
      let added: Running[];
      try {
        added = startAll(members);
      } catch (error) {
        failure ??= error instanceof EnvironmentError ? error : new EnvironmentError(`cannot start the group: ${String(error)}`);
        stopOthers();
        settleIfDone();
        throw error;
      }
      running.push(...added);
      for (const entry of added) {
        watch(entry);
        // Joined after the group ended, or after a stop or a signal: it never runs on its own.
        if (isEnded || stopping || forwarded !== undefined) entry.child.kill(forwarded ?? "SIGTERM");
      }
    },
    stop: stopOthers,
    get isEnded() {
      return isEnded;
    },
    ended,
  };
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
