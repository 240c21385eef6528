/**
 * Contract tests of the committed configuration (00 §3, 10 §7): Wrangler
 * configs, flag parsing, and versions that must agree everywhere.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../cli/lib/jsonc";
import { FLAG_NAMES, SECRET_NAMES } from "../../worker/contracts/flags";
import { LOCAL_DATABASE_ID, PLACEHOLDER_DATABASE_ID } from "../../worker/contracts/migrations";
import {
  AGENT_CARD_VERSION,
  MCP_DOOR_VERSION,
  MCP_SERVER_NAME,
  MCP_SERVER_VERSION,
  PACKAGE_VERSION,
  SHARED_MEMORY_VERSION,
  SMOKE_CLIENT_VERSION,
} from "../../worker/contracts/versions";
import { buildAiCatalog, buildServerCard } from "../../worker/mcp/server-card";
import { isOn } from "../../worker/config/flags";
import type { Env } from "../../worker/config/env";

const ROOT = join(import.meta.dirname, "../..");
type Config = Record<string, any>;
const readConfig = (file: string): Config => parseJsonc(readFileSync(join(ROOT, file), "utf8")) as Config;
const CONFIG_FILES = readdirSync(ROOT).filter((file) => /^wrangler(\..+)?\.jsonc$/.test(file));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("Wrangler configs (00 §3)", () => {
  it("finds the monolith and local configs", () => {
    expect(CONFIG_FILES).toEqual(expect.arrayContaining(["wrangler.jsonc", "wrangler.local.jsonc"]));
  });

  it.each(CONFIG_FILES)("%s declares no flag or secret under vars and uses the pinned compatibility date", (file) => {
    const config = readConfig(file);
    const vars = Object.keys(config.vars ?? {});
    for (const name of [...FLAG_NAMES, ...SECRET_NAMES]) expect(vars, `${file} declares ${name} under vars`).not.toContain(name);
    expect(config.compatibility_date).toBe("2026-04-01");
    expect(config.compatibility_flags ?? []).toEqual([]);
  });

  it("wrangler.jsonc is the production monolith", () => {
    const config = readConfig("wrangler.jsonc");
    expect(config).toMatchObject({
      name: "magnt-observer",
      main: "worker/entries/monolith.ts",
      keep_vars: true,
      minify: true,
      routes: [{ pattern: "magnt.ru/*", zone_name: "magnt.ru" }],
      triggers: { crons: ["* * * * *"] },
      vars: { PUBLIC_ORIGIN: "https://magnt.ru", ALLOWED_HOSTS: "magnt.ru,www.magnt.ru", SITE_ORIGIN: "https://raw.githubusercontent.com/redkov-dev/cortex/main" },
    });
    expect(config.d1_databases).toHaveLength(1);
    expect(config.d1_databases[0]).toMatchObject({ binding: "CONTACTS", database_name: "magnt-contacts", migrations_dir: "migrations" });
    // The placeholder until the operator commits the real id; either is UUID-shaped.
    expect(config.d1_databases[0].database_id).toMatch(UUID);
    expect(config.ratelimits).toEqual([{ name: "PUBLIC_WRITES", namespace_id: "1001", simple: { limit: 20, period: 60 } }]);
    expect([10, 60]).toContain(config.ratelimits[0].simple.period);
    expect(config.observability).toEqual({
      enabled: true,
      head_sampling_rate: 1,
      logs: { invocation_logs: false },
      traces: { enabled: false },
    });
  });

  it("wrangler.local.jsonc runs the monolith offline on a fixed local database", () => {
    const config = readConfig("wrangler.local.jsonc");
    expect(config).toMatchObject({ name: "magnt-observer-local", main: "worker/entries/monolith.ts", triggers: { crons: ["* * * * *"] } });
    expect(config.d1_databases).toEqual([
      { binding: "CONTACTS", database_name: "magnt-contacts-local", database_id: LOCAL_DATABASE_ID, migrations_dir: "migrations" },
    ]);
    expect(config.vars.SITE_ORIGIN).toBe("");
    expect(config).not.toHaveProperty("observability");
    expect(config).not.toHaveProperty("ratelimits");
    expect(config).not.toHaveProperty("routes");
  });

  it("ships the documented placeholder, never a guessed id", () => {
    expect(readConfig("wrangler.jsonc").d1_databases[0].database_id).toBe(PLACEHOLDER_DATABASE_ID);
  });
});

describe("flags (00 §6)", () => {
  it.each([
    ["true", true],
    ["TRUE", false],
    [" true", false],
    ["true ", false],
    ["1", false],
    ["yes", false],
    ["", false],
    [undefined, false],
  ])("DIALOGUE_ENABLED=%j is on: %s", (value, on) => {
    const env = (value === undefined ? {} : { DIALOGUE_ENABLED: value }) as Env;
    expect(isOn(env, "DIALOGUE_ENABLED")).toBe(on);
  });

  it("every flag defaults off", () => {
    for (const name of FLAG_NAMES) expect(isOn({} as Env, name)).toBe(false);
  });
});

describe("versions agree everywhere (10 §7)", () => {
  // package.json is the release's source of truth: every constant and every
  // document built from them must equal it, so a bump that misses one fails here.
  // (The served probe, server info, header and cards are checked through the real
  // routes in test/worker/site.test.ts.)
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
  const registry = JSON.parse(readFileSync(join(ROOT, "docs/registry/server.json"), "utf8"));
  const release: string = pkg.version;

  it("package.json carries a release version and the pinned Node engine", () => {
    expect(release).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.engines.node).toBe(">=20.3.0");
    expect(lock.version).toBe(release);
    expect(lock.packages[""].version).toBe(release);
  });

  it("worker/contracts/versions.ts agrees with package.json", () => {
    expect({
      PACKAGE_VERSION,
      MCP_DOOR_VERSION,
      MCP_SERVER_VERSION,
      SHARED_MEMORY_VERSION,
      AGENT_CARD_VERSION,
      SMOKE_CLIENT_VERSION,
    }).toEqual({
      PACKAGE_VERSION: release,
      MCP_DOOR_VERSION: release,
      MCP_SERVER_VERSION: release,
      SHARED_MEMORY_VERSION: release,
      AGENT_CARD_VERSION: release,
      SMOKE_CLIENT_VERSION: release,
    });
  });

  it("the Server Card, the AI catalog and the registry entry carry the same identity and version", () => {
    const card = buildServerCard("https://magnt.ru");
    expect(card.version).toBe(release);
    expect(card.name).toBe(MCP_SERVER_NAME);
    expect(registry).toMatchObject({ name: card.name, title: card.title, version: release });
    const catalog = buildAiCatalog("https://magnt.ru");
    expect(catalog.entries).toHaveLength(1);
    expect(catalog.entries[0]).toMatchObject({ displayName: card.title, url: "https://magnt.ru/mcp/server-card" });
  });
});
