/**
 * `magnt dev` (08 §13) with Wrangler stubbed: port precedence, local only,
 * a taken port refused before anything runs, migrations first (no
 * confirmation), the exact `wrangler dev` argv with inherited stdio, the door
 * announced only once a real `tools/list` answers (fake `wrangler dev`
 * processes that listen on their ports, answering 503 first), signal
 * forwarding and exit codes; with `--owner`, the whole local owner loop: the
 * stand-ins and core first, the gateways once core is in the dev registry,
 * the generated local-only `.dev.vars` (written once, never over an existing
 * file, never printed), generated configs, shared state, the printed loop and
 * the Telegram stand-in's messages relayed without the chat id.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { EventEmitter } from "node:events";
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { join } from "node:path";
import { devPort } from "../../cli/commands/dev";
import { parseDevVars } from "../../cli/lib/dev-vars";
import { GENERATED_FLAGS, GENERATED_MARKER, GENERATED_SECRETS } from "../../cli/lib/generated-dev-vars";
import { d1Error, d1Rows, installFakeWrangler, REPO_ROOT, repoMigrationNames, runMagnt, tempProject, type FakeAnswer, type RunOptions, type SpawnCall } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const ALL = repoMigrationNames();
const TOOLS_LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools: [{ name: "about_alexander", inputSchema: { type: "object" } }] } });

/** `count` distinct ports that were free a moment ago. */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const server = createTcpServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (!ports.includes(port)) ports.push(port);
  }
  return ports;
}

const option = (call: SpawnCall, name: string): string => call.args[call.args.indexOf(name) + 1]!;

/** What the fake door processes answered, in order ("503", "200", "owner 200"). */
interface Served {
  answers: string[];
  /** The stdout printed so far when each answer was sent. */
  printedAt: string[];
}

/**
 * A fake `wrangler dev` that listens on its `--ip`/`--port` like the real one:
 * POST /mcp answers 503 `failures` times, then a tool list; the owner
 * gateway's metadata answers `ownerStatus`. Closed when the child ends.
 */
function listeningDoor(call: SpawnCall, served: Served, printed: () => string, behaviour: { failures: number; ownerStatus: number }): () => void {
  let failures = behaviour.failures;
  const server: Server = createHttpServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const record = (answer: string) => {
        served.answers.push(answer);
        served.printedAt.push(printed());
      };
      if (request.method === "POST" && request.url === "/mcp") {
        if (failures > 0) {
          failures -= 1;
          record("503");
          response.writeHead(503).end("Service temporarily unavailable");
          return;
        }
        record("200");
        response.writeHead(200, { "content-type": "application/json" }).end(TOOLS_LIST);
        return;
      }
      if (request.url === "/cdn-cgi/handler/scheduled") {
        record("cron");
        response.writeHead(200).end("ok");
        return;
      }
      if (request.url === "/.well-known/oauth-authorization-server") {
        record(`owner ${behaviour.ownerStatus}`);
        response.writeHead(behaviour.ownerStatus, { "content-type": "application/json" }).end("{}");
        return;
      }
      response.writeHead(404).end();
    });
  });
  server.listen(Number(option(call, "--port")), option(call, "--ip"));
  return () => server.close();
}

/** A fake stand-in: it accepts connections on its `--port` and writes `stdout` lines. */
function listeningStandIn(call: SpawnCall): () => void {
  const server = createTcpServer((socket) => socket.destroy());
  server.listen(Number(option(call, "--port")), "127.0.0.1");
  return () => server.close();
}

interface FakeRun {
  calls: SpawnCall[];
  children: ReturnType<typeof installFakeWrangler>["children"];
  served: Served;
  /** Set as `onStdout` of the run, so each answer knows what was printed before it. */
  onStdout: (chunk: string) => void;
}

/**
 * Fake Wrangler for `magnt dev`: migrations answered from `applied`; each
 * `dev` process listens and serves (or answers `dev` when given); core
 * registers itself in the run's dev registry after `registerAfterMs`; the
 * stand-ins listen, the Telegram one writing `telegramLines`.
 */
function fakeDev(options: { applied?: string[]; dev?: FakeAnswer; failures?: number; ownerStatus?: number; registerAfterMs?: number; telegramLines?: string[] } = {}): FakeRun {
  let applied = options.applied ?? ALL;
  let printed = "";
  const served: Served = { answers: [], printedAt: [] };
  const { calls, children } = installFakeWrangler(spawnMock, (args, call) => {
    if (call.script.endsWith("telegram-stand-in.mjs")) return { hang: true, started: () => listeningStandIn(call), stdout: (options.telegramLines ?? []).map((line) => `${line}\n`).join("") };
    if (call.script.endsWith("github-stand-in.mjs")) return { hang: true, started: () => listeningStandIn(call) };
    if (args[0] === "dev") {
      if (options.dev !== undefined) return options.dev;
      if (args[2]?.endsWith("core.local.json")) {
        const registry = call.options.env!.WRANGLER_REGISTRY_PATH!;
        return {
          hang: true,
          started: () => {
            const close = listeningDoor(call, served, () => printed, { failures: 0, ownerStatus: 404 });
            const timer = setTimeout(() => writeFileSync(join(registry, "magnt-core"), "{}"), options.registerAfterMs ?? 50);
            return () => {
              clearTimeout(timer);
              close();
            };
          },
        };
      }
      return { hang: true, started: () => listeningDoor(call, served, () => printed, { failures: options.failures ?? 0, ownerStatus: options.ownerStatus ?? 200 }) };
    }
    if (args[1] === "migrations") {
      applied = ALL;
      return { code: 0 };
    }
    return applied.length === 0 ? d1Error("no such table: d1_migrations") : d1Rows(applied.map((name) => ({ name })));
  });
  return { calls, children, served, onStdout: (chunk) => (printed += chunk) };
}

/** Runs `magnt dev …` until `ready` appears on stdout, then sends SIGINT; resolves with the run. */
async function runUntilReady(argv: string[], fake: FakeRun, ready: string, options: RunOptions = {}) {
  const signals = new EventEmitter();
  let stdout = "";
  const running = runMagnt(argv, {
    ...options,
    signals,
    onStdout: (chunk) => {
      stdout += chunk;
      fake.onStdout(chunk);
    },
  });
  let settled = false;
  void running.finally(() => (settled = true));
  await vi.waitFor(() => expect(settled || stdout.includes(ready)).toBe(true), { timeout: 20_000, interval: 20 });
  signals.emit("SIGINT");
  return running;
}

describe("port", () => {
  it("--port, else PORT, else 8787", () => {
    expect(devPort("9000", { PORT: "9100" })).toBe(9000);
    expect(devPort(undefined, { PORT: "9100" })).toBe(9100);
    expect(devPort(undefined, {})).toBe(8787);
    expect(devPort(undefined, { PORT: "" })).toBe(8787);
  });
  it.each(["0", "65536", "80a", "-1"])("--port %s → exit 2", async (port) => {
    const { calls } = fakeDev();
    const run = await runMagnt(["dev", "--port", port]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });
  it("a bad PORT variable → exit 2", async () => {
    fakeDev();
    expect((await runMagnt(["dev"], { env: { PORT: "http" } })).code).toBe(2);
  });
  it("a port something listens on → exit 3 with one line naming it and --port, before migrations or wrangler dev", async () => {
    const { calls } = fakeDev({ applied: [] });
    const taken = createTcpServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as { port: number };
    try {
      const run = await runMagnt(["dev", "--port", String(port), "--json"]);
      expect(run.code).toBe(3);
      expect(run.stderr.trim().split("\n")).toEqual([`magnt: port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another port with --port <n>`]);
      expect(run.lastJson()).toMatchObject({ error: { code: "environment" } });
      expect(calls).toHaveLength(0);
    } finally {
      taken.close();
    }
  });
});

describe("magnt dev", () => {
  it("--remote → exit 2", async () => {
    const { calls } = fakeDev();
    const run = await runMagnt(["dev", "--remote"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("applies pending migrations without asking, runs wrangler dev with the exact argv and inherited stdio, and announces the door only after a tools/list answered 200", async () => {
    const [port] = (await freePorts(1)) as [number];
    const fake = fakeDev({ applied: [], failures: 2 });
    const run = await runUntilReady(["dev", "--port", String(port), "--persist-to", "/tmp/state"], fake, "MAGNT door:", { tty: true });
    expect(run.code).toBe(0);
    const { calls } = fake;
    expect(calls.map((call) => (call.args[0] === "dev" ? "dev" : call.args.slice(0, 2).join(" ")))).toEqual(["d1 execute", "d1 migrations", "d1 execute", "dev"]);
    const dev = calls.at(-1)!;
    expect(dev.command).toBe(process.execPath);
    expect(dev.options.shell).toBe(false);
    expect(dev.options.stdio).toEqual(["inherit", "inherit", "inherit"]);
    expect(dev.options.env).toMatchObject({ WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" });
    const inspector = Number(option(dev, "--inspector-port"));
    expect(dev.args).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "127.0.0.1", "--port", String(port),
      "--inspector-port", String(inspector), "--var", `PUBLIC_ORIGIN:http://localhost:${port}`, "--persist-to", "/tmp/state",
    ]);
    // Its own free inspector port, so two doors started at once never race for 9229.
    expect(Number.isInteger(inspector) && inspector > 0 && inspector !== port).toBe(true);
    expect(run.lines).toContain(`MAGNT door: http://localhost:${port}/ (MCP: http://localhost:${port}/mcp) — ready`);
    expect(run.stdout).toContain(`one cron pass (Telegram outbox, runs on this door, port ${port}):\n  curl http://127.0.0.1:${port}/cdn-cgi/handler/scheduled\n`);
    // The two 503s came before the announcement; the 200 that made it ready too.
    expect(fake.served.answers).toEqual(["503", "503", "200"]);
    expect(fake.served.printedAt.every((printed) => !printed.includes("MAGNT door:"))).toBe(true);
  });

  it("uses PORT when --port is absent; --ip and --no-migrate", async () => {
    const [port] = (await freePorts(1)) as [number];
    const { calls } = fakeDev({ dev: { code: 0 } });
    const run = await runMagnt(["dev", "--ip", "0.0.0.0", "--no-migrate"], { env: { PORT: String(port) } });
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(1);
    const inspector = option(calls[0]!, "--inspector-port");
    expect(calls[0]!.args).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "0.0.0.0", "--port", String(port),
      "--inspector-port", inspector, "--var", `PUBLIC_ORIGIN:http://localhost:${port}`,
    ]);
    // It ended before it answered: nothing was announced.
    expect(run.stdout).not.toContain("MAGNT door:");
  });

  it("--json keeps stdout to one JSON line, printed once ready (Wrangler's stdout goes to stderr)", async () => {
    const [port] = (await freePorts(1)) as [number];
    const fake = fakeDev();
    const run = await runUntilReady(["dev", "--json", "--no-migrate", "--port", String(port)], fake, "\n");
    expect(run.code).toBe(0);
    expect(run.lines).toHaveLength(1);
    expect(JSON.parse(run.stdout)).toEqual({
      url: `http://localhost:${port}/`,
      mcp: `http://localhost:${port}/mcp`,
      probe: `http://localhost:${port}/__magnt_probe`,
      cron: `http://127.0.0.1:${port}/cdn-cgi/handler/scheduled`,
    });
    expect(fake.calls[0]!.options.stdio).toEqual(["inherit", 2, "inherit"]);
  });

  it("inconsistent migrations stop dev with exit 1 before wrangler dev starts", async () => {
    const { calls } = fakeDev({ applied: ["0001_contacts.sql", "0002_old_name.sql"] });
    const run = await runMagnt(["dev", "--port", String((await freePorts(1))[0])]);
    expect(run.code).toBe(1);
    expect(calls.some((call) => call.args[0] === "dev")).toBe(false);
  });

  it.each(["SIGINT", "SIGTERM"] as const)("forwards %s to the Wrangler process and exits 0", async (signal) => {
    const signals = new EventEmitter();
    const { children } = fakeDev({ dev: { hang: true } });
    const running = runMagnt(["dev", "--no-migrate", "--port", String((await freePorts(1))[0])], { signals });
    await vi.waitFor(() => expect(signals.listenerCount(signal)).toBe(1));
    signals.emit(signal);
    const run = await running;
    expect(children[0]!.killedWith).toEqual([signal]);
    expect(run.code).toBe(0);
    expect(signals.listenerCount(signal)).toBe(0);
  });

  it("Wrangler failing on its own → exit 3", async () => {
    fakeDev({ dev: { code: 1, stderr: "Address already in use\n" } });
    const run = await runMagnt(["dev", "--no-migrate", "--json", "--port", String((await freePorts(1))[0])]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: "wrangler dev ended with exit code 1" } });
  });

  it("a door that never answers: exit 3 naming the check after the limit, and wrangler dev is stopped", async () => {
    const [port] = (await freePorts(1)) as [number];
    const { children } = fakeDev({ dev: { hang: true } });
    const run = await runMagnt(["dev", "--no-migrate", "--port", String(port)], { devReadyTimeoutMs: 1500 });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`the public tools/list at http://127.0.0.1:${port}/mcp did not answer within 2 s`);
    expect(children[0]!.killedWith).toEqual(["SIGTERM"]);
    expect(run.stdout).not.toContain("MAGNT door:");
  });
});

describe("magnt dev --owner (the whole local owner loop)", () => {
  /** A temp project: the local config, migrations, the real core and gateway configs and an owner config as 00 §3 defines it. */
  function splitProject(options: { devVars?: string } = {}): string {
    const dir = tempProject();
    for (const file of ["wrangler.core.jsonc", "wrangler.gateway.jsonc"]) cpSync(join(REPO_ROOT, file), join(dir, file));
    writeFileSync(join(dir, "wrangler.owner.jsonc"), OWNER_CONFIG);
    if (options.devVars !== undefined) writeFileSync(join(dir, ".dev.vars"), options.devVars);
    return dir;
  }
  const OWNER_CONFIG = `// fixture: magnt-owner as 00 §3 defines it
{
  "name": "magnt-owner",
  "main": "worker/entries/owner-gateway.ts",
  "compatibility_date": "2026-04-01",
  "minify": true,
  "keep_vars": true,
  "workers_dev": false,
  "routes": [{ "pattern": "owner.magnt.ru", "custom_domain": true }],
  "vars": { "OWNER_ORIGIN": "https://owner.magnt.ru", "ALLOWED_HOSTS": "owner.magnt.ru", "OWNER_REDIRECT_ORIGINS": "https://claude.ai,https://chatgpt.com" },
  "services": [{ "binding": "OWNER_CORE", "service": "magnt-core", "entrypoint": "OwnerEntrypoint" }],
  "triggers": { "crons": [] },
  "observability": { "enabled": true, "head_sampling_rate": 1, "logs": { "invocation_logs": false }, "traces": { "enabled": false } },
}
`;
  /** The role of a spawn of the split run: a `wrangler dev` by its generated config, a stand-in by its script. */
  const roleOf = (call: SpawnCall): string =>
    /([a-z]+)-stand-in\.mjs$/.exec(call.script)?.[1] ?? /([a-z]+)\.local\.json$/.exec(call.args[2] ?? "")?.[1] ?? "?";
  const devCalls = (calls: SpawnCall[]): SpawnCall[] => calls.filter((call) => call.args[0] === "dev");
  const generated = (dir: string, port: number, role: string): Record<string, unknown> =>
    JSON.parse(readFileSync(join(dir, ".wrangler", `magnt-dev-split-${port}`, `${role}.local.json`), "utf8")) as Record<string, unknown>;
  const generatedDevVars = (dir: string) => join(dir, ".wrangler", "magnt-dev-owner", ".dev.vars");
  const READY = "stop: Ctrl-C";

  it("starts the stand-ins and core first, the gateways once core is registered, and prints the whole loop once both gateways answer", async () => {
    const dir = splitProject();
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const fake = fakeDev({ applied: [], failures: 1, registerAfterMs: 300 });
    const registry = join(dir, ".wrangler", `magnt-dev-split-${port}`, "registry");
    const registeredAtSpawn: Record<string, boolean> = {};
    spawnMock.mockImplementation(
      ((original) =>
        (...args: Parameters<typeof childProcess.spawn>) => {
          const argv = args[1] as string[];
          registeredAtSpawn[/([a-z]+)(?:\.local\.json|-stand-in\.mjs)$/.exec(argv.find((arg) => /\.local\.json$|-stand-in\.mjs$/.test(arg)) ?? "")?.[1] ?? "?"] = existsSync(join(registry, "magnt-core"));
          return original(...args);
        })(spawnMock.getMockImplementation()!) as typeof childProcess.spawn,
    );
    const run = await runUntilReady(["dev", "--owner", "--port", String(port), "--owner-port", String(ownerPort), "--ip", "0.0.0.0"], fake, READY, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const { calls } = fake;
    expect(calls.map((call) => (call.args[0] === "dev" || call.script.endsWith(".mjs") ? roleOf(call) : call.args.slice(0, 2).join(" ")))).toEqual([
      "d1 execute", "d1 migrations", "d1 execute", "github", "telegram", "core", "gateway", "owner",
    ]);
    // Core was in the dev registry before either gateway started, so both start with it connected.
    expect(registeredAtSpawn).toMatchObject({ core: false, gateway: true, owner: true });

    const [core, gateway, owner] = devCalls(calls);
    const splitDir = join(dir, ".wrangler", `magnt-dev-split-${port}`);
    const state = join(dir, ".wrangler", "state");
    const corePort = Number(option(core!, "--port"));
    const inspectors = [core!, gateway!, owner!].map((call) => Number(option(call, "--inspector-port")));
    expect(gateway!.args).toEqual([
      "dev", "--config", join(splitDir, "gateway.local.json"), "--local", "--ip", "0.0.0.0", "--port", String(port),
      "--inspector-port", String(inspectors[1]), "--persist-to", state,
    ]);
    expect(owner!.args).toEqual([
      "dev", "--config", join(splitDir, "owner.local.json"), "--local", "--ip", "0.0.0.0", "--port", String(ownerPort),
      "--inspector-port", String(inspectors[2]), "--persist-to", state,
    ]);
    // Core listens on loopback only, whatever --ip says; its port serves the cron pass.
    expect(core!.args).toEqual([
      "dev", "--config", join(splitDir, "core.local.json"), "--local", "--ip", "127.0.0.1", "--port", String(corePort),
      "--inspector-port", String(inspectors[0]), "--persist-to", state,
    ]);
    const [github, telegram] = calls.filter((call) => call.script.endsWith(".mjs"));
    expect(github!.script).toBe(join(REPO_ROOT, "scripts", "github-stand-in.mjs"));
    expect(telegram!.script).toBe(join(REPO_ROOT, "scripts", "telegram-stand-in.mjs"));
    const githubPort = Number(option(github!, "--port"));
    const telegramPort = Number(option(telegram!, "--port"));
    expect(github!.args).toEqual(["--port", String(githubPort), "--auto"]);
    expect(telegram!.args).toEqual(["--port", String(telegramPort)]);
    // Every port distinct: nothing of the run clashes with anything else of it.
    expect(new Set([port, ownerPort, corePort, githubPort, telegramPort, ...inspectors]).size).toBe(8);
    for (const call of [core!, gateway!, owner!]) {
      expect(call.command).toBe(process.execPath);
      expect(call.options.shell).toBe(false);
      expect(call.options.env).toMatchObject({ WRANGLER_REGISTRY_PATH: registry, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" });
    }
    // Only the door's process reads the terminal (Wrangler's hotkeys need one reader).
    expect(gateway!.options.stdio).toEqual(["inherit", "inherit", "inherit"]);
    expect(core!.options.stdio).toEqual(["ignore", "inherit", "inherit"]);
    expect(owner!.options.stdio).toEqual(["ignore", "inherit", "inherit"]);

    // The announcement came after the public tools/list (one 503 first) and the owner metadata both answered.
    // With notifications on, a first cron pass on core pinned their activation before the announcement.
    expect(fake.served.answers).toEqual(["503", "200", "owner 200", "cron"]);
    expect(fake.served.printedAt.every((printed) => !printed.includes("MAGNT door:"))).toBe(true);
    const devVarsPath = generatedDevVars(dir);
    const door = `http://localhost:${port}`;
    const ownerOrigin = `http://localhost:${ownerPort}`;
    const printed = run.lines.slice(run.lines.findIndex((line) => line.startsWith("MAGNT door:")));
    expect(printed).toEqual([
      `MAGNT door: ${door}/ (MCP: ${door}/mcp) — ready: gateway + core + owner gateway, 3 wrangler dev processes`,
      `MAGNT owner: ${ownerOrigin}/ (owner MCP: ${ownerOrigin}/mcp, OAuth: ${ownerOrigin}/.well-known/oauth-authorization-server)`,
      `one cron pass (Telegram outbox; the cron runs on core, port ${corePort}): curl http://127.0.0.1:${corePort}/cdn-cgi/handler/scheduled`,
      "  notifications are on: a first pass already ran, so a contact left from now on is sent at the next pass",
      `secrets and flags: ${devVarsPath} (local-only values generated now, never printed; flags: magnt flags list|enable|disable --owner; restart after a change)`,
      `GitHub: stand-in at http://127.0.0.1:${githubPort}, signs you in as the owner at once; its requests show here as "github stand-in:" lines`,
      `Telegram: stand-in at http://127.0.0.1:${telegramPort}; every message it receives shows here as "telegram stand-in:" lines`,
      "connect a client (docs/clients.md):",
      `  Claude Code:    claude mcp add --transport http magnt-owner ${ownerOrigin}/mcp`,
      `                  claude mcp add --transport http magnt-door ${door}/mcp`,
      `  Claude Desktop (claude_desktop_config.json): {"mcpServers":{"magnt-owner":{"command":"npx","args":["-y","mcp-remote","${ownerOrigin}/mcp"]},"magnt-door":{"command":"npx","args":["-y","mcp-remote","${door}/mcp"]}}}`,
      `  VS Code (.vscode/mcp.json): {"servers":{"magnt-owner":{"type":"stdio","command":"npx","args":["-y","mcp-remote","${ownerOrigin}/mcp"]},"magnt-door":{"type":"http","url":"${door}/mcp"}}}`,
      `  Cursor (.cursor/mcp.json): {"mcpServers":{"magnt-owner":{"command":"npx","args":["-y","mcp-remote","${ownerOrigin}/mcp"]},"magnt-door":{"url":"${door}/mcp"}}}`,
      "stop: Ctrl-C (stops every process this run started)",
    ]);
  });

  it("generates the local-only .dev.vars once (marker, mode 0600, the loop's flags), never prints a value, and keeps it as it is on the next run", async () => {
    const dir = splitProject();
    const [port] = (await freePorts(1)) as [number];
    const fake = fakeDev();
    const run = await runUntilReady(["dev", "--owner", "--no-migrate", "--port", String(port), "--owner-port", String((await freePorts(1))[0])], fake, READY, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const path = generatedDevVars(dir);
    const text = readFileSync(path, "utf8");
    expect(text.split("\n")[0]).toBe(GENERATED_MARKER);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const values = parseDevVars(text);
    for (const flag of GENERATED_FLAGS) expect(values.get(flag)).toBe("true");
    expect(values.get("TELEGRAM_GOAL_NOTIFICATIONS_ENABLED")).toBeUndefined();
    expect(values.get("OWNER_GITHUB_ID")).toMatch(/^[1-9][0-9]{8}$/);
    expect(Buffer.from(values.get("OWNER_TOKEN_SIGNING_KEY")!, "base64url")).toHaveLength(32);
    expect(Buffer.from(values.get("DIALOGUE_TOKEN_KEY")!, "base64url")).toHaveLength(32);
    expect(values.get("TELEGRAM_BOT_TOKEN")).toMatch(/^[0-9]{1,20}:[A-Za-z0-9_-]{1,200}$/);
    expect(values.get("TELEGRAM_OWNER_CHAT_ID")).toMatch(/^[1-9][0-9]+$/);
    // The split directory's .dev.vars is a link to it (one copy of the secrets on disk).
    const linked = join(dir, ".wrangler", `magnt-dev-split-${port}`, ".dev.vars");
    expect(lstatSync(linked).isSymbolicLink()).toBe(true);
    expect(readFileSync(linked, "utf8")).toBe(text);
    // The user's .dev.vars is not created, and no generated value reaches stdout, stderr or any command line.
    expect(existsSync(join(dir, ".dev.vars"))).toBe(false);
    const github = fake.calls.find((call) => call.script.endsWith("github-stand-in.mjs"))!;
    for (const name of GENERATED_SECRETS) {
      const value = values.get(name)!;
      expect(run.stdout).not.toContain(value);
      expect(run.stderr).not.toContain(value);
      for (const call of fake.calls) expect(call.args.join(" ")).not.toContain(value);
    }
    // The GitHub stand-in signs in as the generated owner id and checks the generated client, told through its environment.
    expect(github.options.env).toMatchObject({
      OWNER_GITHUB_ID: values.get("OWNER_GITHUB_ID"),
      GITHUB_CLIENT_ID: values.get("GITHUB_CLIENT_ID"),
      GITHUB_CLIENT_SECRET: values.get("GITHUB_CLIENT_SECRET"),
    });

    const again = await runUntilReady(["dev", "--owner", "--no-migrate", "--port", String(port), "--owner-port", String((await freePorts(1))[0])], fakeDev(), READY, { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(again.stdout).toContain(`secrets and flags: ${path} (local-only values generated by an earlier run, never printed;`);
  });

  it("a .dev.vars without owner secrets is never touched, not read by --owner, and said so", async () => {
    const mine = "# my notifications setup\nTELEGRAM_BOT_TOKEN=123456:my-own-token\nTELEGRAM_API_ORIGIN=http://127.0.0.1:8790\n";
    const dir = splitProject({ devVars: mine });
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const fake = fakeDev();
    const run = await runUntilReady(["dev", "--owner", "--no-migrate", "--port", String(port), "--owner-port", String(ownerPort)], fake, READY, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(dir, ".dev.vars"), "utf8")).toBe(mine);
    expect(run.lines).toContain(`  ${join(dir, ".dev.vars")} holds no owner secret, so --owner does not read it (plain npm start still does)`);
    // Its TELEGRAM_API_ORIGIN does not apply to the split run: core is pointed at the run's own stand-in.
    const telegram = fake.calls.find((call) => call.script.endsWith("telegram-stand-in.mjs"))!;
    expect(generated(dir, port, "core").vars).toMatchObject({ TELEGRAM_API_ORIGIN: `http://127.0.0.1:${option(telegram, "--port")}` });
    expect(readFileSync(join(dir, ".wrangler", `magnt-dev-split-${port}`, ".dev.vars"), "utf8")).toBe(readFileSync(generatedDevVars(dir), "utf8"));
  });

  it("a .dev.vars with owner secrets is the split run's: linked, nothing generated, its own origins kept (no stand-in for them)", async () => {
    const mine = "OWNER_MCP_ENABLED=true\nOWNER_GITHUB_ID=12345\nGITHUB_OAUTH_ORIGIN=http://127.0.0.1:8790\nGITHUB_API_ORIGIN=http://127.0.0.1:8790\n";
    const dir = splitProject();
    mkdirSync(join(dir, "conf"));
    cpSync(join(dir, "wrangler.local.jsonc"), join(dir, "conf", "local.jsonc"));
    writeFileSync(join(dir, "conf", ".dev.vars"), mine);
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const fake = fakeDev({ ownerStatus: 503 });
    const argv = ["dev", "--owner", "--no-migrate", "--owner-port", String(ownerPort), "--config", "conf/local.jsonc", "--persist-to", "state"];
    const run = await runUntilReady(argv, fake, READY, { cwd: dir, env: { PORT: String(port) } });
    expect(run.code, run.stderr).toBe(0);
    const splitDir = join(dir, "conf", ".wrangler", `magnt-dev-split-${port}`);
    const dev = devCalls(fake.calls);
    expect(dev.map((call) => option(call, "--persist-to"))).toEqual([join(dir, "state"), join(dir, "state"), join(dir, "state")]);
    expect(dev.map((call) => option(call, "--port")).slice(1)).toEqual([String(port), String(ownerPort)]);
    expect(readFileSync(join(splitDir, ".dev.vars"), "utf8")).toBe(mine);
    expect(lstatSync(join(splitDir, ".dev.vars")).isSymbolicLink()).toBe(true);
    expect(existsSync(join(dir, "conf", ".wrangler", "magnt-dev-owner"))).toBe(false);
    expect(fake.calls.map(roleOf).filter((role) => role === "github" || role === "telegram")).toEqual(["telegram"]);
    expect(generated(join(dir, "conf"), port, "owner").vars).toEqual({ ALLOWED_HOSTS: "", OWNER_ORIGIN: `http://localhost:${ownerPort}`, OWNER_REDIRECT_ORIGINS: "" });
    const devVars = join(dir, "conf", ".dev.vars");
    expect(run.lines).toContain(`secrets and flags: ${devVars} (your .dev.vars: it holds owner secrets, so nothing is generated; flags: magnt flags list|enable|disable --owner; restart after a change)`);
    expect(run.lines).toContain(`GitHub: GITHUB_OAUTH_ORIGIN/GITHUB_API_ORIGIN from ${devVars}; no stand-in started`);
    expect(run.lines).toContain(`  the owner gateway answers 503: OWNER_MCP_ENABLED is on but an owner secret in ${devVars} is missing or malformed (docs/owner-activation.md §2)`);
    // Notifications are off in this .dev.vars: no cron pass ran.
    expect(fake.served.answers).toEqual(["200", "owner 503"]);

    // The .dev.vars is removed: so is the link, and the generated local-only file takes its place.
    rmSync(devVars);
    const again = await runUntilReady(argv, fakeDev(), READY, { cwd: dir, env: { PORT: String(port) } });
    expect(again.code).toBe(0);
    expect(lstatSync(join(splitDir, ".dev.vars")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(splitDir, ".dev.vars"), "utf8").split("\n")[0]).toBe(GENERATED_MARKER);
  });

  it("generates local configs: local variables, the stand-ins' origins, the local database, absolute entry modules, nothing production-only", async () => {
    const dir = splitProject();
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const fake = fakeDev();
    const run = await runUntilReady(["dev", "--owner", "--no-migrate", "--port", String(port), "--owner-port", String(ownerPort), "--telegram-api-origin", "http://127.0.0.1:8790"], fake, READY, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    // --telegram-api-origin names the Telegram origin: no Telegram stand-in.
    expect(fake.calls.map(roleOf).filter((role) => role === "github" || role === "telegram")).toEqual(["github"]);
    expect(run.lines).toContain("Telegram: http://127.0.0.1:8790 (--telegram-api-origin); no stand-in started");
    const githubOrigin = `http://127.0.0.1:${option(fake.calls.find((call) => call.script.endsWith("github-stand-in.mjs"))!, "--port")}`;
    expect(generated(dir, port, "core")).toEqual({
      name: "magnt-core",
      compatibility_date: "2026-04-01",
      triggers: { crons: ["* * * * *"] },
      main: join(dir, "worker/entries/core.ts"),
      vars: { PUBLIC_ORIGIN: `http://localhost:${port}`, ALLOWED_HOSTS: "", OWNER_ORIGIN: `http://localhost:${ownerPort}`, TELEGRAM_API_ORIGIN: "http://127.0.0.1:8790" },
      d1_databases: [
        { binding: "CONTACTS", database_name: "magnt-contacts-local", database_id: "00000000-0000-4000-8000-000000000001", migrations_dir: join(dir, "migrations") },
      ],
    });
    expect(generated(dir, port, "gateway")).toEqual({
      name: "magnt-observer",
      compatibility_date: "2026-04-01",
      services: [{ binding: "CORE", service: "magnt-core" }],
      triggers: { crons: [] },
      main: join(dir, "worker/entries/gateway.ts"),
      vars: { PUBLIC_ORIGIN: `http://localhost:${port}`, ALLOWED_HOSTS: "", SITE_ORIGIN: "" },
    });
    expect(generated(dir, port, "owner")).toEqual({
      name: "magnt-owner",
      compatibility_date: "2026-04-01",
      services: [{ binding: "OWNER_CORE", service: "magnt-core", entrypoint: "OwnerEntrypoint" }],
      triggers: { crons: [] },
      main: join(dir, "worker/entries/owner-gateway.ts"),
      vars: {
        ALLOWED_HOSTS: "",
        OWNER_ORIGIN: `http://localhost:${ownerPort}`,
        OWNER_REDIRECT_ORIGINS: "",
        GITHUB_OAUTH_ORIGIN: githubOrigin,
        GITHUB_API_ORIGIN: githubOrigin,
      },
    });
  });

  it("relays each Telegram stand-in message into its output: status and cleaned text, never the chat id", async () => {
    const dir = splitProject();
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const line = JSON.stringify({ time: "t", method: "POST", path: "/bot<token>/sendMessage", status: 200, chat_id: 987654321012, text: "MAGNT · new contact\nid: mc_1\nHello \u001b[2Jthere\u202e" });
    const fake = fakeDev({ telegramLines: [line] });
    const run = await runUntilReady(["dev", "--owner", "--no-migrate", "--port", String(port), "--owner-port", String(ownerPort)], fake, READY, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines).toEqual(expect.arrayContaining([
      "telegram stand-in: POST /bot<token>/sendMessage answered 200, message:",
      "telegram stand-in: | MAGNT · new contact",
      "telegram stand-in: | id: mc_1",
      "telegram stand-in: | Hello there",
    ]));
    expect(run.stdout).not.toContain("987654321012");
  });

  it("--json: one JSON line with both URLs, the cron pass, the .dev.vars path and the stand-ins; relayed lines go to stderr", async () => {
    const dir = splitProject();
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const fake = fakeDev({ telegramLines: [JSON.stringify({ method: "POST", path: "/bot<token>/sendMessage", status: 200, chat_id: 1, text: "hi" })] });
    const run = await runUntilReady(["dev", "--owner", "--no-migrate", "--json", "--port", String(port), "--owner-port", String(ownerPort)], fake, "\n", { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const core = devCalls(fake.calls).find((call) => roleOf(call) === "core")!;
    const standIn = (role: string) => `http://127.0.0.1:${option(fake.calls.find((call) => roleOf(call) === role)!, "--port")}`;
    expect(run.lines).toHaveLength(1);
    expect(JSON.parse(run.stdout)).toEqual({
      url: `http://localhost:${port}/`,
      mcp: `http://localhost:${port}/mcp`,
      probe: `http://localhost:${port}/__magnt_probe`,
      owner_url: `http://localhost:${ownerPort}/`,
      owner_mcp: `http://localhost:${ownerPort}/mcp`,
      owner_status: 200,
      cron: `http://127.0.0.1:${option(core, "--port")}/cdn-cgi/handler/scheduled`,
      dev_vars: generatedDevVars(dir),
      dev_vars_kind: "generated",
      stand_ins: { github: standIn("github"), telegram: standIn("telegram") },
    });
    expect(run.stderr).toContain("telegram stand-in: | hi");
    for (const call of devCalls(fake.calls)) expect((call.options.stdio as unknown[])[1]).toBe(2);
  });

  it.each([
    [["--owner-port", "9000"], "--owner-port only applies with --owner"],
    [["--owner", "--port", "9000", "--owner-port", "9000"], "--owner-port must differ from --port"],
    [["--owner", "--port", "65535"], "pass --owner-port"],
    [["--owner", "--owner-port", "70000"], "--owner-port must be an integer"],
    [["--owner", "--env", "staging"], "takes no --env"],
  ])("%j → exit 2 before anything runs", async (args, message) => {
    const dir = splitProject();
    const { calls } = fakeDev();
    const run = await runMagnt(["dev", ...args], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(calls).toHaveLength(0);
  });

  it("an owner port something listens on → exit 3 naming it and --owner-port, nothing written or started", async () => {
    const dir = splitProject();
    const { calls } = fakeDev({ applied: [] });
    const [port] = (await freePorts(1)) as [number];
    const taken = createTcpServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const ownerPort = (taken.address() as { port: number }).port;
    try {
      const run = await runMagnt(["dev", "--owner", "--port", String(port), "--owner-port", String(ownerPort)], { cwd: dir });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(`port ${ownerPort} on 127.0.0.1 is already in use: stop what listens there, or choose another port with --owner-port <n>`);
      expect(calls).toHaveLength(0);
      expect(existsSync(join(dir, ".wrangler"))).toBe(false);
    } finally {
      taken.close();
    }
  });

  it("a missing deployable config → exit 3 before migrations or wrangler dev", async () => {
    const dir = splitProject();
    rmSync(join(dir, "wrangler.owner.jsonc"));
    const { calls } = fakeDev({ applied: [] });
    const run = await runMagnt(["dev", "--owner", "--port", String((await freePorts(1))[0])], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("needs wrangler.owner.jsonc");
    expect(calls).toHaveLength(0);
  });

  it.each(["SIGINT", "SIGTERM"] as const)("forwards %s to every process of the run once it is ready and exits 0", async (signal) => {
    const dir = splitProject();
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    const fake = fakeDev();
    const signals = new EventEmitter();
    let stdout = "";
    const running = runMagnt(["dev", "--owner", "--no-migrate", "--port", String(port), "--owner-port", String(ownerPort)], { signals, cwd: dir, onStdout: (chunk) => (stdout += chunk) });
    await vi.waitFor(() => expect(stdout).toContain(READY), { timeout: 20_000 });
    signals.emit(signal);
    const run = await running;
    expect(fake.children.map((child) => child.killedWith)).toEqual([[signal], [signal], [signal], [signal], [signal]]);
    expect(run.code).toBe(0);
    expect(signals.listenerCount(signal)).toBe(0);
  });

  it("Ctrl-C while core is still starting: the gateways are never started, exit 0", async () => {
    const dir = splitProject();
    const fake = fakeDev({ registerAfterMs: 60_000 });
    const signals = new EventEmitter();
    const running = runMagnt(["dev", "--owner", "--no-migrate", "--port", String((await freePorts(1))[0]), "--owner-port", String((await freePorts(1))[0])], { signals, cwd: dir });
    await vi.waitFor(() => expect(devCalls(fake.calls)).toHaveLength(1));
    signals.emit("SIGINT");
    const run = await running;
    expect(run.code).toBe(0);
    expect(devCalls(fake.calls).map(roleOf)).toEqual(["core"]);
    expect(run.stdout).not.toContain("MAGNT door:");
  });

  it("one process failing stops all the others and exits 3 naming it", async () => {
    const dir = splitProject();
    const fake = fakeDev();
    const { children, calls } = fake;
    const [port, ownerPort] = (await freePorts(2)) as [number, number];
    // The owner gateway crashes at once (say, its port was taken after the check).
    spawnMock.mockImplementation(
      ((original) =>
        (...args: Parameters<typeof childProcess.spawn>) => {
          const child = original(...args) as unknown as { kill(signal?: NodeJS.Signals): boolean; emit(event: string, ...values: unknown[]): boolean };
          if ((args[1] as string[]).some((arg) => arg.endsWith("owner.local.json"))) setImmediate(() => child.emit("exit", 1, null));
          return child as unknown as ReturnType<typeof childProcess.spawn>;
        })(spawnMock.getMockImplementation()!) as typeof childProcess.spawn,
    );
    const run = await runMagnt(["dev", "--owner", "--no-migrate", "--json", "--port", String(port), "--owner-port", String(ownerPort)], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: "wrangler dev (owner) ended with exit code 1" } });
    expect(calls.map(roleOf)).toEqual(["github", "telegram", "core", "gateway", "owner"]);
    expect(children.map((child) => child.killedWith)).toEqual([["SIGTERM"], ["SIGTERM"], ["SIGTERM"], ["SIGTERM"], []]);
  });
});
