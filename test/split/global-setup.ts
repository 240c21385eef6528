/**
 * globalSetup of the "split" project (10 §1): bundles every active auxiliary
 * Worker (./topology.ts) with esbuild, the way Wrangler does (ESM, workerd
 * conditions, the configs' aliases, `cloudflare:*` left to the runtime), into
 * `dist/test-workers/<name>.mjs`, which vitest.config.ts hands to Miniflare.
 *
 * Each bundle is the real entry module (named exports re-exported unchanged,
 * the default handler wrapped only to record what it receives) plus the
 * test-only taps (./workers/taps.ts), evaluated first so the console is tapped
 * before the entry runs any code.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { build } from "esbuild";
import { wranglerAliases } from "../helpers/bundle";
import { activeAuxiliaryWorkers, bundlePath, TAPS_MODULE } from "./topology";

export default async function bundleAuxiliaryWorkers(): Promise<void> {
  const root = process.cwd();
  const taps = JSON.stringify(resolve(root, TAPS_MODULE));
  await Promise.all(
    activeAuxiliaryWorkers(root).map(async (worker) => {
      const entry = JSON.stringify(resolve(root, worker.entry));
      const outfile = bundlePath(worker, root);
      mkdirSync(dirname(outfile), { recursive: true });
      await build({
        stdin: {
          contents: [
            `import { tapDefault } from ${taps};`,
            `import entry from ${entry};`,
            `export * from ${entry};`,
            `export default tapDefault(entry);`,
            `export { TestTaps, RateLimitRecorder } from ${taps};`,
          ].join("\n"),
          resolveDir: root,
          sourcefile: `${worker.role}-test-entry.ts`,
          loader: "ts",
        },
        bundle: true,
        outfile,
        format: "esm",
        platform: "neutral",
        target: "es2022",
        conditions: ["workerd", "worker", "browser"],
        mainFields: ["browser", "module", "main"],
        external: ["cloudflare:*"],
        // The configs' module aliases (the SDK shim, issue 21), as Wrangler applies them.
        alias: wranglerAliases(),
        sourcemap: true,
        logLevel: "warning",
      });
    }),
  );
}
