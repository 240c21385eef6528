/**
 * The root command with the global options of 08 §2, declared once, and the
 * validation helpers for option values that several commands share, so every
 * command rejects a bad number the same way (exit 2, with usage).
 *
 * Option types are inferred from the declarations (`@commander-js/extra-typings`,
 * docs/decisions.md): `GlobalOptions` is what `createRootCommand`'s `.option()`
 * lines produce, and each command's options and positionals are typed by its
 * own `.option()`/`.argument()` lines, so no interface restates a flag.
 */
import { Command } from "@commander-js/extra-typings";
import { PACKAGE_VERSION } from "../../worker/contracts";
import { UsageError } from "./errors";

/** The program's name, version, help option and global options (08 §2); `cli/program.ts` adds the rest. */
export function createRootCommand() {
  return new Command("magnt")
    .description("Operator CLI of the MAGNT MCP Door")
    .version(PACKAGE_VERSION, "--version", "print the version and exit")
    .helpOption("--help", "show help")
    .option("--json", "machine output on stdout; implies no prompts and no colour")
    .option("--config <path>", "Wrangler config (default: wrangler.local.jsonc locally, wrangler.jsonc with --remote)")
    .option("--env <name>", "Wrangler environment, passed to Wrangler as --env")
    .option("--local", "use the local D1 (default)")
    .option("--remote", "use the remote D1")
    .option("--persist-to <dir>", "local state directory (local mode only)")
    .option("--yes", "answer yes to every confirmation")
    .option("--no-color", "disable colour (also NO_COLOR; FORCE_COLOR=1 forces it)")
    .option("--quiet", "suppress progress and informational stderr lines")
    .option("--verbose", "also show Wrangler's own output (the migration tables of migrate and dev)");
}

export type RootCommand = ReturnType<typeof createRootCommand>;

type DeclaredGlobals = ReturnType<RootCommand["opts"]>;

/**
 * The global options as the library functions take them: the declared keys,
 * each optional and every switch widened to `boolean`, because those functions
 * are also called with a subset (`{}`, `{ json: true }`); the values commander
 * hands an action always fit.
 */
export type GlobalOptions = { [K in keyof DeclaredGlobals]?: DeclaredGlobals[K] extends boolean | undefined ? boolean : DeclaredGlobals[K] };

/**
 * Parses an integer option value in [min, max]. Used for every numeric option
 * (limits, ports, timeouts) so none of them can smuggle text into SQL or argv.
 */
export function parseIntegerOption(name: string, raw: string | number | undefined, min: number, max: number): number {
  const text = String(raw ?? "").trim();
  if (!/^\d+$/.test(text)) throw new UsageError(`${name} must be an integer from ${min} to ${max} (got "${String(raw)}")`);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${name} must be an integer from ${min} to ${max} (got ${text})`);
  }
  return value;
}

/** Parses an enumerated option value. */
export function parseChoiceOption<T extends string>(name: string, raw: string | undefined, choices: readonly T[]): T {
  const found = choices.find((choice) => choice === raw);
  if (found === undefined) throw new UsageError(`${name} must be one of ${choices.join(", ")} (got "${String(raw)}")`);
  return found;
}
