/**
 * `magnt flags list|enable|disable <flag>` (08 §9): the only supported way
 * to change a flag. Locally it edits `.dev.vars` next to the config — with
 * `--owner`, the `.dev.vars` of the local split run (`magnt dev --owner`),
 * all eight flags; remotely it manages Worker secrets through Wrangler with
 * an explicit `--config`.
 *
 * Why so careful: a flag switches on a feature that may message the owner,
 * expose owner tools or hand out dialogue tokens. `enable` therefore checks
 * every prerequisite of 00 §6 first and changes nothing when one fails; flags
 * of releases this codebase does not contain yet are refused outright; and a
 * remote write never happens against a guessed Worker (no default config) or
 * a config that still carries the placeholder database id.
 *
 * Layout: one file per subcommand (list.ts, enable.ts, disable.ts); target.ts
 * (the store, the flag argument, the result object), prerequisites.ts (the
 * checks of `enable`), catalog.ts (the flags and their rules, as data).
 */
import type { ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { registerFlagsDisable } from "./disable";
import { registerFlagsEnable } from "./enable";
import { registerFlagsList } from "./list";

export type { FlagCheck } from "./target";

export function registerFlags(program: ParentCommand, ctx: CliContext): void {
  const flags = program
    .command("flags")
    .description("list, enable or disable a flag (local .dev.vars, --owner for the local split run's, or remote Worker secrets with an explicit --config)");
  registerFlagsList(flags, ctx);
  registerFlagsEnable(flags, ctx);
  registerFlagsDisable(flags, ctx);
}
