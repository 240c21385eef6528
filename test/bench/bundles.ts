/**
 * Bundle sizes (10 §6, issue 14): `wrangler deploy --dry-run --outdir` for each
 * of the four deployables (offline), gzip level 9 of the emitted module(s).
 * Gate ≤ 150 KB for every deployable; the monolith (the public door) carries
 * the reported target ≤ 100 KB. Plus the two shape checks shared with the
 * test suite through test/helpers/bundle.ts: the public route table carries
 * no SDK and no zod, the owner gateway no tool code and no MCP SDK; and the
 * monolith and core carry no elicitation-form validator (issue 21: their
 * source maps list no `@cfworker/json-schema` source).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { bundleFacts, carried, OWNER_GATEWAY_FORBIDDEN } from "../helpers/bundle";
import type { Report } from "./report";

const BENCH = "bundle size";
const GATE_KB = 150;
const MONOLITH_TARGET_KB = 100;

const DEPLOYABLES = [
  ["monolith", "wrangler.jsonc"],
  ["core", "wrangler.core.jsonc"],
  ["gateway", "wrangler.gateway.jsonc"],
  ["owner_gateway", "wrangler.owner.jsonc"],
] as const;

export const OFFLINE_ENV: NodeJS.ProcessEnv = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" };

export function wranglerBin(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("wrangler/package.json")), "bin/wrangler.js");
}

/** The sources of the emitted source maps in `outdir` that match `pattern`. */
function sourcesMatching(outdir: string, pattern: RegExp): string[] {
  return readdirSync(outdir)
    .filter((file) => file.endsWith(".map"))
    .flatMap((file) => (JSON.parse(readFileSync(join(outdir, file), "utf8")) as { sources: string[] }).sources)
    .filter((source) => pattern.test(source));
}

export async function benchBundles(report: Report, options: { root: string; outDir: string }): Promise<void> {
  const validatorSources: Record<string, string[]> = {};
  for (const [role, config] of DEPLOYABLES) {
    if (!existsSync(join(options.root, config))) {
      report.record({ benchmark: BENCH, measurement: `${role} (${config} not in this build)`, value: null, unit: "KB gzip", budget: `≤ ${GATE_KB}`, kind: "gate" }, null);
      continue;
    }
    const outdir = join(options.outDir, "bundle", role);
    const result = spawnSync(process.execPath, [wranglerBin(), "deploy", "--dry-run", "--outdir", outdir, "--config", config], {
      cwd: options.root,
      env: OFFLINE_ENV,
      encoding: "utf8",
    });
    if (result.status !== 0) throw new Error(`wrangler dry-run of ${config} failed:\n${result.stderr}`);
    const gzipBytes = readdirSync(outdir)
      .filter((file) => /\.(m?js)$/.test(file))
      .reduce((sum, file) => sum + gzipSync(readFileSync(join(outdir, file)), { level: 9 }).byteLength, 0);
    const kb = gzipBytes / 1000;
    if (role === "monolith" || role === "core") validatorSources[role] = sourcesMatching(outdir, /@cfworker[\\/]json-schema|cfWorkerProvider/);
    report.record(
      { benchmark: BENCH, measurement: role === "monolith" ? "monolith (public door)" : role, value: kb, unit: "KB gzip", budget: `≤ ${GATE_KB}`, kind: "gate" },
      kb <= GATE_KB,
      role === "monolith" ? { target: { budget: `≤ ${MONOLITH_TARGET_KB}`, met: kb <= MONOLITH_TARGET_KB } } : {},
    );
  }

  for (const [role, sources] of Object.entries(validatorSources)) {
    report.record(
      { benchmark: BENCH, measurement: `${role}: no elicitation-form validator (@cfworker/json-schema)`, value: sources.length, unit: "sources", budget: "0", kind: "gate" },
      sources.length === 0,
      sources.length === 0 ? {} : { detail: sources.slice(0, 3).join(", ") },
    );
  }

  // The public route table alone (what the gateway carries in front of core).
  const routes = await bundleFacts("worker/entries/public-routes.ts");
  const clean = !routes.inputs.some((input) => /@modelcontextprotocol[\\/]server|node_modules[\\/]zod[\\/]/.test(input));
  report.record({ benchmark: BENCH, measurement: "public route table (no SDK, no zod)", value: routes.gzipBytes / 1000, unit: "KB gzip", budget: "SDK- and zod-free", kind: "gate" }, clean);

  // The owner gateway: no tool code, no MCP SDK.
  const owner = await bundleFacts("worker/entries/owner-gateway.ts");
  const forbidden = carried(owner, OWNER_GATEWAY_FORBIDDEN);
  report.record(
    { benchmark: BENCH, measurement: "owner gateway (no tool code, no MCP SDK)", value: owner.gzipBytes / 1000, unit: "KB gzip", budget: "tool- and SDK-free", kind: "gate" },
    forbidden.length === 0,
    forbidden.length === 0 ? {} : { detail: `carries: ${forbidden.join(", ")}` },
  );
  const leftovers = Object.entries(owner.bytesInOutput).filter(([path]) => /^worker\/owner\/(store|schemas|visitor-content)\.ts$/.test(path));
  report.record(
    { benchmark: BENCH, measurement: "owner gateway: owner store/schema constants kept", value: leftovers.reduce((sum, [, bytes]) => sum + bytes, 0) / 1000, unit: "KB (min)", budget: "", kind: "info" },
    true,
  );
}
