/**
 * The planner of `magnt dev --owner` (cli/lib/local-topology.ts) and the one
 * `wrangler dev` argv builder (cli/lib/wrangler-dev.ts), without a
 * filesystem or a socket: configs are objects, ports are numbers. The run as
 * a whole (files written, processes spawned) is test/cli/dev.test.ts.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { chooseSplitDevVars, generatedDevVarsPath, planLocalSplit, plannedStandIns, splitPorts, SPLIT_ROLES, type LocalSplitInputs, type SplitDevVars, type SplitRole } from "../../cli/lib/local-topology";
import { EnvironmentError } from "../../cli/lib/errors";
import type { WranglerConfig } from "../../cli/lib/wrangler-config";
import { wranglerDevArgs } from "../../cli/lib/wrangler-dev";

const PROJECT = "/work/project";

/** A config as `readWranglerConfig` returns it, built in memory from its resolved keys. */
function config(path: string, settings: Record<string, unknown>): WranglerConfig {
  const d1 = Array.isArray(settings.d1_databases) ? (settings.d1_databases as WranglerConfig["d1Databases"]) : [];
  return {
    path,
    absolutePath: join(PROJECT, path),
    settings,
    ...(typeof settings.name === "string" ? { name: settings.name } : {}),
    ...(typeof settings.main === "string" ? { main: settings.main } : {}),
    d1Databases: d1,
    vars: (settings.vars as Record<string, unknown> | undefined) ?? {},
    crons: [],
  };
}

const LOCAL = config("wrangler.local.jsonc", {
  name: "magnt-observer-local",
  main: "worker/entries/monolith.ts",
  d1_databases: [{ binding: "CONTACTS", database_name: "magnt-contacts-local", database_id: "00000000-0000-4000-8000-000000000001", migrations_dir: "migrations" }],
});

const PRODUCTION = {
  compatibility_date: "2026-04-01",
  minify: true,
  keep_vars: true,
  workers_dev: false,
  observability: { enabled: true },
  routes: [{ pattern: "magnt.ru", custom_domain: true }],
};

const DEPLOYABLES: Record<SplitRole, WranglerConfig> = {
  core: config("wrangler.core.jsonc", {
    ...PRODUCTION,
    name: "magnt-core",
    main: "worker/entries/core.ts",
    vars: { PUBLIC_ORIGIN: "https://magnt.ru" },
    d1_databases: [{ binding: "CONTACTS", database_name: "magnt-contacts", database_id: "00000000-0000-0000-0000-000000000000" }],
    triggers: { crons: ["* * * * *"] },
    ratelimits: [{ name: "PUBLIC_WRITES", namespace_id: "1001" }],
  }),
  gateway: config("wrangler.gateway.jsonc", {
    ...PRODUCTION,
    name: "magnt-observer",
    main: "worker/entries/gateway.ts",
    services: [{ binding: "CORE", service: "magnt-core" }],
    triggers: { crons: [] },
  }),
  owner: config("wrangler.owner.jsonc", {
    ...PRODUCTION,
    name: "magnt-owner",
    main: "worker/entries/owner-gateway.ts",
    services: [{ binding: "OWNER_CORE", service: "magnt-core", entrypoint: "OwnerEntrypoint" }],
  }),
};

const PORTS = splitPorts("0.0.0.0", 9000, 9001, [41000, 41001, 41002, 41003, 41004, 41005]);
const GENERATED = join(PROJECT, ".wrangler", "magnt-dev-owner", ".dev.vars");
const GENERATED_DEV_VARS: SplitDevVars = { source: GENERATED, kind: "generated", present: false, user: { path: join(PROJECT, ".dev.vars"), present: false } };

function inputs(overrides: Partial<LocalSplitInputs> = {}): LocalSplitInputs {
  return { local: LOCAL, deployables: DEPLOYABLES, cwd: "/work/elsewhere", ports: PORTS, devVars: GENERATED_DEV_VARS, devVarNames: new Set(), ...overrides };
}

describe("wranglerDevArgs (08 §13)", () => {
  it("is the argv of 08 §13, in order, with the optional parts only when given", () => {
    expect(wranglerDevArgs({ config: "wrangler.local.jsonc", ip: "127.0.0.1", port: 8787, inspectorPort: 40000 })).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "127.0.0.1", "--port", "8787", "--inspector-port", "40000",
    ]);
    expect(
      wranglerDevArgs({
        config: "c.jsonc",
        env: "staging",
        ip: "0.0.0.0",
        port: 9000,
        inspectorPort: 40001,
        vars: [["PUBLIC_ORIGIN", "http://localhost:9000"], ["TELEGRAM_API_ORIGIN", "http://127.0.0.1:8790"]],
        persistTo: "/tmp/state",
      }),
    ).toEqual([
      "dev", "--config", "c.jsonc", "--env", "staging", "--local", "--ip", "0.0.0.0", "--port", "9000", "--inspector-port", "40001",
      "--var", "PUBLIC_ORIGIN:http://localhost:9000", "--var", "TELEGRAM_API_ORIGIN:http://127.0.0.1:8790", "--persist-to", "/tmp/state",
    ]);
  });
});

describe("splitPorts", () => {
  it("gives core the first free port, each process its own inspector port (SPLIT_ROLES order), then each stand-in one", () => {
    expect(PORTS).toEqual({
      ip: "0.0.0.0",
      port: 9000,
      ownerPort: 9001,
      corePort: 41000,
      inspector: { core: 41001, gateway: 41002, owner: 41003 },
      standIns: { github: 41004, telegram: 41005 },
    });
  });

  it("refuses a wrong number of free ports (a bug, not a user error)", () => {
    expect(() => splitPorts("127.0.0.1", 9000, 9001, [1, 2, 3, 4])).toThrow(/needs 6 free ports/);
  });
});

describe("planLocalSplit (pure)", () => {
  const dir = join(PROJECT, ".wrangler", "magnt-dev-split-9000");
  const state = join(PROJECT, ".wrangler", "state");

  it("plans three processes with their generated config, argv and the one state directory", () => {
    const plan = planLocalSplit(inputs());
    expect(plan.dir).toBe(dir);
    expect(plan.registry).toBe(join(dir, "registry"));
    expect(plan.persistTo).toBe(state);
    expect(plan.devVars).toEqual(GENERATED_DEV_VARS);
    expect(plan.standIns).toEqual([
      { role: "github", port: 41004, origin: "http://127.0.0.1:41004", args: ["--port", "41004", "--auto"] },
      { role: "telegram", port: 41005, origin: "http://127.0.0.1:41005", args: ["--port", "41005"] },
    ]);
    expect(plan.processes.map((worker) => worker.role)).toEqual([...SPLIT_ROLES]);
    const args = Object.fromEntries(plan.processes.map((worker) => [worker.role, worker.args]));
    expect(args.core).toEqual(["dev", "--config", join(dir, "core.local.json"), "--local", "--ip", "127.0.0.1", "--port", "41000", "--inspector-port", "41001", "--persist-to", state]);
    expect(args.gateway).toEqual(["dev", "--config", join(dir, "gateway.local.json"), "--local", "--ip", "0.0.0.0", "--port", "9000", "--inspector-port", "41002", "--persist-to", state]);
    expect(args.owner).toEqual(["dev", "--config", join(dir, "owner.local.json"), "--local", "--ip", "0.0.0.0", "--port", "9001", "--inspector-port", "41003", "--persist-to", state]);
  });

  it("keeps only the allow-listed keys, makes main absolute, sets the local variables per role (the stand-ins' origins too) and the local database on core", () => {
    const plan = planLocalSplit(inputs({ telegramApiOrigin: "http://127.0.0.1:8790" }));
    expect(plan.standIns.map((standIn) => standIn.role)).toEqual(["github"]);
    const configs = Object.fromEntries(plan.processes.map((worker) => [worker.role, worker.config]));
    expect(configs.core).toEqual({
      name: "magnt-core",
      compatibility_date: "2026-04-01",
      triggers: { crons: ["* * * * *"] },
      main: join(PROJECT, "worker/entries/core.ts"),
      vars: { PUBLIC_ORIGIN: "http://localhost:9000", ALLOWED_HOSTS: "", OWNER_ORIGIN: "http://localhost:9001", TELEGRAM_API_ORIGIN: "http://127.0.0.1:8790" },
      d1_databases: [
        { binding: "CONTACTS", database_name: "magnt-contacts-local", database_id: "00000000-0000-4000-8000-000000000001", migrations_dir: join(PROJECT, "migrations") },
      ],
    });
    expect(configs.gateway).toEqual({
      name: "magnt-observer",
      compatibility_date: "2026-04-01",
      services: [{ binding: "CORE", service: "magnt-core" }],
      triggers: { crons: [] },
      main: join(PROJECT, "worker/entries/gateway.ts"),
      vars: { PUBLIC_ORIGIN: "http://localhost:9000", ALLOWED_HOSTS: "", SITE_ORIGIN: "" },
    });
    expect(configs.owner).toEqual({
      name: "magnt-owner",
      compatibility_date: "2026-04-01",
      services: [{ binding: "OWNER_CORE", service: "magnt-core", entrypoint: "OwnerEntrypoint" }],
      main: join(PROJECT, "worker/entries/owner-gateway.ts"),
      vars: {
        ALLOWED_HOSTS: "",
        OWNER_ORIGIN: "http://localhost:9001",
        OWNER_REDIRECT_ORIGINS: "",
        GITHUB_OAUTH_ORIGIN: "http://127.0.0.1:41004",
        GITHUB_API_ORIGIN: "http://127.0.0.1:41004",
      },
    });
  });

  it("a .dev.vars that names an origin keeps it: no stand-in and no variable for it", () => {
    const plan = planLocalSplit(inputs({ devVarNames: new Set(["GITHUB_OAUTH_ORIGIN", "TELEGRAM_API_ORIGIN"]) }));
    expect(plan.standIns).toEqual([]);
    const configs = Object.fromEntries(plan.processes.map((worker) => [worker.role, worker.config]));
    expect(configs.owner!.vars).toEqual({ ALLOWED_HOSTS: "", OWNER_ORIGIN: "http://localhost:9001", OWNER_REDIRECT_ORIGINS: "" });
    expect(configs.core!.vars).not.toHaveProperty("TELEGRAM_API_ORIGIN");
    expect(plannedStandIns(PORTS, new Set(["GITHUB_API_ORIGIN"]), false).map((standIn) => standIn.role)).toEqual(["telegram"]);
  });

  it("a relative --persist-to is relative to the working directory; the .dev.vars decision is an input", () => {
    const mine: SplitDevVars = { source: join(PROJECT, ".dev.vars"), kind: "yours", present: true, user: { path: join(PROJECT, ".dev.vars"), present: true } };
    const plan = planLocalSplit(inputs({ persistTo: "state", devVars: mine }));
    expect(plan.persistTo).toBe("/work/elsewhere/state");
    expect(plan.processes.every((worker) => worker.args.at(-1) === "/work/elsewhere/state")).toBe(true);
    expect(plan.devVars).toBe(mine);
  });

  it("a local config without a CONTACTS database id, or a deployable without main, is an environment failure", () => {
    const noDatabase = config("wrangler.local.jsonc", { name: "x", main: "worker/entries/monolith.ts" });
    expect(() => planLocalSplit(inputs({ local: noDatabase }))).toThrow(EnvironmentError);
    expect(() => planLocalSplit(inputs({ local: noDatabase }))).toThrow(/declares no CONTACTS database/);
    const noMain = { ...DEPLOYABLES, owner: config("wrangler.owner.jsonc", { name: "magnt-owner" }) };
    expect(() => planLocalSplit(inputs({ deployables: noMain }))).toThrow(/wrangler\.owner\.jsonc has no "main" entry module/);
  });
});

describe("chooseSplitDevVars: which file is the split run's .dev.vars", () => {
  const user = join(PROJECT, ".dev.vars");
  it("the generated local-only file next to the local config, when the user's .dev.vars is missing", () => {
    expect(generatedDevVarsPath(LOCAL)).toBe(GENERATED);
    expect(chooseSplitDevVars(user, undefined, GENERATED, false)).toEqual(GENERATED_DEV_VARS);
    expect(chooseSplitDevVars(user, undefined, GENERATED, true)).toMatchObject({ kind: "generated", present: true });
  });
  it("the generated one when the user's holds no owner secret (say, only Telegram settings) — the user's is reported, not read", () => {
    const values = new Map([["TELEGRAM_BOT_TOKEN", "1:x"], ["OWNER_MCP_ENABLED", "true"], ["OWNER_GITHUB_ID", ""]]);
    expect(chooseSplitDevVars(user, values, GENERATED, false)).toEqual({ ...GENERATED_DEV_VARS, user: { path: user, present: true } });
  });
  it.each(["OWNER_GITHUB_ID", "OWNER_TOKEN_SIGNING_KEY", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"])("the user's own when it holds %s", (name) => {
    expect(chooseSplitDevVars(user, new Map([[name, "x"]]), GENERATED, true)).toEqual({ source: user, kind: "yours", present: true, user: { path: user, present: true } });
  });
});
