/**
 * `magnt dev` (08 §13), also `npm start` / `npm run dev`: the one-command local
 * door. Refuses a port that is taken (one line naming the option), applies
 * pending local migrations (the same code as `magnt migrate`, without asking),
 * runs `wrangler dev` fully offline with inherited stdio, and announces the
 * door only once it answers a real `tools/list` (cli/lib/readiness.ts), so the
 * first request after the announcement is never a 503. SIGINT/SIGTERM are
 * forwarded to the Wrangler process itself, which stops workerd in turn.
 *
 * Local crons never fire by themselves (05 §1): `magnt dev` prints the URL of
 * one cron pass (Wrangler's scheduled-handler URL) of the process where the
 * cron runs. `--telegram-api-origin` points the notifier at a loopback
 * stand-in; anything but a loopback `http` origin is refused here, as the
 * Worker itself would refuse it (00 §7).
 *
 * `--owner` is the whole local owner loop in one command (issue 19): the
 * split deployment (the monolith never serves owner functions, 06 §1) —
 * gateway on `--port`, owner gateway on `--owner-port` (default `--port` + 1),
 * core on a free loopback port, three `wrangler dev` processes on the same
 * local D1 (cli/lib/local-topology.ts says why three, and how they find each
 * other) — plus the GitHub and Telegram stand-ins, and, when the user's
 * `.dev.vars` holds no owner secret, a generated local-only `.dev.vars` with
 * keys, a fake GitHub client and the loop's flags
 * (cli/lib/generated-dev-vars.ts). Core and the stand-ins start first; the
 * gateways join once core is registered, so both start with core already in
 * their dev registry. Once everything answers it prints the URLs, client
 * configurations, the cron pass, where the stand-ins show what was "sent",
 * and how to stop — never a secret value, only the file that holds them.
 *
 * Layout: this file holds the command (options, order of the steps, what is
 * printed); the `wrangler dev` argv is cli/lib/wrangler-dev.ts, the
 * supervision cli/lib/process-group.ts, the split run's plan
 * cli/lib/local-topology.ts (its files and ports local-topology-files.ts,
 * loopback-ports.ts), the stand-ins cli/lib/stand-ins.ts, readiness
 * cli/lib/readiness.ts, the client snippets cli/lib/client-configs.ts.
 */
import { isLoopbackHttpOrigin } from "../../worker/contracts";
import { clientConfigLines, clientConfigs } from "../lib/client-configs";
import { examples, withRuntime, type CommandRuntime, type ParentCommand } from "../lib/command";
import type { CliContext } from "../lib/context";
import { UsageError } from "../lib/errors";
import { prepareLocalSplit, readSplitDevVars, writeLocalSplit } from "../lib/local-topology-files";
import { localOrigin, scheduledUrl, STAND_IN_VARIABLES, type LocalSplitPlan, type StandInRole } from "../lib/local-topology";
import { ensurePortFree, freeLoopbackPorts, LOOPBACK_IP } from "../lib/loopback-ports";
import { applyPendingMigrations } from "../lib/migrations";
import { parseIntegerOption } from "../lib/options";
import { startProcessGroup, type GroupMember, type ProcessGroup } from "../lib/process-group";
import { cronPassCheck, ownerMetadataCheck, publicToolsListCheck, READY_TIMEOUT_MS, registeredCheck, listeningCheck, waitUntilReady, type ReadinessCheck } from "../lib/readiness";
import { standInLabel, standInMember } from "../lib/stand-ins";
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
    .option("--telegram-api-origin <origin>", "send Telegram notifications to a loopback stand-in (the origin node scripts/telegram-stand-in.mjs prints)")
    .option("--owner", "the whole local owner loop: split deployment (gateway + core + owner gateway), GitHub and Telegram stand-ins, local-only secrets when .dev.vars has none")
    .option("--owner-port <n>", "port of the owner gateway with --owner (default: --port + 1)")
    .addHelpText(
      "after",
      examples([
        "npm start",
        "npm start -- --port 9000",
        "magnt dev --persist-to /tmp/magnt-state --no-migrate",
        "magnt dev --telegram-api-origin http://127.0.0.1:41000   # a stand-in's origin; then the printed curl runs one cron pass",
        "npm start -- --owner                 # the whole owner loop: door on 8787, owner MCP on 8788, stand-ins (docs/owner-activation.md)",
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
        await ensurePortFree(ip, port, "--port");
        if (owner !== undefined) await ensurePortFree(ip, owner, "--owner-port");
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
          // Each applied file already had its own line (applyPendingMigrations).
          if (result.upToDate) out.info("local migrations: up to date");
        }
        if (split !== undefined) {
          await runOwnerDev(rt, split, telegramApiOrigin);
          return;
        }
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
        out.info(`starting the door on ${localOrigin(port)} (wrangler dev); it is announced once it answers`);
        const group = startProcessGroup(ctx.signals);
        group.add([wranglerDevMember(ctx, { label: "wrangler dev", args, stdin: true }, out.json)]);
        if ((await untilReady(rt, group, [publicToolsListCheck(fetch, pollOrigin(ip, port))])) === "ready") printDoorRun(rt, port);
        await group.ended;
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

/** The address readiness polls: the listening address, or loopback when it listens on every address. */
export function pollOrigin(ip: string, port: number): string {
  if (ip === "0.0.0.0" || ip === "::" || ip === "[::]") return `http://127.0.0.1:${port}`;
  const host = ip.includes(":") && !ip.startsWith("[") ? `[${ip}]` : ip;
  return `http://${host}:${port}`;
}

/**
 * Waits for `checks` while the group runs. Ready → "ready"; the group ended
 * first (a crash, or Ctrl-C) → "abandoned" and its own outcome follows; the
 * limit passed → the group is stopped and the failure is thrown (exit 3).
 */
async function untilReady(rt: CommandRuntime, group: ProcessGroup, checks: readonly ReadinessCheck[]): Promise<"ready" | "abandoned"> {
  try {
    return await waitUntilReady(checks, { timeoutMs: rt.ctx.devReadyTimeoutMs ?? READY_TIMEOUT_MS, abandon: group.ended });
  } catch (error) {
    group.stop();
    await group.ended.catch(() => undefined);
    throw error;
  }
}

/** How to stop, the same words for both runs. */
const STOP_LINE = "stop: Ctrl-C (stops every process this run started)";

function printDoorRun(rt: CommandRuntime, port: number): void {
  const { out } = rt;
  const origin = localOrigin(port);
  // The command on a line of its own: the banner fits 80 columns and the curl line is copied whole (08 §13).
  const cronPass = [`one cron pass (Telegram outbox, runs on this door, port ${port}):`, `  curl ${scheduledUrl(port)}`];
  if (out.json) {
    out.jsonLine({ url: `${origin}/`, mcp: `${origin}/mcp`, probe: `${origin}/__magnt_probe`, cron: scheduledUrl(port) });
    for (const line of cronPass) out.info(line);
  } else {
    out.line(`MAGNT door: ${origin}/ (MCP: ${origin}/mcp) — ready`);
    for (const line of cronPass) out.line(line);
    out.line(STOP_LINE);
  }
}

/**
 * `--owner`: writes the local split configs (and the generated `.dev.vars`
 * once), starts the stand-ins and core, then the two gateways once core is
 * registered, waits until everything answers through its bindings, prints
 * the loop, and runs until the group ends.
 */
async function runOwnerDev(rt: CommandRuntime, plan: LocalSplitPlan, telegramApiOrigin: string | undefined): Promise<void> {
  const { ctx, out } = rt;
  const generated = writeLocalSplit(plan);
  const devVars = readSplitDevVars(plan);
  out.info(`starting the split run: ${plan.standIns.map((standIn) => standInLabel(standIn.role)).join(", ")}${plan.standIns.length > 0 ? ", " : ""}core, then the gateway and the owner gateway; announced once everything answers`);
  // A private dev registry: the three processes find each other, and nothing else finds them.
  const childCtx: CliContext = { ...ctx, env: { ...ctx.env, WRANGLER_REGISTRY_PATH: plan.registry } };
  const relaySink = out.json ? ctx.stderr : ctx.stdout;
  const relay = (line: string) => relaySink.write(`${line}\n`);
  const member = (role: "core" | "gateway" | "owner") => {
    const worker = plan.processes.find((process) => process.role === role)!;
    return wranglerDevMember(childCtx, { label: `wrangler dev (${role})`, args: worker.args, stdin: role === "gateway" }, out.json);
  };
  const core = plan.processes.find((process) => process.role === "core")!;
  const group = startProcessGroup(ctx.signals);
  group.add([...plan.standIns.map((standIn) => standInMember(ctx, standIn, devVars, relay)), member("core")]);
  const first: ReadinessCheck[] = [
    ...plan.standIns.map((standIn) => listeningCheck(`the ${standInLabel(standIn.role)} at ${standIn.origin}`, LOOPBACK_IP, standIn.port)),
    registeredCheck(plan.registry, String(core.config.name)),
  ];
  if ((await untilReady(rt, group, first)) === "abandoned") return group.ended;
  group.add([member("gateway"), member("owner")]);
  let ownerStatus = 0;
  const notifying = devVars.get("TELEGRAM_NOTIFICATIONS_ENABLED") === "true";
  const second = [
    publicToolsListCheck(fetch, pollOrigin(plan.ports.ip, plan.ports.port)),
    ownerMetadataCheck(fetch, pollOrigin(plan.ports.ip, plan.ports.ownerPort), (status) => (ownerStatus = status)),
    // Pins the notifications' activation now, so the owner's first pass after a new contact sends it.
    ...(notifying ? [cronPassCheck(fetch, scheduledUrl(plan.ports.corePort))] : []),
  ];
  if ((await untilReady(rt, group, second)) === "ready") printOwnerRun(rt, plan, { generated, ownerStatus, devVars, telegramApiOrigin, notifying });
  return group.ended;
}

interface OwnerRunFacts {
  /** Whether this run created the generated `.dev.vars`. */
  generated: boolean;
  /** What the owner gateway answered its metadata request (200, 404 or 503). */
  ownerStatus: number;
  devVars: ReadonlyMap<string, string>;
  telegramApiOrigin: string | undefined;
  /** TELEGRAM_NOTIFICATIONS_ENABLED is on: a first cron pass already ran. */
  notifying: boolean;
}

function printOwnerRun(rt: CommandRuntime, plan: LocalSplitPlan, facts: OwnerRunFacts): void {
  const { out } = rt;
  const door = localOrigin(plan.ports.port);
  const owner = localOrigin(plan.ports.ownerPort);
  const cron = scheduledUrl(plan.ports.corePort);
  const standIn = (role: StandInRole) => plan.standIns.find((entry) => entry.role === role);
  if (out.json) {
    out.jsonLine({
      url: `${door}/`,
      mcp: `${door}/mcp`,
      probe: `${door}/__magnt_probe`,
      owner_url: `${owner}/`,
      owner_mcp: `${owner}/mcp`,
      owner_status: facts.ownerStatus,
      cron,
      dev_vars: plan.devVars.source,
      dev_vars_kind: plan.devVars.kind,
      stand_ins: Object.fromEntries(plan.standIns.map((entry) => [entry.role, entry.origin])),
    });
    return;
  }
  out.line(`MAGNT door: ${door}/ (MCP: ${door}/mcp) — ready: gateway + core + owner gateway, 3 wrangler dev processes`);
  out.line(`MAGNT owner: ${owner}/ (owner MCP: ${owner}/mcp, OAuth: ${owner}/.well-known/oauth-authorization-server)`);
  if (facts.ownerStatus === 404) out.line(`  the owner gateway answers 404: OWNER_MCP_ENABLED is not "true" in ${plan.devVars.source} (magnt flags enable OWNER_MCP_ENABLED --owner, then restart)`);
  if (facts.ownerStatus === 503) out.line(`  the owner gateway answers 503: OWNER_MCP_ENABLED is on but an owner secret in ${plan.devVars.source} is missing or malformed (docs/owner-activation.md §2)`);
  out.line(`one cron pass (Telegram outbox; the cron runs on core, port ${plan.ports.corePort}): curl ${cron}`);
  if (facts.notifying) out.line("  notifications are on: a first pass already ran, so a contact left from now on is sent at the next pass");
  out.line(
    plan.devVars.kind === "generated"
      ? `secrets and flags: ${plan.devVars.source} (local-only values ${facts.generated ? "generated now" : "generated by an earlier run"}, never printed; flags: magnt flags list|enable|disable --owner; restart after a change)`
      : `secrets and flags: ${plan.devVars.source} (your .dev.vars: it holds owner secrets, so nothing is generated; flags: magnt flags list|enable|disable --owner; restart after a change)`,
  );
  if (plan.devVars.kind === "generated" && plan.devVars.user.present) {
    out.line(`  ${plan.devVars.user.path} holds no owner secret, so --owner does not read it (plain npm start still does)`);
  }
  const github = standIn("github");
  out.line(
    github === undefined
      ? `GitHub: ${STAND_IN_VARIABLES.github.join("/")} from ${plan.devVars.source}; no stand-in started`
      : `GitHub: stand-in at ${github.origin}, signs you in as the owner at once; its requests show here as "${standInLabel("github")}:" lines`,
  );
  const telegram = standIn("telegram");
  out.line(
    telegram !== undefined
      ? `Telegram: stand-in at ${telegram.origin}; every message it receives shows here as "${standInLabel("telegram")}:" lines`
      : facts.telegramApiOrigin !== undefined
        ? `Telegram: ${facts.telegramApiOrigin} (--telegram-api-origin); no stand-in started`
        : `Telegram: TELEGRAM_API_ORIGIN from ${plan.devVars.source}; no stand-in started`,
  );
  for (const line of clientConfigLines(clientConfigs(`${door}/mcp`, `${owner}/mcp`))) out.line(line);
  out.line(STOP_LINE);
}
