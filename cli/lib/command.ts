/**
 * The bridge between commander and the command functions: every action gets
 * the context, the merged global options and an `Output`, and simply throws a
 * typed error on failure. Exit-code mapping happens once, in `runCli`.
 */
import type { Command } from "commander";
import type { CliContext } from "./context";
import type { GlobalOptions } from "./options";
import { Output } from "./output";

export interface CommandRuntime {
  ctx: CliContext;
  globals: GlobalOptions;
  out: Output;
  command: Command;
}

/** A command implementation: positional arguments, then its own options. */
export type CommandHandler<O> = (rt: CommandRuntime, args: string[], options: O) => Promise<void>;

/**
 * Wraps a handler as a commander action. Commander calls actions with the
 * declared positionals, then the options object, then the command.
 */
export function defineAction<O>(ctx: CliContext, handler: CommandHandler<O>): (...params: unknown[]) => Promise<void> {
  return async function commanderAction(...params: unknown[]): Promise<void> {
    const command = params.at(-1) as Command;
    const args = params.slice(0, command.registeredArguments.length).map((value) => (value === undefined ? "" : String(value)));
    const globals = command.optsWithGlobals<GlobalOptions>();
    const rt: CommandRuntime = { ctx, globals, out: new Output(ctx, globals), command };
    await handler(rt, args, command.opts<O & Record<string, unknown>>());
  };
}

/** A help block of examples, appended after each command's options. */
export function examples(lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`;
}
