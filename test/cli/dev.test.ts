/**
 * `magnt dev` (08 §13) with Wrangler stubbed: port precedence, local only,
 * migrations first (no confirmation), the exact `wrangler dev` argv with
 * inherited stdio, the printed URL, signal forwarding and exit codes.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { EventEmitter } from "node:events";
import { devPort } from "../../cli/commands/dev";
import { d1Error, d1Rows, installFakeWrangler, repoMigrationNames, runMagnt, type FakeAnswer } from "./harness";

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
    expect(dev.args).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "127.0.0.1", "--port", "9000",
      "--var", "PUBLIC_ORIGIN:http://localhost:9000", "--persist-to", "/tmp/state",
    ]);
    expect(run.stdout).toContain("MAGNT door: http://localhost:9000/ (MCP: http://localhost:9000/mcp)");
  });

  it("uses PORT when --port is absent; --ip and --no-migrate", async () => {
    const { calls } = fakeDoorProcess({ code: 0 });
    const run = await runMagnt(["dev", "--ip", "0.0.0.0", "--no-migrate"], { env: { PORT: "9100" } });
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args).toEqual(["dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "0.0.0.0", "--port", "9100", "--var", "PUBLIC_ORIGIN:http://localhost:9100"]);
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
