/**
 * `magnt dev` (08 §13), also `npm start` / `npm run dev`: the one-command local
 * door. Applies pending local migrations (the same code as `magnt migrate`,
 * without asking), prints the door's URL, then runs `wrangler dev` fully
 * offline with inherited stdio until it ends. SIGINT/SIGTERM are forwarded to
 * the Wrangler process itself, which stops workerd in turn.
 *
 * Local crons never fire by themselves (05 §1): `magnt dev` prints the URL of
 * one cron pass (Wrangler's scheduled-handler URL). `--telegram-api-origin`
 * points the notifier at a loopback stand-in; anything but a loopback `http`
 * origin is refused here, as the Worker itself would refuse it (00 §7).
 */
import type { Command } from "commander";
import { isLoopbackHttpOrigin } from "../../worker/contracts";
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
  telegramApiOrigin?: string;
}

/**
 * A `TELEGRAM_API_ORIGIN` for local runs: an `http` origin on a loopback name,
 * written exactly as `new URL(value).origin` prints it (port allowed; no path,
 * no trailing slash). The Worker applies the same rule and reports itself
 * `misconfigured` otherwise; refusing here saves a silent local run.
 */
export function parseStandInOrigin(raw: string): string {
  if (!isLoopbackHttpOrigin(raw)) {
    throw new UsageError(
      `--telegram-api-origin must be an http origin on localhost, 127.0.0.1 or [::1], written as new URL(value).origin prints it (for example http://127.0.0.1:8790; no path, no trailing slash), got ${JSON.stringify(raw.slice(0, 120))}`,
    );
  }
  return raw;
}

/** The URL that runs one pass of the scheduled handler of a local door (05 §1). */
export function scheduledUrl(port: number): string {
  return `http://127.0.0.1:${port}/cdn-cgi/handler/scheduled`;
}

export function registerDev(program: Command, ctx: CliContext): void {
  program
    .command("dev")
    .description("run the door locally and offline (applies pending local migrations first)")
    .option("--port <n>", `port to listen on (default: $PORT, else ${DEV_DEFAULT_PORT})`)
    .option("--ip <addr>", "address to listen on", DEV_DEFAULT_IP)
    .option("--no-migrate", "do not apply pending local migrations first")
    .option("--telegram-api-origin <origin>", "send Telegram notifications to a loopback stand-in (e.g. http://127.0.0.1:8790)")
    .addHelpText(
      "after",
      examples([
        "npm start",
        "npm start -- --port 9000",
        "magnt dev --persist-to /tmp/magnt-state --no-migrate",
        "magnt dev --telegram-api-origin http://127.0.0.1:8790   # then: curl http://127.0.0.1:8787/cdn-cgi/handler/scheduled",
      ]),
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
export function devArgs(target: D1Target, ip: string, port: number, telegramApiOrigin?: string): string[] {
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
    ...(telegramApiOrigin === undefined ? [] : ["--var", `TELEGRAM_API_ORIGIN:${telegramApiOrigin}`]),
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
  const telegramApiOrigin = options.telegramApiOrigin === undefined ? undefined : parseStandInOrigin(options.telegramApiOrigin);
  const target = resolveTarget(ctx, globals, { localOnly: "magnt dev" });
  if (options.migrate) {
    const result = await applyPendingMigrations(ctx, out, target, globals, { confirmRemote: false });
    out.info(result.upToDate ? "local migrations: up to date" : `local migrations applied: ${result.applied.join(", ")}`);
  }
  const origin = publicOrigin(port);
  const cronPass = `one cron pass (Telegram outbox): curl ${scheduledUrl(port)}`;
  if (out.json) {
    out.jsonLine({ url: `${origin}/`, mcp: `${origin}/mcp`, probe: `${origin}/__magnt_probe` });
    out.info(cronPass);
  } else {
    out.line(`MAGNT door: ${origin}/ (MCP: ${origin}/mcp) — starting wrangler dev, Ctrl-C to stop`);
    out.line(cronPass);
  }
  await runWranglerDev(ctx, devArgs(target, ip, port, telegramApiOrigin), out.json);
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
