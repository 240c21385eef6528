/**
 * The bridge between commander and the command functions: every action gets
 * the context, the merged global options and an `Output`, and simply throws a
 * typed error on failure. Exit-code mapping happens once, in `runCli`.
 *
 * A command is declared with commander's own chain (`.argument()`,
 * `.option()`), typed by `@commander-js/extra-typings`, and its action is
 * `withRuntime(ctx, async (rt, ...positionals, options) => …)`: the
 * positionals and options arrive typed from those declarations, a required
 * positional is enforced by commander (exit 2) and an optional one carries its
 * declared default.
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { Command as UntypedCommand } from "commander";
import type { CliContext } from "./context";
import type { GlobalOptions } from "./options";
import { Output } from "./output";

/** A command that subcommands are attached to (the program, or a group such as `flags`). */
export type ParentCommand = CommandUnknownOpts;

export interface CommandRuntime {
  ctx: CliContext;
  globals: GlobalOptions;
  out: Output;
}

/**
 * Wraps a typed handler as a commander action. Commander calls an action with
 * the declared positionals, the options object and the command, with `this`
 * bound to the command; the handler gets the runtime first, then the same
 * parameters (typed by the command's declarations; trailing ones it does not
 * use may be left out).
 */
export function withRuntime<P extends unknown[]>(
  ctx: CliContext,
  handler: (rt: CommandRuntime, ...params: P) => Promise<void>,
): (this: CommandUnknownOpts, ...params: P) => Promise<void> {
  return async function commanderAction(this: CommandUnknownOpts, ...params: P): Promise<void> {
    await handler(runtimeOf(ctx, this.optsWithGlobals()), ...params);
  };
}

/**
 * The runtime of one action. Every command hangs under the root command, so
 * its merged option values are the global options (plus its own).
 */
function runtimeOf(ctx: CliContext, merged: Record<string, unknown>): CommandRuntime {
  const globals = merged as GlobalOptions;
  return { ctx, globals, out: new Output(ctx, globals) };
}

/** A legacy handler: positionals as strings (`""` when absent), then its own options. */
export type CommandHandler<O> = (rt: CommandRuntime, args: string[], options: O) => Promise<void>;

/**
 * The untyped bridge, kept only for `review`, `signals` and `outbox` until they
 * are declared like the other commands (issue 18, item 9): their options are
 * restated in hand-written interfaces and absent positionals read as `""`.
 * @deprecated Declare the command with `@commander-js/extra-typings` and use `withRuntime`.
 */
export function defineAction<O>(ctx: CliContext, handler: CommandHandler<O>): (...params: unknown[]) => Promise<void> {
  return async function commanderAction(...params: unknown[]): Promise<void> {
    const command = params.at(-1) as UntypedCommand;
    const args = params.slice(0, command.registeredArguments.length).map((value) => (value === undefined ? "" : String(value)));
    await handler(runtimeOf(ctx, command.optsWithGlobals()), args, command.opts<O & Record<string, unknown>>());
  };
}

/** A help block of examples, appended after each command's options. */
export function examples(lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`;
}
