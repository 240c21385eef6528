/**
 * The `magnt` program: the commands on the root command (global options of
 * 08 §2, cli/lib/options.ts), and the single place where failures become exit
 * codes and `--json` error objects (08 §3).
 */
import { CommanderError, type CommandUnknownOpts } from "@commander-js/extra-typings";
import type { Command as UntypedCommand } from "commander";
import { registerDeployGuard } from "./commands/deploy-guard";
import { registerDev } from "./commands/dev";
import { registerFlags } from "./commands/flags/index";
import { registerMetrics } from "./commands/metrics";
import { registerMigrate } from "./commands/migrate";
import { registerOutbox } from "./commands/outbox";
import { registerProbeCheck } from "./commands/probe-check";
import { registerReview } from "./commands/review";
import { registerSignals } from "./commands/signals";
import { registerSmoke } from "./commands/smoke";
import { examples } from "./lib/command";
import type { CliContext } from "./lib/context";
import { CliError, describeUnknown, EXIT, UsageError, type ErrorCode } from "./lib/errors";
import { helpPointer, reflowHelp } from "./lib/help-layout";
import { createRootCommand, type RootCommand } from "./lib/options";
import { fitMessage, terminalWidth } from "./lib/output";

/** Builds a fresh program bound to a context (one per run, so tests never share state). */
export function createProgram(ctx: CliContext): RootCommand {
  const program = createRootCommand()
    .exitOverride()
    .configureOutput({
      // Help and usage errors fit the terminal they are written to (08 §3; cli/lib/help-layout.ts).
      writeOut: (text) => ctx.stdout.write(reflowHelp(text, terminalWidth(ctx.stdout, ctx.env))),
      writeErr: (text) => ctx.stderr.write(reflowHelp(text, terminalWidth(ctx.stderr, ctx.env))),
      getOutHelpWidth: () => terminalWidth(ctx.stdout, ctx.env),
      getErrHelpWidth: () => terminalWidth(ctx.stderr, ctx.env),
    })
    .addHelpText(
      "after",
      examples([
        "npm start -- --port 9000",
        "magnt smoke http://127.0.0.1:8787/mcp --submit-test --shared-memory-test",
        "magnt probe-check https://magnt.ru/",
        "magnt migrate --list",
        "magnt review contacts --remote --config wrangler.jsonc",
        "magnt signals hide ts_… --remote --config wrangler.jsonc --yes",
        "magnt flags enable TELEGRAM_NOTIFICATIONS_ENABLED --yes",
        "magnt outbox --json",
        "magnt metrics observer.ndjson --since 2026-05-01",
      ]) + "\nExit codes: 0 success, 1 check failed, 2 usage error, 3 environment failure.\n",
    );
  // review, signals and outbox still use commander's untyped declarations (cli/lib/command.ts, defineAction).
  const untyped = program as unknown as UntypedCommand;
  registerDev(program, ctx);
  registerSmoke(program, ctx);
  registerProbeCheck(program, ctx);
  registerMigrate(program, ctx);
  registerReview(untyped, ctx);
  registerSignals(untyped, ctx);
  registerFlags(program, ctx);
  registerOutbox(untyped, ctx);
  registerDeployGuard(program, ctx);
  registerMetrics(program, ctx);
  // A usage error is the message, commander's "Did you mean" when it has one, and one line
  // pointing to --help: never the whole help, which would scroll the message away (08 §3).
  program.showHelpAfterError(helpPointer(commandPath(program)));
  for (const command of allCommands(program)) {
    command.exitOverride().showHelpAfterError(helpPointer(commandPath(command))).configureOutput(program.configureOutput());
  }
  return program;
}

/** `magnt flags enable`: the names from the root down to `command`. */
function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let at: CommandUnknownOpts | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(" ");
}

function allCommands(command: CommandUnknownOpts): CommandUnknownOpts[] {
  return command.commands.flatMap((child) => [child, ...allCommands(child)]);
}

/**
 * Runs the CLI for `argv` (without node and script) and returns the exit
 * code. Never throws: every failure is mapped here.
 */
export async function runCli(argv: readonly string[], ctx: CliContext): Promise<number> {
  const program = createProgram(ctx);
  let active: CommandUnknownOpts = program;
  program.hook("preAction", (_root, actionCommand) => {
    active = actionCommand;
  });
  const json = wantsJson(argv);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return EXIT.ok;
  } catch (error) {
    return reportFailure(ctx, error, { json, command: active });
  }
}

/** `--json` as typed, even when parsing failed before commander could record it. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

function reportFailure(ctx: CliContext, error: unknown, state: { json: boolean; command: CommandUnknownOpts }): number {
  if (error instanceof CommanderError) {
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
    // Commander has already printed its message (and the line pointing to --help) to stderr.
    writeJsonError(ctx, state.json, "usage", error.message.replace(/^error:\s*/i, ""));
    return EXIT.usage;
  }
  if (error instanceof CliError) {
    ctx.stderr.write(`magnt: ${fitMessage(error.message, ctx.stderr, ctx.env, "magnt: ".length).join("\n")}\n`);
    if (error instanceof UsageError && error.showUsage && !state.json) ctx.stderr.write(`${helpPointer(commandPath(state.command))}\n`);
    writeJsonError(ctx, state.json, error.code, error.message);
    return error.exitCode;
  }
  const message = `unexpected error: ${describeUnknown(error)}`;
  ctx.stderr.write(`magnt: ${fitMessage(message, ctx.stderr, ctx.env, "magnt: ".length).join("\n")}\n`);
  if (ctx.env.MAGNT_DEBUG === "1" && error instanceof Error && error.stack !== undefined) ctx.stderr.write(`${error.stack}\n`);
  writeJsonError(ctx, state.json, "environment", message);
  return EXIT.environment;
}

function writeJsonError(ctx: CliContext, json: boolean, code: ErrorCode, message: string): void {
  if (json) ctx.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
}
