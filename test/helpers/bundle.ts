/**
 * Bundles one Worker module the way Wrangler does (esbuild, ESM, workerd
 * conditions, minified), in memory, with its metafile: the bundle-input test
 * and `npm run bench` measure the same thing.
 */
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";

export interface BundleFacts {
  /** Input paths (repository-relative, node_modules included) that ended up in the bundle. */
  inputs: string[];
  /** Gzip (level 9) size of the output in bytes. */
  gzipBytes: number;
}

export async function bundleFacts(entry: string): Promise<BundleFacts> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    minify: true,
    metafile: true,
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "silent",
  });
  const metafile: Metafile = result.metafile;
  const output = result.outputFiles[0]!.contents;
  return { inputs: Object.keys(metafile.inputs), gzipBytes: gzipSync(output, { level: 9 }).byteLength };
}
