/**
 * Bundles one Worker module the way Wrangler does (esbuild, ESM, workerd
 * conditions, minified), in memory, with its metafile: the bundle-input test
 * and `npm run bench` measure the same thing.
 */
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build, type Metafile } from "esbuild";
import { parseJsonc } from "../../cli/lib/jsonc";

export interface BundleFacts {
  /** Input paths (repository-relative, node_modules included) that the bundler read. */
  inputs: string[];
  /** Bytes each input left in the minified output (inputs tree-shaken to nothing are absent). */
  bytesInOutput: Record<string, number>;
  /** Gzip (level 9) size of the output in bytes. */
  gzipBytes: number;
}

/** The module aliases of a Wrangler config (issue 21: the SDK's workerd shim replaced), as esbuild takes them. */
export function wranglerAliases(config = "wrangler.jsonc"): Record<string, string> {
  const parsed = parseJsonc(readFileSync(config, "utf8")) as { alias?: Record<string, string> };
  return { ...parsed.alias };
}

/** Bundles `entry` with the monolith config's aliases, as Wrangler deploys it; `alias: {}` bundles without them. */
export async function bundleFacts(entry: string, options: { alias?: Record<string, string> } = {}): Promise<BundleFacts> {
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
    alias: options.alias ?? wranglerAliases(),
    logLevel: "silent",
  });
  const metafile: Metafile = result.metafile;
  const output = result.outputFiles[0]!.contents;
  const bytesInOutput: Record<string, number> = {};
  for (const [path, input] of Object.entries(Object.values(metafile.outputs)[0]!.inputs)) {
    if (input.bytesInOutput > 0) bytesInOutput[path] = input.bytesInOutput;
  }
  return { inputs: Object.keys(metafile.inputs), bytesInOutput, gzipBytes: gzipSync(output, { level: 9 }).byteLength };
}

/**
 * What the owner gateway may not carry (issue 12): the MCP SDK, any capability
 * but the owner's OAuth modules, the owner tools, the tool definition type,
 * any MCP module but the SDK-free `mcp/http.ts`. Judged by the bytes each
 * input leaves in the bundle: the entry reaches the owner capability through
 * its index (the layer rule), which re-exports the tools that esbuild drops.
 */
export const OWNER_GATEWAY_FORBIDDEN: readonly RegExp[] = [
  /@modelcontextprotocol[\\/]server/,
  /^worker\/(contacts|signals|notify|dialogue|a2a|site)\//,
  /^worker\/owner\/tools\.ts$/,
  /^worker\/lib\/tool-definition\.ts$/,
  /^worker\/mcp\/(?!http\.ts$)/,
];

/** The inputs of `facts` that leave bytes in the bundle and match one of `patterns`. */
export function carried(facts: BundleFacts, patterns: readonly RegExp[]): string[] {
  return Object.keys(facts.bytesInOutput).filter((path) => patterns.some((pattern) => pattern.test(path)));
}
