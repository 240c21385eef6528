/**
 * The deploy guard behind every `npm run deploy*` script (00 §3, §8): refuses
 * the placeholder `database_id` and, for a monolith config, a deploy after the
 * cutover (`MAGNT_CUTOVER_DONE=true`); that each `deploy*` script of
 * package.json runs it first and refuses the placeholder. Also the JSONC
 * reader and role lookup.
 */
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
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

describe("every deploy* npm script runs the guard first", () => {
  const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const deployScripts = Object.entries(scripts).filter(([name]) => name === "deploy" || name.startsWith("deploy:"));
  const GUARD = /^node bin\/magnt\.js (deploy-guard(?: --[a-z-]+ \S+)*)$/;

  it("there are deploy scripts, and no other script runs wrangler deploy (except the offline --dry-run build)", () => {
    expect(deployScripts.length).toBeGreaterThanOrEqual(2);
    for (const [name, command] of Object.entries(scripts)) {
      if (/wrangler deploy(?! --dry-run)/.test(command)) expect(name === "deploy" || name.startsWith("deploy:"), name).toBe(true);
    }
  });

  it.each(deployScripts)("%s: the guard is the first command and every later command only runs if it passed", (_name, command) => {
    const steps = command.split("&&").map((step) => step.trim());
    expect(steps[0]).toMatch(GUARD);
    expect(command).not.toMatch(/;|\|\||(?<!&)&(?!&)/);
    expect(steps.slice(1).some((step) => /wrangler deploy/.test(step))).toBe(true);
  });

  it.each(deployScripts)("%s: its guard, run as the script runs it, refuses the placeholder database_id (exit 2)", async (_name, command) => {
    const argv = GUARD.exec(command.split("&&")[0]!.trim())![1]!.split(" ");
    const configPath = argv[argv.indexOf("--config") + 1]!;
    const cwd = tempProject();
    // Whatever id the repository's config carries now, give each D1 entry the placeholder.
    const text = readFileSync(join(REPO_ROOT, configPath), "utf8");
    const withPlaceholder = text.replace(/("database_id"\s*:\s*")[^"]*"/g, (_match, key: string) => `${key}00000000-0000-0000-0000-000000000000"`);
    writeFileSync(join(cwd, configPath), withPlaceholder);
    const hasD1 = readWranglerConfig(configPath, cwd).d1Databases.length > 0;
    const run = await runMagnt(argv, { cwd });
    if (hasD1) {
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`${configPath} still carries the placeholder database_id 00000000-0000-0000-0000-000000000000`);
    } else {
      // A config without D1 (gateway) has nothing to refuse (08 §4).
      expect(run.code).toBe(0);
    }
  });
});
