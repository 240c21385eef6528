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

async function main(): Promise<void> {
  const code = await runCli(process.argv.slice(2), processContext());
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

void main();
