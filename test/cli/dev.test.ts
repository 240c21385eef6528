/**
 * `magnt dev` (08 §13) with Wrangler stubbed: port precedence, local only,
 * migrations first (no confirmation), the exact `wrangler dev` argv with
 * inherited stdio, the printed URL, signal forwarding and exit codes; with
 * `--owner`, the three processes of the local split deployment, their ports,
 * generated configs, shared state, `.dev.vars` and printed URLs.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { EventEmitter } from "node:events";
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { devPort } from "../../cli/commands/dev";
import { d1Error, d1Rows, installFakeWrangler, REPO_ROOT, repoMigrationNames, runMagnt, tempProject, type FakeAnswer, type SpawnCall } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const ALL = repoMigrationNames();

/** Migrations already applied; `dev` answers with `devAnswer`. */
function fakeDoorProcess(devAnswer: FakeAnswer, options: { applied?: string[] } = {}) {
  let applied = options.applied ?? ALL;
  return installFakeWrangler(spawnMock, (args) => {
    if (args[0] === "dev") return devAnswer;
    if (args[1] === "migrations") {
      applied = ALL;
      return { code: 0 };
    }
    return applied.length === 0 ? d1Error("no such table: d1_migrations") : d1Rows(applied.map((name) => ({ name })));
  });
}

describe("port", () => {
  it("--port, else PORT, else 8787", () => {
    expect(devPort("9000", { PORT: "9100" })).toBe(9000);
    expect(devPort(undefined, { PORT: "9100" })).toBe(9100);
    expect(devPort(undefined, {})).toBe(8787);
    expect(devPort(undefined, { PORT: "" })).toBe(8787);
  });
  it.each(["0", "65536", "80a", "-1"])("--port %s → exit 2", async (port) => {
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--port", port]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });
  it("a bad PORT variable → exit 2", async () => {
    fakeDoorProcess({ code: 0 });
    expect((await runMagnt(["dev"], { env: { PORT: "http" } })).code).toBe(2);
  });
});

describe("magnt dev", () => {
  it("--remote → exit 2", async () => {
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--remote"]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("applies pending migrations without asking, then runs wrangler dev with the exact argv and inherited stdio", async () => {
    const { calls } = fakeDoorProcess({ code: 0 }, { applied: [] });
    const run = await runMagnt(["dev", "--port", "9000", "--persist-to", "/tmp/state"], { tty: true });
    expect(run.code).toBe(0);
    expect(calls.map((call) => (call.args[0] === "dev" ? "dev" : call.args.slice(0, 2).join(" ")))).toEqual(["d1 execute", "d1 migrations", "d1 execute", "dev"]);
    const dev = calls.at(-1)!;
    expect(dev.command).toBe(process.execPath);
    expect(dev.options.shell).toBe(false);
    expect(dev.options.stdio).toEqual(["inherit", "inherit", "inherit"]);
    expect(dev.options.env).toMatchObject({ WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" });
    const inspector = Number(dev.args[dev.args.indexOf("--inspector-port") + 1]);
    expect(dev.args).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "127.0.0.1", "--port", "9000",
      "--inspector-port", String(inspector), "--var", "PUBLIC_ORIGIN:http://localhost:9000", "--persist-to", "/tmp/state",
    ]);
    // Its own free inspector port, so two doors started at once never race for 9229.
    expect(Number.isInteger(inspector) && inspector > 0 && inspector !== 9000).toBe(true);
    expect(run.stdout).toContain("MAGNT door: http://localhost:9000/ (MCP: http://localhost:9000/mcp)");
  });

  it("uses PORT when --port is absent; --ip and --no-migrate", async () => {
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--ip", "0.0.0.0", "--no-migrate"], { env: { PORT: "9100" } });
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(1);
    const inspector = calls[0]!.args[calls[0]!.args.indexOf("--inspector-port") + 1];
    expect(calls[0]!.args).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "0.0.0.0", "--port", "9100",
      "--inspector-port", inspector, "--var", "PUBLIC_ORIGIN:http://localhost:9100",
    ]);
  });

  it("--json keeps stdout to one JSON line (Wrangler's stdout goes to stderr)", async () => {
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--json", "--no-migrate"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ url: "http://localhost:8787/", mcp: "http://localhost:8787/mcp", probe: "http://localhost:8787/__magnt_probe" });
    expect(calls[0]!.options.stdio).toEqual(["inherit", 2, "inherit"]);
  });

  it("inconsistent migrations stop dev with exit 1 before wrangler dev starts", async () => {
    const { calls } = fakeDoorProcess({ code: 0 }, { applied: ["0001_contacts.sql", "0002_old_name.sql"] });
    const run = await runMagnt(["dev"]);
    expect(run.code).toBe(1);
    expect(calls.some((call) => call.args[0] === "dev")).toBe(false);
  });

  it.each(["SIGINT", "SIGTERM"] as const)("forwards %s to the Wrangler process and exits 0", async (signal) => {
    const signals = new EventEmitter();
    const { children } = fakeDoorProcess({ hang: true });
    const running = runMagnt(["dev", "--no-migrate"], { signals });
    await vi.waitFor(() => expect(signals.listenerCount(signal)).toBe(1));
    signals.emit(signal);
    const run = await running;
    expect(children[0]!.killedWith).toEqual([signal]);
    expect(run.code).toBe(0);
    expect(signals.listenerCount(signal)).toBe(0);
  });

  it("Wrangler failing on its own → exit 3", async () => {
    fakeDoorProcess({ code: 1, stderr: "Address already in use\n" });
    const run = await runMagnt(["dev", "--no-migrate", "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: "wrangler dev ended with exit code 1" } });
  });
});

describe("magnt dev --owner (the split deployment, locally)", () => {
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

  /** The role of a `wrangler dev` call of the split run, from its generated config's file name. */
  const roleOf = (call: SpawnCall): string => /([a-z]+)\.local\.json$/.exec(call.args[2] ?? "")?.[1] ?? "?";
  const devCalls = (calls: SpawnCall[]): SpawnCall[] => calls.filter((call) => call.args[0] === "dev");
  const option = (call: SpawnCall, name: string): string => call.args[call.args.indexOf(name) + 1]!;
  const generated = (dir: string, port: number, role: string): Record<string, unknown> =>
    JSON.parse(readFileSync(join(dir, ".wrangler", `magnt-dev-split-${port}`, `${role}.local.json`), "utf8")) as Record<string, unknown>;

  it("applies the migrations, then runs core, gateway and owner gateway as three wrangler dev processes with their own ports", async () => {
    const dir = splitProject();
    const { calls } = fakeDoorProcess({ code: 0 }, { applied: [] });
    const run = await runMagnt(["dev", "--owner", "--port", "9000", "--ip", "0.0.0.0"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(calls.map((call) => (call.args[0] === "dev" ? `dev ${roleOf(call)}` : call.args.slice(0, 2).join(" ")))).toEqual([
      "d1 execute", "d1 migrations", "d1 execute", "dev core", "dev gateway", "dev owner",
    ]);
    const [core, gateway, owner] = devCalls(calls);
    const splitDir = join(dir, ".wrangler", "magnt-dev-split-9000");
    const state = join(dir, ".wrangler", "state");
    const corePort = Number(option(core!, "--port"));
    const inspectors = [core!, gateway!, owner!].map((call) => Number(option(call, "--inspector-port")));
    expect(gateway!.args).toEqual([
      "dev", "--config", join(splitDir, "gateway.local.json"), "--local", "--ip", "0.0.0.0", "--port", "9000",
      "--inspector-port", String(inspectors[1]), "--persist-to", state,
    ]);
    expect(owner!.args).toEqual([
      "dev", "--config", join(splitDir, "owner.local.json"), "--local", "--ip", "0.0.0.0", "--port", "9001",
      "--inspector-port", String(inspectors[2]), "--persist-to", state,
    ]);
    // Core listens on loopback only, whatever --ip says; its port serves the cron pass.
    expect(core!.args).toEqual([
      "dev", "--config", join(splitDir, "core.local.json"), "--local", "--ip", "127.0.0.1", "--port", String(corePort),
      "--inspector-port", String(inspectors[0]), "--persist-to", state,
    ]);
    // Every port distinct: two (three) wrangler dev processes never clash.
    expect(new Set([9000, 9001, corePort, ...inspectors]).size).toBe(6);
    for (const call of [core!, gateway!, owner!]) {
      expect(call.command).toBe(process.execPath);
      expect(call.options.shell).toBe(false);
      expect(call.options.env).toMatchObject({ WRANGLER_REGISTRY_PATH: join(splitDir, "registry"), WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" });
    }
    // Only the door's process reads the terminal (Wrangler's hotkeys need one reader).
    expect(gateway!.options.stdio).toEqual(["inherit", "inherit", "inherit"]);
    expect(core!.options.stdio).toEqual(["ignore", "inherit", "inherit"]);
    expect(owner!.options.stdio).toEqual(["ignore", "inherit", "inherit"]);
    expect(run.lines).toContain("MAGNT owner: http://localhost:9001/ (owner MCP: http://localhost:9001/mcp, OAuth: http://localhost:9001/.well-known/oauth-authorization-server)");
    expect(run.stdout).toContain("MAGNT door: http://localhost:9000/ (MCP: http://localhost:9000/mcp)");
    expect(run.lines).toContain(`one cron pass (Telegram outbox, on core): curl http://127.0.0.1:${corePort}/cdn-cgi/handler/scheduled`);
  });

  it("generates local configs: local variables, the local database, absolute entry modules, nothing production-only", async () => {
    const dir = splitProject();
    fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--owner", "--no-migrate", "--port", "9000", "--telegram-api-origin", "http://127.0.0.1:8790"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const core = generated(dir, 9000, "core");
    expect(core).toEqual({
      name: "magnt-core",
      compatibility_date: "2026-04-01",
      triggers: { crons: ["* * * * *"] },
      main: join(dir, "worker/entries/core.ts"),
      vars: { PUBLIC_ORIGIN: "http://localhost:9000", ALLOWED_HOSTS: "", OWNER_ORIGIN: "http://localhost:9001", TELEGRAM_API_ORIGIN: "http://127.0.0.1:8790" },
      d1_databases: [
        { binding: "CONTACTS", database_name: "magnt-contacts-local", database_id: "00000000-0000-4000-8000-000000000001", migrations_dir: join(dir, "migrations") },
      ],
    });
    expect(generated(dir, 9000, "gateway")).toEqual({
      name: "magnt-observer",
      compatibility_date: "2026-04-01",
      services: [{ binding: "CORE", service: "magnt-core" }],
      triggers: { crons: [] },
      main: join(dir, "worker/entries/gateway.ts"),
      vars: { PUBLIC_ORIGIN: "http://localhost:9000", ALLOWED_HOSTS: "", SITE_ORIGIN: "" },
    });
    expect(generated(dir, 9000, "owner")).toEqual({
      name: "magnt-owner",
      compatibility_date: "2026-04-01",
      services: [{ binding: "OWNER_CORE", service: "magnt-core", entrypoint: "OwnerEntrypoint" }],
      triggers: { crons: [] },
      main: join(dir, "worker/entries/owner-gateway.ts"),
      vars: { ALLOWED_HOSTS: "", OWNER_ORIGIN: "http://localhost:9001", OWNER_REDIRECT_ORIGINS: "" },
    });
  });

  it("--owner-port, --persist-to and a custom local config: one state directory, .dev.vars linked from next to the local config", async () => {
    const dir = splitProject({ devVars: "OWNER_MCP_ENABLED=true\n" });
    mkdirSync(join(dir, "conf"));
    cpSync(join(dir, "wrangler.local.jsonc"), join(dir, "conf", "local.jsonc"));
    writeFileSync(join(dir, "conf", ".dev.vars"), "OWNER_MCP_ENABLED=true\nOWNER_GITHUB_ID=12345\n");
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--owner", "--no-migrate", "--owner-port", "9500", "--config", "conf/local.jsonc", "--persist-to", "state"], { cwd: dir, env: { PORT: "9100" } });
    expect(run.code, run.stderr).toBe(0);
    const splitDir = join(dir, "conf", ".wrangler", "magnt-dev-split-9100");
    const dev = devCalls(calls);
    expect(dev.map((call) => option(call, "--persist-to"))).toEqual([join(dir, "state"), join(dir, "state"), join(dir, "state")]);
    expect(dev.map((call) => option(call, "--port")).slice(1)).toEqual(["9100", "9500"]);
    expect(readFileSync(join(splitDir, ".dev.vars"), "utf8")).toBe("OWNER_MCP_ENABLED=true\nOWNER_GITHUB_ID=12345\n");
    expect(lstatSync(join(splitDir, ".dev.vars")).isSymbolicLink()).toBe(true);
    expect(run.lines).toContain(`secrets and flags: ${join(dir, "conf", ".dev.vars")} (read by all three Workers; restart after editing it)`);
    expect(generated(join(dir, "conf"), 9100, "owner").vars).toMatchObject({ OWNER_ORIGIN: "http://localhost:9500" });

    // The .dev.vars is removed: so is the link, and the run says where the secrets belong.
    rmSync(join(dir, "conf", ".dev.vars"));
    const again = await runMagnt(["dev", "--owner", "--no-migrate", "--owner-port", "9500", "--config", "conf/local.jsonc", "--persist-to", "state"], { cwd: dir, env: { PORT: "9100" } });
    expect(again.code).toBe(0);
    expect(existsSync(join(splitDir, ".dev.vars"))).toBe(false);
    expect(again.stdout).toContain(`no ${join(dir, "conf", ".dev.vars")}: the owner gateway answers 404 until it holds OWNER_MCP_ENABLED=true`);
  });

  it("--json: one JSON line with both URLs and the cron pass", async () => {
    const dir = splitProject();
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--owner", "--no-migrate", "--json"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const core = devCalls(calls).find((call) => roleOf(call) === "core")!;
    expect(run.lines).toHaveLength(1);
    expect(JSON.parse(run.stdout)).toEqual({
      url: "http://localhost:8787/",
      mcp: "http://localhost:8787/mcp",
      probe: "http://localhost:8787/__magnt_probe",
      owner_url: "http://localhost:8788/",
      owner_mcp: "http://localhost:8788/mcp",
      cron: `http://127.0.0.1:${option(core, "--port")}/cdn-cgi/handler/scheduled`,
    });
    for (const call of devCalls(calls)) expect((call.options.stdio as unknown[])[1]).toBe(2);
  });

  it.each([
    [["--owner-port", "9000"], "--owner-port only applies with --owner"],
    [["--owner", "--port", "9000", "--owner-port", "9000"], "--owner-port must differ from --port"],
    [["--owner", "--port", "65535"], "pass --owner-port"],
    [["--owner", "--owner-port", "70000"], "--owner-port must be an integer"],
    [["--owner", "--env", "staging"], "takes no --env"],
  ])("%j → exit 2 before anything runs", async (args, message) => {
    const dir = splitProject();
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", ...args], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(calls).toHaveLength(0);
  });

  it("a missing deployable config → exit 3 before migrations or wrangler dev", async () => {
    const dir = splitProject();
    rmSync(join(dir, "wrangler.owner.jsonc"));
    const { calls } = fakeDoorProcess({ code: 0 }, { applied: [] });
    const run = await runMagnt(["dev", "--owner"], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("needs wrangler.owner.jsonc");
    expect(calls).toHaveLength(0);
  });

  it.each(["SIGINT", "SIGTERM"] as const)("forwards %s to each of the three processes and exits 0", async (signal) => {
    const dir = splitProject();
    const signals = new EventEmitter();
    const { children } = fakeDoorProcess({ hang: true });
    const running = runMagnt(["dev", "--owner", "--no-migrate"], { signals, cwd: dir });
    await vi.waitFor(() => expect(signals.listenerCount(signal)).toBe(1));
    signals.emit(signal);
    const run = await running;
    expect(children.map((child) => child.killedWith)).toEqual([[signal], [signal], [signal]]);
    expect(run.code).toBe(0);
    expect(signals.listenerCount(signal)).toBe(0);
  });

  it("one process failing stops the other two and exits 3 naming it", async () => {
    const dir = splitProject();
    const { children } = installFakeWrangler(spawnMock, (args) => (args[2]?.endsWith("owner.local.json") ? { code: 1, stderr: "Address already in use\n" } : { hang: true }));
    const run = await runMagnt(["dev", "--owner", "--no-migrate", "--json"], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: "wrangler dev (owner) ended with exit code 1" } });
    expect(children.map((child) => child.killedWith)).toEqual([["SIGTERM"], ["SIGTERM"], []]);
  });

  it("a process that ends normally (Wrangler's x hotkey) ends the run with exit 0", async () => {
    const dir = splitProject();
    const { children } = installFakeWrangler(spawnMock, (args) => (args[2]?.endsWith("gateway.local.json") ? { code: 0 } : { hang: true }));
    const run = await runMagnt(["dev", "--owner", "--no-migrate"], { cwd: dir });
    expect(run.code).toBe(0);
    expect(children.map((child) => child.killedWith)).toEqual([["SIGTERM"], [], ["SIGTERM"]]);
  });
});
