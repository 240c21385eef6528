#!/usr/bin/env node
// `npm run build`: dry-run every deployable with the pinned Wrangler, offline (00 §3, §5).
// Each bundle lands in dist/<role>/; nothing is uploaded. Exits non-zero on the first failure.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const DEPLOYABLES = [
  ["monolith", "wrangler.jsonc"],
  ["core", "wrangler.core.jsonc"],
  ["gateway", "wrangler.gateway.jsonc"],
  ["owner_gateway", "wrangler.owner.jsonc"],
];
const wrangler = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin/wrangler.js");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true" };

for (const [role, config] of DEPLOYABLES) {
  const run = spawnSync(process.execPath, [wrangler, "deploy", "--dry-run", "--config", config, "--outdir", `dist/${role}`], {
    env,
    stdio: "inherit",
  });
  if (run.status !== 0) {
    console.error(`build: the dry run of ${config} failed`);
    process.exit(run.status ?? 1);
  }
}
