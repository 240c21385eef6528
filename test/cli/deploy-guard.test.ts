/**
 * The deploy guard behind every `npm run deploy*` script (00 §3, §8): refuses
 * the placeholder `database_id` and, for a monolith config, a deploy after the
 * cutover (`MAGNT_CUTOVER_DONE=true`). Also the JSONC reader and role lookup.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseJsonc } from "../../cli/lib/jsonc";
import { readWranglerConfig, roleOfConfig } from "../../cli/lib/wrangler-config";
import { REPO_ROOT, runMagnt, tempProject } from "./harness";

describe("magnt deploy-guard", () => {
  it("refuses wrangler.jsonc while it carries the placeholder (exit 2, message names the config)", async () => {
    const run = await runMagnt(["deploy-guard", "--config", "wrangler.jsonc"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("wrangler.jsonc still carries the placeholder database_id 00000000-0000-0000-0000-000000000000");
    expect(run.stderr).toContain("Cloudflare dashboard");
  });

  it("passes with a real id", async () => {
    const run = await runMagnt(["deploy-guard", "--config", "wrangler.jsonc", "--json"], { cwd: tempProject({ realId: true }) });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ config: "wrangler.jsonc", role: "monolith", ok: true });
  });

  it("refuses a monolith deploy when MAGNT_CUTOVER_DONE=true, even with a real id", async () => {
    const run = await runMagnt(["deploy-guard", "--config", "wrangler.jsonc", "--json"], {
      cwd: tempProject({ realId: true }),
      env: { MAGNT_CUTOVER_DONE: "true" },
    });
    expect(run.code).toBe(2);
    expect(run.lastJson()).toEqual({ error: { code: "usage", message: expect.stringContaining("MAGNT_CUTOVER_DONE=true") } });
  });

  it("only the exact value true counts", async () => {
    const run = await runMagnt(["deploy-guard", "--config", "wrangler.jsonc"], { cwd: tempProject({ realId: true }), env: { MAGNT_CUTOVER_DONE: "TRUE" } });
    expect(run.code).toBe(0);
  });

  it("the cutover switch does not refuse other roles; a config without D1 has nothing to refuse", async () => {
    const cwd = tempProject();
    writeFileSync(
      join(cwd, "wrangler.gateway.jsonc"),
      `// gateway\n{ "name": "magnt-observer", "main": "worker/entries/gateway.ts", "triggers": { "crons": [], }, }\n`,
    );
    const run = await runMagnt(["deploy-guard", "--config", "wrangler.gateway.jsonc"], { cwd, env: { MAGNT_CUTOVER_DONE: "true" } });
    expect(run.code).toBe(0);
  });

  it("requires --config (exit 2); a missing config file is exit 3", async () => {
    expect((await runMagnt(["deploy-guard"])).code).toBe(2);
    expect((await runMagnt(["deploy-guard", "--config", "nope.jsonc"])).code).toBe(3);
  });
});

describe("config reading", () => {
  it("parses JSONC with comments, trailing commas and comment-like strings", () => {
    expect(parseJsonc('// c\n{ "a": "http://x/*y*/", /* b */ "b": [1, 2,], }')).toEqual({ a: "http://x/*y*/", b: [1, 2] });
    expect(parseJsonc('{"s": "a\\"//b,}"}')).toEqual({ s: 'a"//b,}' });
  });

  it("derives the role from the entry module", () => {
    expect(roleOfConfig(readWranglerConfig("wrangler.jsonc", REPO_ROOT))).toBe("monolith");
    expect(roleOfConfig({ ...readWranglerConfig("wrangler.jsonc", REPO_ROOT), main: "worker/entries/owner-gateway.ts" })).toBe("owner_gateway");
    expect(roleOfConfig({ ...readWranglerConfig("wrangler.jsonc", REPO_ROOT), main: "src/other.ts" })).toBeUndefined();
  });
});
