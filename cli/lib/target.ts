/**
 * Which D1 database a command talks to (08 §2, §4): `--local` (default) or
 * `--remote`, the config (default by mode), `--env`, `--persist-to`. Resolving
 * a remote target runs the placeholder guard, so no remote command can reach
 * Wrangler while its config still carries the placeholder id.
 */
import { D1_BINDING } from "../../worker/contracts";
import type { CliContext } from "./context";
import { UsageError } from "./errors";
import type { GlobalOptions } from "./options";
import type { TargetMode } from "./wrangler";
import { assertNoPlaceholderDatabase, readWranglerConfig, type WranglerConfig } from "./wrangler-config";

export const DEFAULT_LOCAL_CONFIG = "wrangler.local.jsonc";
export const DEFAULT_REMOTE_CONFIG = "wrangler.jsonc";

export interface D1Target {
  mode: TargetMode;
  config: WranglerConfig;
  env?: string;
  persistTo?: string;
}

/** The mode from `--local`/`--remote`; both together is a usage error. */
export function resolveMode(globals: GlobalOptions): TargetMode {
  if (globals.local === true && globals.remote === true) {
    throw new UsageError("--local and --remote cannot be used together");
  }
  return globals.remote === true ? "remote" : "local";
}

/** Resolves and guards the target of a D1 command (before anything is spawned). */
export function resolveTarget(ctx: CliContext, globals: GlobalOptions, options: { localOnly?: string } = {}): D1Target {
  const mode = resolveMode(globals);
  if (mode === "remote" && options.localOnly !== undefined) throw new UsageError(`${options.localOnly} is local only: --remote is not allowed`);
  if (mode === "remote" && globals.persistTo !== undefined) throw new UsageError("--persist-to only applies to local mode");
  const config = readWranglerConfig(globals.config ?? (mode === "remote" ? DEFAULT_REMOTE_CONFIG : DEFAULT_LOCAL_CONFIG), ctx.cwd, globals.env);
  if (mode === "remote") assertNoPlaceholderDatabase(config);
  return {
    mode,
    config,
    ...(globals.env === undefined ? {} : { env: globals.env }),
    ...(mode === "local" && globals.persistTo !== undefined ? { persistTo: globals.persistTo } : {}),
  };
}

/** The common Wrangler arguments of 08 §4 for a target. */
export function targetArgs(target: D1Target): string[] {
  return [
    "--config",
    target.config.path,
    ...(target.env === undefined ? [] : ["--env", target.env]),
    target.mode === "remote" ? "--remote" : "--local",
    ...(target.persistTo === undefined ? [] : ["--persist-to", target.persistTo]),
  ];
}

/** The D1 binding every command addresses (re-exported for the commands' argv). */
export const DATABASE = D1_BINDING;
