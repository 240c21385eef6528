/**
 * The one reader of Wrangler environments (cli/lib/wrangler-config.ts):
 * every key the CLI reads — name, main, compatibility_date, d1_databases,
 * services, vars, triggers — agrees with the pinned Wrangler's own reader
 * (`unstable_readConfig`) for each environment of a config, and `magnt flags`
 * follows it: `vars` are the environment's own (not inherited), crons are
 * inherited, and the Worker is the one Wrangler names for the environment.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NON_INHERITABLE_KEYS, readWranglerConfig } from "../../cli/lib/wrangler-config";
import { installFakeWrangler, runMagnt } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const db = (name: string, id: string) => ({ binding: "CONTACTS", database_name: name, database_id: id });
const TOP_ID = "3f2a8c1e-5b7d-4e9f-a1c3-5d7e9f1a3b5c";
const STAGING_ID = "9d8c7b6a-5b7d-4e9f-a1c3-5d7e9f1a3b5c";

const CONFIGS = {
  /** A flag under the top level's vars; environments that override, omit or inherit each key. */
  envs: {
    name: "w",
    main: "worker/entries/monolith.ts",
    compatibility_date: "2026-04-01",
    vars: { TELEGRAM_NOTIFICATIONS_ENABLED: "true", PUBLIC_ORIGIN: "http://top" },
    triggers: { crons: ["* * * * *"] },
    d1_databases: [db("top", TOP_ID)],
    services: [{ binding: "CORE", service: "magnt-core" }],
    env: {
      staging: { vars: { PUBLIC_ORIGIN: "http://staging" }, d1_databases: [db("staging", STAGING_ID)] },
      flagged: { name: "own-name", vars: { DIALOGUE_ENABLED: "true" } },
      bare: {},
      nocron: { main: "worker/entries/core.ts", compatibility_date: "2026-05-01", triggers: { crons: [] } },
    },
  },
  /** No environments: `--env` uses the top level (Wrangler warns), the name still suffixed. */
  noEnvs: {
    name: "w",
    main: "worker/entries/monolith.ts",
    compatibility_date: "2026-04-01",
    vars: { PUBLIC_ORIGIN: "http://top" },
    triggers: { crons: ["* * * * *"] },
  },
} as const;

const CASES: [keyof typeof CONFIGS, string | undefined][] = [
  ["envs", undefined],
  ["envs", "staging"],
  ["envs", "flagged"],
  ["envs", "bare"],
  ["envs", "nocron"],
  ["noEnvs", undefined],
  ["noEnvs", "anything"],
];

function writeConfigs(): string {
  const dir = mkdtempSync(join(tmpdir(), "magnt-environments-"));
  for (const [name, config] of Object.entries(CONFIGS)) writeFileSync(join(dir, `${name}.jsonc`), `// ${name}\n${JSON.stringify(config, null, 2)}\n`);
  return dir;
}

/** The keys compared, normalised the same way for both readers (Wrangler fills in defaults). */
function view(config: { name?: string | undefined; main?: string | undefined; compatibility_date?: unknown; d1: unknown[]; services?: unknown; vars: unknown; crons: unknown }) {
  return {
    name: config.name ?? null,
    main: config.main?.split("/").at(-1) ?? null,
    compatibility_date: config.compatibility_date ?? null,
    d1: config.d1.map((entry) => (entry as { database_id?: string }).database_id),
    services: config.services ?? [],
    vars: config.vars ?? {},
    crons: config.crons ?? [],
  };
}

describe("one reader of Wrangler environments", () => {
  it("agrees with Wrangler's own reader (unstable_readConfig) on every key the CLI reads", { timeout: 60_000 }, async () => {
    const dir = writeConfigs();
    const wrangler = (await import("wrangler")) as unknown as {
      unstable_readConfig(
        args: { config: string; env?: string },
        options: { hideWarnings: boolean },
      ): { name?: string; main?: string; compatibility_date?: string; d1_databases: unknown[]; services?: unknown[]; vars: unknown; triggers: { crons?: string[] } };
    };
    for (const [config, env] of CASES) {
      const path = join(dir, `${config}.jsonc`);
      const theirs = wrangler.unstable_readConfig({ config: path, ...(env === undefined ? {} : { env }) }, { hideWarnings: true });
      const ours = readWranglerConfig(path, dir, env);
      expect(
        view({ ...ours, compatibility_date: ours.settings.compatibility_date, d1: ours.d1Databases, services: ours.settings.services }),
        `${config} --env ${String(env)}`,
      ).toEqual(
        view({ ...theirs, d1: theirs.d1_databases, crons: theirs.triggers.crons }),
      );
    }
  });

  it("vars, d1_databases and services are among the non-inheritable keys; triggers, main and name are not", () => {
    for (const key of ["vars", "d1_databases", "services", "kv_namespaces", "durable_objects", "define"]) expect(NON_INHERITABLE_KEYS.has(key), key).toBe(true);
    for (const key of ["triggers", "main", "name", "compatibility_date"]) expect(NON_INHERITABLE_KEYS.has(key), key).toBe(false);
  });
});

describe("magnt flags under --env", () => {
  it("a flag under the top level's vars does not reach an environment with its own vars; the Worker is <name>-<env>", async () => {
    const dir = writeConfigs();
    const { calls } = installFakeWrangler(spawnMock, () => ({ code: 0 }));
    const staging = await runMagnt(["flags", "list", "--config", "envs.jsonc", "--env", "staging", "--json"], { cwd: dir });
    expect(staging.code, staging.stderr).toBe(0);
    expect(staging.lastJson()).toMatchObject({ worker: "w-staging", role: "monolith", mode: "local" });
    // Without --env the top level's vars are the Worker's: refused (00 §6).
    const top = await runMagnt(["flags", "list", "--config", "envs.jsonc"], { cwd: dir });
    expect(top.code).toBe(1);
    expect(top.stderr).toContain('declares TELEGRAM_NOTIFICATIONS_ENABLED under "vars"');
    // An environment's own vars count.
    const flagged = await runMagnt(["flags", "list", "--config", "envs.jsonc", "--env", "flagged", "--json"], { cwd: dir });
    expect(flagged.code).toBe(1);
    expect(flagged.lastJson()).toEqual({ error: { code: "check_failed", message: expect.stringContaining('declares DIALOGUE_ENABLED under "vars"') } });
    expect(calls).toHaveLength(0);
  });

  it("the cron prerequisite reads the environment's triggers, inherited from the top level when the section has none", async () => {
    const dir = writeConfigs();
    const { calls } = installFakeWrangler(spawnMock, () => ({ code: 0 }));
    const cronCheck = async (env: string) => {
      const run = await runMagnt(["flags", "enable", "TELEGRAM_NOTIFICATIONS_ENABLED", "--config", "envs.jsonc", "--env", env, "--yes", "--json"], { cwd: dir });
      expect(run.code).toBe(1);
      const result = JSON.parse(run.lines[0]!) as { checks: { check: string; ok: boolean }[] };
      return result.checks.find((check) => check.check.startsWith("cron"))?.ok;
    };
    expect(await cronCheck("bare")).toBe(true);
    expect(await cronCheck("nocron")).toBe(false);
    // bare has no d1_databases of its own (not inherited): the migration check is skipped, nothing spawned.
    expect(calls).toHaveLength(0);
  });
});
