/**
 * The split deployables' configs (00 §3): core holds D1, the cron and the
 * rate limit and has no public route; the gateway has the public route, no D1,
 * an empty crons list (which removes the monolith's schedule at the cutover)
 * and the CORE Service Binding. Both carry the production observability block.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../cli/lib/jsonc";

const ROOT = join(import.meta.dirname, "../..");
// JSONC documents are untyped: `any` is the honest type of a parsed config.
const readConfig = (file: string): Record<string, any> => parseJsonc(readFileSync(join(ROOT, file), "utf8")) as Record<string, any>;
const OBSERVABILITY = { enabled: true, head_sampling_rate: 1, logs: { invocation_logs: false }, traces: { enabled: false } };

describe("split deployables (00 §3)", () => {
  it("wrangler.core.jsonc: magnt-core, no public route, D1 + cron + PUBLIC_WRITES", () => {
    const core = readConfig("wrangler.core.jsonc");
    expect(core).toMatchObject({
      name: "magnt-core",
      main: "worker/entries/core.ts",
      workers_dev: false,
      preview_urls: false,
      keep_vars: true,
      minify: true,
      triggers: { crons: ["* * * * *"] },
    });
    expect(core).not.toHaveProperty("routes");
    expect(core.d1_databases).toHaveLength(1);
    expect(core.d1_databases[0]).toMatchObject({ binding: "CONTACTS", database_name: "magnt-contacts", migrations_dir: "migrations" });
    expect(core.ratelimits).toEqual([{ name: "PUBLIC_WRITES", namespace_id: "1001", simple: { limit: 20, period: 60 } }]);
    expect(core.observability).toEqual(OBSERVABILITY);
    expect(core.services ?? []).toEqual([]);
  });

  it("wrangler.gateway.jsonc: magnt-observer on magnt.ru, no D1, no cron, CORE → magnt-core", () => {
    const gateway = readConfig("wrangler.gateway.jsonc");
    expect(gateway).toMatchObject({
      name: "magnt-observer",
      main: "worker/entries/gateway.ts",
      keep_vars: true,
      minify: true,
      routes: [{ pattern: "magnt.ru/*", zone_name: "magnt.ru" }],
      triggers: { crons: [] },
      services: [{ binding: "CORE", service: "magnt-core" }],
    });
    expect(gateway).not.toHaveProperty("d1_databases");
    expect(gateway).not.toHaveProperty("ratelimits");
    expect(gateway.observability).toEqual(OBSERVABILITY);
  });

  it("the gateway and the monolith are the same Worker with the same public variables", () => {
    const gateway = readConfig("wrangler.gateway.jsonc");
    const monolith = readConfig("wrangler.jsonc");
    expect(gateway.name).toBe(monolith.name);
    expect(gateway.vars).toEqual(monolith.vars);
    expect(gateway.routes).toEqual(monolith.routes);
  });
});
