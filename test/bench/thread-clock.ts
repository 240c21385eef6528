/**
 * The clock of the CPU-per-request rows (decision 205). What the platform
 * bills a request is the CPU time of the thread that runs it; V8's background
 * compiler threads are not that thread. Node 20 can read only the process's
 * CPU time (`process.cpuUsage()`), which counts them: in a run with that
 * clock, the slowest requests were exactly the ones during which TurboFan
 * finished compiling something on another thread. So the bench builds a
 * one-function Node-API addon (`thread-cpu.c`) that reads the calling
 * thread's clock, and measures with it.
 *
 * Without a C compiler or Node's headers the bench says so and falls back to
 * the process clock, which can only over-count: the rows are then labelled,
 * and still gated.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Where the addon was built, or why it was not. */
export type ThreadClockBuild = { readonly kind: "built"; readonly file: string } | { readonly kind: "unavailable"; readonly reason: string };

/** Node's own headers: next to its binary (`<prefix>/bin/node` → `<prefix>/include/node`), as installers put them. */
function nodeHeaders(): string | undefined {
  return [join(dirname(process.execPath), "..", "include", "node"), "/usr/include/node", "/usr/local/include/node"].find((dir) =>
    existsSync(join(dir, "node_api.h")),
  );
}

export function buildThreadClock(root: string, outDir: string): ThreadClockBuild {
  const headers = nodeHeaders();
  if (headers === undefined) return { kind: "unavailable", reason: "Node's headers (node_api.h) were not found" };
  const file = join(outDir, "thread-cpu.node");
  const compiler = process.env.CC ?? "cc";
  const built = spawnSync(compiler, ["-shared", "-fPIC", "-O2", `-I${headers}`, join(root, "test/bench/thread-cpu.c"), "-o", file], { encoding: "utf8" });
  if (built.error !== undefined) return { kind: "unavailable", reason: `${compiler} could not be run (${built.error.message})` };
  if (built.status !== 0) return { kind: "unavailable", reason: `${compiler} failed: ${built.stderr.trim().split("\n")[0] ?? ""}` };
  return { kind: "built", file };
}

/** A clock in ms, and what it reads (for the rows' labels). */
export interface CpuClock {
  readonly now: () => number;
  readonly thread: boolean;
}

/** The measuring child's clock: the addon's thread clock if it was built, else the process's. */
export function loadClock(file: string | null): CpuClock {
  if (file !== null) {
    const addon = createRequire(import.meta.url)(file) as { threadCpuMs(): number };
    return { now: () => addon.threadCpuMs(), thread: true };
  }
  return {
    now: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    },
    thread: false,
  };
}
