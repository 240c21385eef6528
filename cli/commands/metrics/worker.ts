/**
 * Entry of a `magnt metrics` worker thread (dist/cli/metrics-worker.mjs,
 * started by `parallel.ts`): says it is ready, then counts the blocks it is
 * sent (each with a rows array to reuse, when the main thread has one), one
 * at a time, in the order they arrive, and answers each with its counts and rows (the rows'
 * buffer is transferred, not copied). A failed read answers with the system
 * error code only — never a path or any content; any other failure is a bug
 * and ends the worker, which fails the run.
 */
import { parentPort } from "node:worker_threads";
import { BlockScanner } from "./blocks";
import type { WorkerMessage, WorkerTask } from "./parallel";

const port = parentPort;
if (port === null) throw new Error("metrics-worker runs only as a worker thread");
const scanner = new BlockScanner();
port.on("message", ({ task, spare }: WorkerTask) => {
  if (spare !== undefined) scanner.recycle(spare);
  let reply: WorkerMessage;
  try {
    reply = { kind: "result", result: scanner.scan(task) };
  } catch (error) {
    // A system error (a failed read) goes back as its code; anything else is a bug and ends the worker.
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== "string") throw error;
    reply = { kind: "read-error", code };
  }
  port.postMessage(reply, reply.kind === "result" ? [reply.result.rows.buffer as ArrayBuffer] : []);
});
port.postMessage({ kind: "ready" } satisfies WorkerMessage);
