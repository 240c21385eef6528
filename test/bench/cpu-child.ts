/**
 * The measuring child of the CPU-per-request rows (`cpu.ts` starts it, once
 * per heap, with V8's GC threads off and the heap's flags): imports the door's
 * bundle given to it, measures, and writes its rows where it is told. Nothing
 * else is loaded, so its heap is the door's and the stand-ins' alone.
 */
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { measureCpu, type Door } from "./cpu-measure";
import { Report } from "./report";
import { loadClock } from "./thread-clock";

/** What the parent passes, as one JSON value in `MAGNT_BENCH_CPU_CHILD`. */
interface ChildTask {
  doorFile: string;
  rowsFile: string;
  iterations: number;
  heap: { label: string; gated: boolean };
  /** The thread-clock addon (thread-clock.ts), or null: then the process clock. */
  clockFile: string | null;
}

const task = JSON.parse(process.env.MAGNT_BENCH_CPU_CHILD ?? "null") as ChildTask | null;
if (task === null) throw new Error("cpu bench: the measuring child was started without MAGNT_BENCH_CPU_CHILD");
const door = ((await import(pathToFileURL(task.doorFile).href)) as { default: Door }).default;
const report = new Report();
await measureCpu(report, { door, iterations: task.iterations, heap: task.heap, clock: loadClock(task.clockFile) });
writeFileSync(task.rowsFile, JSON.stringify({ rows: report.rows }));
