#!/usr/bin/env node
/**
 * Prints the fault table of test/worker/fault-table.ts as the Markdown block
 * docs/reliability.md carries (issue 14). Paste the output between the
 * `fault-table` markers after changing the table; test/worker/faults.test.ts
 * fails until the document and the table agree.
 *
 *   node scripts/print-fault-table.mjs
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const dir = mkdtempSync(join(tmpdir(), "magnt-fault-table-"));
try {
  const outfile = join(dir, "fault-table.mjs");
  await build({ entryPoints: ["test/worker/fault-table.ts"], bundle: true, format: "esm", platform: "node", outfile, logLevel: "warning" });
  const { faultTableMarkdown } = await import(pathToFileURL(outfile).href);
  process.stdout.write(`${faultTableMarkdown()}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
