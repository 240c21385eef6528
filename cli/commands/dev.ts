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
 *
 * `--owner` runs the split deployment instead of the monolith (which never
 * serves owner functions, 06 §1): gateway on `--port`, owner gateway on
 * `--owner-port` (default `--port` + 1), core on a free loopback port, three
 * `wrangler dev` processes on the same local D1 (cli/lib/local-topology.ts
 * says why three, and how they find each other). Without `--owner` nothing
 * differs from the one-process monolith run.
 *
 * Layout: this file holds the command (options, URLs, order of the steps);
 * the `wrangler dev` argv is cli/lib/wrangler-dev.ts, the supervision of the
 * processes cli/lib/process-group.ts, the split run's plan
 * cli/lib/local-topology.ts (its files and ports local-topology-files.ts).
 */
import { isLoopbackHttpOrigin } from "../../worker/contracts";
import { examples, withRuntime, type CommandRuntime, type ParentCommand } from "../lib/command";
import type { CliContext } from "../lib/context";
import { UsageError } from "../lib/errors";
import { prepareLocalSplit, writeLocalSplit } from "../lib/local-topology-files";
import { localOrigin, scheduledUrl, type LocalSplitPlan } from "../lib/local-topology";
import { freeLoopbackPorts } from "../lib/loopback-ports";
import { applyPendingMigrations } from "../lib/migrations";
import { parseIntegerOption } from "../lib/options";
import { runProcessGroup, type GroupMember } from "../lib/process-group";
import { resolveTarget } from "../lib/target";
import { spawnWrangler } from "../lib/wrangler";
import { wranglerDevArgs } from "../lib/wrangler-dev";

export { scheduledUrl } from "../lib/local-topology";

export const DEV_DEFAULT_PORT = 8787;
export const DEV_DEFAULT_IP = "127.0.0.1";

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

export function registerDev(program: ParentCommand, ctx: CliContext): void {
  program
    .command("dev")
    .description("run the door locally and offline (applies pending local migrations first)")
    .option("--port <n>", `port to listen on (default: $PORT, else ${DEV_DEFAULT_PORT})`)
    .option("--ip <addr>", "address to listen on", DEV_DEFAULT_IP)
    .option("--no-migrate", "do not apply pending local migrations first")
    .option("--telegram-api-origin <origin>", "send Telegram notifications to a loopback stand-in (e.g. http://127.0.0.1:8790)")
    .option("--owner", "run the split deployment (gateway + core + owner gateway) so the owner MCP works offline")
    .option("--owner-port <n>", "port of the owner gateway with --owner (default: --port + 1)")
    .addHelpText(
      "after",
      examples([
        "npm start",
        "npm start -- --port 9000",
        "magnt dev --persist-to /tmp/magnt-state --no-migrate",
        "magnt dev --telegram-api-origin http://127.0.0.1:8790   # then: curl http://127.0.0.1:8787/cdn-cgi/handler/scheduled",
        "npm start -- --owner                 # door on 8787, owner MCP on 8788 (docs/owner-activation.md)",
        "magnt dev --owner --port 9000 --owner-port 9100",
      ]),
    )
    .action(
      withRuntime(ctx, async (rt, options) => {
        const { out, globals } = rt;
        const port = devPort(options.port, ctx.env);
        const ip = options.ip.trim();
        if (ip === "" || /\s/.test(ip)) throw new UsageError("--ip must be an address");
        if (options.owner !== true && options.ownerPort !== undefined) throw new UsageError("--owner-port only applies with --owner");
        const owner = options.owner === true ? ownerPort(options.ownerPort, port) : undefined;
        if (owner !== undefined && globals.env !== undefined) throw new UsageError("--owner generates its own local configs and takes no --env");
        const telegramApiOrigin = options.telegramApiOrigin === undefined ? undefined : parseStandInOrigin(options.telegramApiOrigin);
        const target = resolveTarget(ctx, globals, { localOnly: "magnt dev" });
        const split =
          owner === undefined
            ? undefined
            : await prepareLocalSplit({
                local: target.config,
                projectDir: ctx.cwd,
                cwd: ctx.cwd,
                ...(target.persistTo === undefined ? {} : { persistTo: target.persistTo }),
                ip,
                port,
                ownerPort: owner,
                ...(telegramApiOrigin === undefined ? {} : { telegramApiOrigin }),
              });
        if (options.migrate) {
          const result = await applyPendingMigrations(ctx, out, target, globals, { confirmRemote: false });
          out.info(result.upToDate ? "local migrations: up to date" : `local migrations applied: ${result.applied.join(", ")}`);
        }
        if (split !== undefined) {
          await runOwnerDev(rt, split);
          return;
        }
        printDoorRun(rt, port);
        const [inspectorPort] = await freeLoopbackPorts(1, [port]);
        const vars: Array<[string, string]> = [["PUBLIC_ORIGIN", localOrigin(port)]];
        if (telegramApiOrigin !== undefined) vars.push(["TELEGRAM_API_ORIGIN", telegramApiOrigin]);
        const args = wranglerDevArgs({
          config: target.config.path,
          ...(target.env === undefined ? {} : { env: target.env }),
          ip,
          port,
          inspectorPort: inspectorPort!,
          vars,
          ...(target.persistTo === undefined ? {} : { persistTo: target.persistTo }),
        });
        await runProcessGroup(ctx.signals, [wranglerDevMember(ctx, { label: "wrangler dev", args, stdin: true }, out.json)]);
      }),
    );
}

/** The port: `--port`, else `$PORT`, else 8787. */
export function devPort(option: string | undefined, env: Readonly<Record<string, string | undefined>>): number {
  if (option !== undefined) return parseIntegerOption("--port", option, 1, 65_535);
  const fromEnv = env.PORT;
  if (fromEnv !== undefined && fromEnv !== "") return parseIntegerOption("PORT", fromEnv, 1, 65_535);
  return DEV_DEFAULT_PORT;
}

/** The owner gateway's port: `--owner-port`, else `--port` + 1; only with `--owner`, never the door's port. */
export function ownerPort(option: string | undefined, port: number): number {
  const chosen = option === undefined ? port + 1 : parseIntegerOption("--owner-port", option, 1, 65_535);
  if (chosen > 65_535) throw new UsageError(`--port ${port} leaves no default owner port (--port + 1): pass --owner-port`);
  if (chosen === port) throw new UsageError(`--owner-port must differ from --port (both ${port})`);
  return chosen;
}

/**
 * One `wrangler dev` process of the group. Only a process that owns `stdin`
 * reads it (Wrangler's hotkeys must not have three readers); in `--json` mode
 * Wrangler's stdout goes to our stderr, so that stdout stays one JSON line.
 */
function wranglerDevMember(ctx: CliContext, spec: { label: string; args: string[]; stdin: boolean }, json: boolean): GroupMember {
  return {
    label: spec.label,
    start: () => spawnWrangler(ctx, spec.args, { stdio: [spec.stdin ? "inherit" : "ignore", json ? 2 : "inherit", "inherit"], nonInteractive: false }),
  };
}

function printDoorRun(rt: CommandRuntime, port: number): void {
  const { out } = rt;
  const origin = localOrigin(port);
  const cronPass = `one cron pass (Telegram outbox): curl ${scheduledUrl(port)}`;
  if (out.json) {
    out.jsonLine({ url: `${origin}/`, mcp: `${origin}/mcp`, probe: `${origin}/__magnt_probe` });
    out.info(cronPass);
  } else {
    out.line(`MAGNT door: ${origin}/ (MCP: ${origin}/mcp) — starting wrangler dev, Ctrl-C to stop`);
    out.line(cronPass);
  }
}

/** `--owner`: writes the local split configs, prints both URLs and the cron pass, runs the three processes. */
async function runOwnerDev(rt: CommandRuntime, plan: LocalSplitPlan): Promise<void> {
  const { ctx, out } = rt;
  writeLocalSplit(plan);
  printOwnerRun(rt, plan);
  // A private dev registry: the three processes find each other, and nothing else finds them.
  const childCtx: CliContext = { ...ctx, env: { ...ctx.env, WRANGLER_REGISTRY_PATH: plan.registry } };
  await runProcessGroup(
    ctx.signals,
    plan.processes.map((worker) => wranglerDevMember(childCtx, { label: `wrangler dev (${worker.role})`, args: worker.args, stdin: worker.role === "gateway" }, out.json)),
  );
}

function printOwnerRun(rt: CommandRuntime, plan: LocalSplitPlan): void {
  const { out } = rt;
  const door = localOrigin(plan.ports.port);
  const owner = localOrigin(plan.ports.ownerPort);
  const cronPass = `one cron pass (Telegram outbox, on core): curl ${scheduledUrl(plan.ports.corePort)}`;
  const vars = plan.devVars.present
    ? `secrets and flags: ${plan.devVars.source} (read by all three Workers; restart after editing it)`
    : `no ${plan.devVars.source}: the owner gateway answers 404 until it holds OWNER_MCP_ENABLED=true and the owner secrets (docs/owner-activation.md)`;
  if (out.json) {
    out.jsonLine({
      url: `${door}/`,
      mcp: `${door}/mcp`,
      probe: `${door}/__magnt_probe`,
      owner_url: `${owner}/`,
      owner_mcp: `${owner}/mcp`,
      cron: scheduledUrl(plan.ports.corePort),
    });
    out.info(cronPass);
    out.info(vars);
    return;
  }
  out.line(`MAGNT door: ${door}/ (MCP: ${door}/mcp) — split deployment: gateway + core + owner gateway, 3 wrangler dev processes, Ctrl-C to stop`);
  out.line(`MAGNT owner: ${owner}/ (owner MCP: ${owner}/mcp, OAuth: ${owner}/.well-known/oauth-authorization-server)`);
  out.line(cronPass);
  out.line(vars);
}
