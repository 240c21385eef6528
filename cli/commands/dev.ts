/**
 * `magnt dev` (08 §13), also `npm start` / `npm run dev`: the one-command local
 * door. Applies pending local migrations (the same code as `magnt migrate`,
 * without asking), prints the door's URL, then runs `wrangler dev` fully
 * offline with inherited stdio until it ends. SIGINT/SIGTERM are forwarded to
 * the Wrangler process itself, which stops workerd in turn.
 */
import type { Command } from "commander";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { EnvironmentError, UsageError } from "../lib/errors";
import { applyPendingMigrations } from "../lib/migrations";
import { parseIntegerOption } from "../lib/options";
import { resolveTarget, type D1Target } from "../lib/target";
import { spawnWrangler } from "../lib/wrangler";

export const DEV_DEFAULT_PORT = 8787;
export const DEV_DEFAULT_IP = "127.0.0.1";
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

interface DevOptions {
  port?: string;
  ip: string;
  migrate: boolean;
}

export function registerDev(program: Command, ctx: CliContext): void {
  program
    .command("dev")
    .description("run the door locally and offline (applies pending local migrations first)")
    .option("--port <n>", `port to listen on (default: $PORT, else ${DEV_DEFAULT_PORT})`)
    .option("--ip <addr>", "address to listen on", DEV_DEFAULT_IP)
    .option("--no-migrate", "do not apply pending local migrations first")
    .addHelpText(
      "after",
      examples(["npm start", "npm start -- --port 9000", "magnt dev --persist-to /tmp/magnt-state --no-migrate"]),
    )
    .action(defineAction<DevOptions>(ctx, runDev));
}

/** The port: `--port`, else `$PORT`, else 8787. */
export function devPort(option: string | undefined, env: Readonly<Record<string, string | undefined>>): number {
  if (option !== undefined) return parseIntegerOption("--port", option, 1, 65_535);
  const fromEnv = env.PORT;
  if (fromEnv !== undefined && fromEnv !== "") return parseIntegerOption("PORT", fromEnv, 1, 65_535);
  return DEV_DEFAULT_PORT;
}

/** The `wrangler dev` argv of 08 §13. */
export function devArgs(target: D1Target, ip: string, port: number): string[] {
  return [
    "dev",
    "--config",
    target.config.path,
    ...(target.env === undefined ? [] : ["--env", target.env]),
    "--local",
    "--ip",
    ip,
    "--port",
    String(port),
    "--var",
    `PUBLIC_ORIGIN:${publicOrigin(port)}`,
    ...(target.persistTo === undefined ? [] : ["--persist-to", target.persistTo]),
  ];
}

function publicOrigin(port: number): string {
  return `http://localhost:${port}`;
}

async function runDev(rt: CommandRuntime, _args: string[], options: DevOptions): Promise<void> {
  const { ctx, out, globals } = rt;
  const port = devPort(options.port, ctx.env);
  const ip = options.ip.trim();
  if (ip === "" || /\s/.test(ip)) throw new UsageError("--ip must be an address");
  const target = resolveTarget(ctx, globals, { localOnly: "magnt dev" });
  if (options.migrate) {
    const result = await applyPendingMigrations(ctx, out, target, globals, { confirmRemote: false });
    out.info(result.upToDate ? "local migrations: up to date" : `local migrations applied: ${result.applied.join(", ")}`);
  }
  const origin = publicOrigin(port);
  if (out.json) out.jsonLine({ url: `${origin}/`, mcp: `${origin}/mcp`, probe: `${origin}/__magnt_probe` });
  else out.line(`MAGNT door: ${origin}/ (MCP: ${origin}/mcp) — starting wrangler dev, Ctrl-C to stop`);
  await runWranglerDev(ctx, devArgs(target, ip, port), out.json);
}

/**
 * Runs `wrangler dev` until it ends. Exit 0 when it ends normally or because
 * of a signal we forwarded; exit 3 otherwise (it crashed or could not start).
 */
function runWranglerDev(ctx: CliContext, args: string[], json: boolean): Promise<void> {
  // In --json mode Wrangler's stdout goes to our stderr so that stdout stays one JSON line.
  const child = spawnWrangler(ctx, args, { stdio: ["inherit", json ? 2 : "inherit", "inherit"], nonInteractive: false });
  let forwarded: NodeJS.Signals | undefined;
  const forwarders = FORWARDED_SIGNALS.map((signal) => {
    const forward = (): void => {
      forwarded = signal;
      child.kill(signal);
    };
    ctx.signals.on(signal, forward);
    return { signal, forward };
  });
  const removeForwarders = (): void => {
    for (const { signal, forward } of forwarders) ctx.signals.off(signal, forward);
  };
  return new Promise<void>((resolve, reject) => {
    child.on("error", (error: NodeJS.ErrnoException) => {
      removeForwarders();
      reject(new EnvironmentError(`cannot start wrangler dev: ${error.code ?? error.message}`));
    });
    child.on("exit", (code, signal) => {
      removeForwarders();
      if (code === 0 || forwarded !== undefined) resolve();
      else reject(new EnvironmentError(`wrangler dev ended with ${signal === null ? `exit code ${String(code)}` : signal}`));
    });
  });
}
