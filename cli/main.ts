/**
 * Entry point of the bundled CLI (dist/cli/magnt.mjs, loaded by bin/magnt.js).
 * Runs the program against the real process, then exits with its code once
 * stdout and stderr are flushed (so lingering sockets of the MCP client can
 * never keep a finished run alive).
 */
import { processContext } from "./lib/context";
import { runCli } from "./program";

/** Resolves once everything written so far to the stream has been handed to the OS. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write("")) resolve();
    else stream.once("drain", () => resolve());
  });
}

/**
 * A reader that stops early (`magnt metrics … | head`) closes the pipe; the
 * next write then fails with EPIPE, which Node raises as an uncaught stream
 * error with a stack trace. Nobody is left to read the rest, so the run ends
 * there, quietly and successfully, as `git log | head` does (decision 202).
 * Any other stream error is still a bug and still thrown.
 */
function endQuietlyWhenTheReaderLeaves(stream: NodeJS.WriteStream): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

async function main(): Promise<void> {
  endQuietlyWhenTheReaderLeaves(process.stdout);
  endQuietlyWhenTheReaderLeaves(process.stderr);
  const code = await runCli(process.argv.slice(2), processContext());
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

void main();
