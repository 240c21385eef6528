#!/usr/bin/env node
// The `magnt` operator CLI. The TypeScript source in cli/ is bundled into dist/cli/magnt.mjs by
// `npm run build:cli`, which `npm ci` runs through the `prepare` script.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const bundle = fileURLToPath(new URL("../dist/cli/magnt.mjs", import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write("magnt: the CLI is not built; run `npm ci` (or `npm run build:cli`) in the repository first\n");
  process.exit(3);
}
await import(pathToFileURL(bundle).href);
