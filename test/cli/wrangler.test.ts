/**
 * How Wrangler is invoked (08 §4), with `child_process.spawn` stubbed: always
 * `process.execPath` + the resolved `wrangler/bin/wrangler.js`, `shell: false`,
 * the offline environment (+ `CI=1` for migrations apply), the common
 * arguments, the time limit, stderr forwarding and `d1 execute --json` parsing;
 * and reading configs the way Wrangler does (environments do not inherit
 * `d1_databases`), checked against Wrangler's own reader.
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseD1Json, D1QueryError } from "../../cli/lib/d1";
import { EnvironmentError, UsageError } from "../../cli/lib/errors";
import { readWranglerConfig } from "../../cli/lib/wrangler-config";
import { d1Error, d1Rows, installFakeWrangler, repoMigrationNames, runMagnt, sqlOf } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

const wranglerBin = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");

describe("spawning Wrangler", () => {
  it("uses process.execPath with the resolved bin/wrangler.js, shell: false, and the offline environment", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const run = await runMagnt(["migrate", "--list", "--persist-to", "/tmp/magnt-state"]);
    expect(run.code).toBe(0);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.command).toBe(process.execPath);
    expect(realpathSync(call.script)).toBe(realpathSync(wranglerBin));
    expect(call.script.endsWith(join("wrangler", "bin", "wrangler.js"))).toBe(true);
    expect(call.options.shell).toBe(false);
    expect(call.options.env).toMatchObject({
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_HIDE_BANNER: "true",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
    });
    expect(call.options.env?.CI).toBeUndefined();
    expect(call.args).toEqual([
      "d1",
      "execute",
      "CONTACTS",
      "--config",
      "wrangler.local.jsonc",
      "--local",
      "--persist-to",
      "/tmp/magnt-state",
      "--json",
      "--command",
      "SELECT name FROM d1_migrations ORDER BY id",
    ]);
  });

  it("passes --env and --config through", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    await runMagnt(["review", "signals", "--config", "wrangler.local.jsonc", "--env", "staging"]);
    expect(calls[0]!.args.slice(0, 8)).toEqual(["d1", "execute", "CONTACTS", "--config", "wrangler.local.jsonc", "--env", "staging", "--local"]);
  });

  it("sets CI=1 for migrations apply (which Wrangler would otherwise confirm)", async () => {
    let applied = false;
    const { calls } = installFakeWrangler(spawnMock, (args) => {
      if (args[1] === "migrations") {
        applied = true;
        return { code: 0, stdout: "applied\n" };
      }
      return applied
        ? d1Rows(repoMigrationNames().map((name) => ({ name })))
        : d1Error("no such table: d1_migrations: SQLITE_ERROR");
    });
    const run = await runMagnt(["migrate"]);
    expect(run.code).toBe(0);
    const apply = calls.find((call) => call.args[1] === "migrations")!;
    expect(apply.args).toEqual(["d1", "migrations", "apply", "CONTACTS", "--config", "wrangler.local.jsonc", "--local"]);
    expect(apply.options.env?.CI).toBe("1");
    expect(apply.options.shell).toBe(false);
    // Wrangler's own stdout goes to our stderr, never to stdout.
    expect(run.stderr).toContain("applied");
    expect(run.stdout).not.toContain("applied\n\n");
  });

  it("forwards Wrangler's stderr unless --quiet", async () => {
    installFakeWrangler(spawnMock, () => ({ ...d1Rows([]), stderr: "wrangler says hi\n" }));
    expect((await runMagnt(["review", "contacts"])).stderr).toContain("wrangler says hi");
    installFakeWrangler(spawnMock, () => ({ ...d1Rows([]), stderr: "wrangler says hi\n" }));
    expect((await runMagnt(["review", "contacts", "--quiet"])).stderr).not.toContain("wrangler says hi");
  });

  it("kills the child and exits 3 when the local time limit expires", async () => {
    const { children } = installFakeWrangler(spawnMock, () => ({ hang: true }));
    const run = await runMagnt(["review", "contacts", "--json"], { timeouts: { local: 50, remote: 100 } });
    expect(run.code).toBe(3);
    expect(children[0]!.killedWith).toContain("SIGTERM");
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining("timed out") } });
  });

  it("a d1 error object exits 3 with Wrangler's text", async () => {
    installFakeWrangler(spawnMock, () => d1Error("disk I/O error: SQLITE_IOERR"));
    const run = await runMagnt(["review", "contacts", "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: "disk I/O error: SQLITE_IOERR" } });
  });

  it("unparseable output exits 3 with Wrangler's last stderr line", async () => {
    installFakeWrangler(spawnMock, () => ({ code: 1, stdout: "", stderr: "✘ [ERROR] Something broke\n" }));
    const run = await runMagnt(["review", "contacts", "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining("Something broke") } });
  });

  it("the SQL of review is sent as one --command argument", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    await runMagnt(["review", "observed", "--limit", "7"]);
    expect(sqlOf(calls[0]!.args)).toBe(
      "SELECT observation_id, created_at, goal, blocker, tried FROM observed_task_signals WHERE self_reported_test = 0 ORDER BY created_at DESC, observation_id DESC LIMIT 7",
    );
  });
});

describe("parseD1Json", () => {
  it("skips leading blank lines and returns rows per statement", () => {
    expect(parseD1Json('\n\n[{"results":[{"a":1}],"success":true},{"results":[]}]', 0, "")).toEqual([[{ a: 1 }], []]);
  });
  it("turns {error:{text}} into a D1QueryError (exit 3)", () => {
    expect(() => parseD1Json('\n{"error":{"text":"no such table: x"}}', 1, "")).toThrow(D1QueryError);
    try {
      parseD1Json('\n{"error":{"text":"no such table: x"}}', 1, "");
    } catch (error) {
      expect((error as D1QueryError).exitCode).toBe(3);
      expect((error as D1QueryError).text).toBe("no such table: x");
    }
  });
  it("anything else is an environment error", () => {
    expect(() => parseD1Json("not json", 1, "boom")).toThrow(EnvironmentError);
    expect(() => parseD1Json('{"unexpected":true}', 0, "")).toThrow(EnvironmentError);
  });
});

describe("reading a config with Wrangler's environment rules", () => {
  const REAL_ID = "3f2a8c1e-5b7d-4e9f-a1c3-5d7e9f1a3b5c";
  const PLACEHOLDER = "00000000-0000-0000-0000-000000000000";
  const db = (name: string, id: string): Record<string, string> => ({ binding: "CONTACTS", database_name: name, database_id: id });
  const CONFIGS = {
    /** Top level carries the placeholder; staging has its own real database; bare has none; other overrides main. */
    withEnvs: {
      name: "w",
      main: "worker/entries/monolith.ts",
      compatibility_date: "2026-04-01",
      d1_databases: [db("top", PLACEHOLDER)],
      env: { staging: { d1_databases: [db("staging", REAL_ID)] }, bare: {}, other: { main: "worker/entries/core.ts", d1_databases: [db("other", PLACEHOLDER)] } },
    },
    /** Top level real; staging overrides it with the placeholder. */
    placeholderInEnv: {
      name: "w",
      main: "worker/entries/monolith.ts",
      compatibility_date: "2026-04-01",
      d1_databases: [db("top", REAL_ID)],
      env: { staging: { d1_databases: [db("staging", PLACEHOLDER)] } },
    },
    /** No environments at all. */
    noEnvs: { name: "w", main: "worker/entries/monolith.ts", compatibility_date: "2026-04-01", d1_databases: [db("top", PLACEHOLDER)] },
  } as const;

  function writeConfigs(): string {
    const dir = mkdtempSync(join(tmpdir(), "magnt-envs-"));
    for (const [name, config] of Object.entries(CONFIGS)) writeFileSync(join(dir, `${name}.jsonc`), `// ${name}\n${JSON.stringify(config, null, 2).replace(/\n}$/, ",\n}")}\n`);
    return dir;
  }

  const CASES: [keyof typeof CONFIGS, string | undefined, { ids: string[]; main: string } | "unknown_env"][] = [
    ["withEnvs", undefined, { ids: [PLACEHOLDER], main: "monolith.ts" }],
    ["withEnvs", "staging", { ids: [REAL_ID], main: "monolith.ts" }],
    ["withEnvs", "bare", { ids: [], main: "monolith.ts" }],
    ["withEnvs", "other", { ids: [PLACEHOLDER], main: "core.ts" }],
    ["withEnvs", "nope", "unknown_env"],
    ["placeholderInEnv", undefined, { ids: [REAL_ID], main: "monolith.ts" }],
    ["placeholderInEnv", "staging", { ids: [PLACEHOLDER], main: "monolith.ts" }],
    ["noEnvs", undefined, { ids: [PLACEHOLDER], main: "monolith.ts" }],
    ["noEnvs", "anything", { ids: [PLACEHOLDER], main: "monolith.ts" }],
  ];

  it.each(CASES)("%s with --env %s: d1_databases are not inherited by an environment", (config, env, expected) => {
    const dir = writeConfigs();
    if (expected === "unknown_env") {
      expect(() => readWranglerConfig(`${config}.jsonc`, dir, env)).toThrow(UsageError);
      return;
    }
    const read = readWranglerConfig(`${config}.jsonc`, dir, env);
    expect(read.d1Databases.map((entry) => entry.database_id)).toEqual(expected.ids);
    expect(read.main?.split("/").at(-1)).toBe(expected.main);
  });

  it("agrees with Wrangler's own reader (unstable_readConfig) on every case", { timeout: 60_000 }, async () => {
    const dir = writeConfigs();
    const wrangler = (await import("wrangler")) as unknown as {
      unstable_readConfig(args: { config: string; env?: string }, options: { hideWarnings: boolean }): { d1_databases: { database_id?: string }[]; main?: string };
    };
    for (const [config, env, expected] of CASES) {
      const path = join(dir, `${config}.jsonc`);
      if (expected === "unknown_env") {
        expect(() => wrangler.unstable_readConfig({ config: path, env }, { hideWarnings: true })).toThrow(/No environment found/);
        continue;
      }
      const theirs = wrangler.unstable_readConfig({ config: path, ...(env === undefined ? {} : { env }) }, { hideWarnings: true });
      const ours = readWranglerConfig(path, dir, env);
      expect(ours.d1Databases.map((entry) => entry.database_id), `${config} --env ${String(env)}`).toEqual(theirs.d1_databases.map((entry) => entry.database_id));
      expect(ours.main?.split("/").at(-1)).toBe(theirs.main?.split("/").at(-1));
    }
  });

  it("the remote guard follows the environment: the top-level placeholder does not refuse --env staging, and an env placeholder does", async () => {
    const dir = writeConfigs();
    const { calls } = installFakeWrangler(spawnMock, () => d1Rows([]));
    const staging = await runMagnt(["review", "contacts", "--remote", "--config", "withEnvs.jsonc", "--env", "staging"], { cwd: dir });
    expect(staging.code).toBe(0);
    expect(calls[0]!.args).toEqual(expect.arrayContaining(["--env", "staging", "--remote"]));
    const top = await runMagnt(["review", "contacts", "--remote", "--config", "withEnvs.jsonc"], { cwd: dir });
    expect(top.code).toBe(2);
    const envPlaceholder = await runMagnt(["review", "contacts", "--remote", "--config", "placeholderInEnv.jsonc", "--env", "staging"], { cwd: dir });
    expect(envPlaceholder.code).toBe(2);
    expect(envPlaceholder.stderr).toContain("placeholder database_id");
    const unknown = await runMagnt(["review", "contacts", "--remote", "--config", "withEnvs.jsonc", "--env", "nope", "--json"], { cwd: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.lastJson()).toEqual({ error: { code: "usage", message: expect.stringContaining('no environment "nope"') } });
    expect(calls).toHaveLength(1);
  });
});
