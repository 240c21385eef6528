/**
 * One direction of imports (docs/architecture.md, "Layers"), read from the
 * source text of worker/ and cli/:
 *
 *   contracts → config → lib → storage, edge → capabilities → surfaces → entries
 *
 * Fails on an import against that order, on siblings importing each other
 * (two capabilities, storage ↔ edge, two surfaces), on reaching into a
 * capability other than through its index.ts, on cli/ importing worker/
 * outside worker/contracts, on a folder under worker/ that has no layer, and
 * on `import { z } from "zod"` under worker/ (the namespace import keeps zod's
 * locales out of the bundle). The checker is tested on synthetic sources too,
 * so a rule that can never fire is noticed.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");

/** Layer rank of each folder under worker/; siblings share a rank and never import each other. */
export const LAYERS: Record<string, number> = {
  contracts: 0,
  config: 1,
  lib: 2,
  storage: 3,
  edge: 3,
  contacts: 4,
  signals: 4,
  notify: 4,
  owner: 4,
  dialogue: 4,
  mcp: 5,
  a2a: 5,
  site: 5,
  entries: 6,
};
const CAPABILITIES = new Set(["contacts", "signals", "notify", "owner", "dialogue"]);

export interface SourceFile {
  /** Repository-relative path with forward slashes, e.g. `worker/mcp/serve.ts`. */
  path: string;
  text: string;
}

const IMPORT_PATTERN = /(?:^|\n)\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;
const NAMED_ZOD_IMPORT = /import\s+(?:type\s+)?\{[^}]*\bz\b[^}]*\}\s*from\s*["']zod["']/;

/**
 * The storage modules' SQL text (`worker/storage/<group>/sql`), which the CLI
 * shares so it never restates the schema; they may import only types, or
 * worker/contracts, so nothing of the Worker's runtime reaches the CLI.
 */
const STORAGE_SQL_MODULE = /^worker\/storage\/[a-z-]+\/sql$/;

function isTypeOnlyImport(text: string, specifier: string): boolean {
  const escaped = specifier.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const statements = withoutComments(text).match(new RegExp(`(?:import|export)\\b[^;"'\`]*?\\bfrom\\s*["']${escaped}["']`, "g")) ?? [];
  return statements.length > 0 && statements.every((line) => /^(?:import|export)\s+type\b/.test(line));
}

/** Source text without comments, so an import quoted in a JSDoc is not read as one. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of withoutComments(text).matchAll(IMPORT_PATTERN)) found.push((match[1] ?? match[2] ?? match[3])!);
  return found;
}

/** `worker/<folder>/…` → folder, else null. */
function workerFolder(path: string): string | null {
  const parts = path.split("/");
  return parts[0] === "worker" && parts.length > 2 ? parts[1]! : null;
}

/** Every violation in `files`, one line each (empty when the tree is layered). */
export function layerViolations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const fromFolder = workerFolder(file.path);
    if (file.path.startsWith("worker/")) {
      if (fromFolder === null || !(fromFolder in LAYERS)) {
        problems.push(`${file.path}: folder has no layer (add it to LAYERS and docs/architecture.md)`);
        continue;
      }
      if (NAMED_ZOD_IMPORT.test(file.text)) problems.push(`${file.path}: import { z } from "zod" (use import * as z from "zod")`);
    }
    for (const specifier of importsOf(file.text)) {
      if (!specifier.startsWith(".")) continue;
      const target = normalize(join(dirname(file.path), specifier)).split(sep).join("/");
      const targetParts = target.split("/");
      const toFolder = targetParts[0] === "worker" && targetParts.length >= 2 ? targetParts[1]! : null;
      if (file.path.startsWith("cli/")) {
        if (target.startsWith("worker/") && toFolder !== "contracts" && !STORAGE_SQL_MODULE.test(target)) {
          problems.push(`${file.path}: cli/ imports ${target} (only worker/contracts and worker/storage/<group>/sql are shared)`);
        }
        continue;
      }
      if (STORAGE_SQL_MODULE.test(file.path.replace(/\.ts$/, "")) && !isTypeOnlyImport(file.text, specifier) && !target.startsWith("worker/contracts")) {
        problems.push(`${file.path}: a storage sql.ts imports ${target} at run time (the CLI imports it: only worker/contracts, or import type)`);
      }
      if (fromFolder === null || toFolder === null || toFolder === fromFolder) continue;
      const from = LAYERS[fromFolder]!;
      const to = LAYERS[toFolder];
      if (to === undefined) continue; // reported on the target file itself
      if (to > from) problems.push(`${file.path}: ${fromFolder} (layer ${from}) imports ${toFolder} (layer ${to}) — against the layer order`);
      else if (to === from) problems.push(`${file.path}: ${fromFolder} imports its sibling ${toFolder} (${specifier})`);
      else if (CAPABILITIES.has(toFolder) && target !== `worker/${toFolder}/index` && target !== `worker/${toFolder}`) {
        problems.push(`${file.path}: reaches into ${target}; import the capability through worker/${toFolder}/index.ts`);
      }
    }
  }
  return problems;
}

function sourcesUnder(folder: string): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(".ts")) out.push({ path: relative(ROOT, full).split(sep).join("/"), text: readFileSync(full, "utf8") });
    }
  };
  walk(join(ROOT, folder));
  return out;
}

describe("layers of worker/ and cli/", () => {
  it("the repository's imports run one way", () => {
    const files = [...sourcesUnder("worker"), ...sourcesUnder("cli")];
    expect(files.length).toBeGreaterThan(50);
    expect(layerViolations(files)).toEqual([]);
  });

  it("every capability has an index.ts as its public surface", () => {
    for (const capability of CAPABILITIES) {
      let entries: string[] = [];
      try {
        entries = readdirSync(join(ROOT, "worker", capability));
      } catch {
        continue; // a capability of a later release that does not exist yet
      }
      expect(entries, capability).toContain("index.ts");
    }
  });

  it("the test helpers import zod as a namespace too", () => {
    expect(readFileSync(join(ROOT, "test/helpers/event-schema.ts"), "utf8")).not.toMatch(NAMED_ZOD_IMPORT);
  });
});

describe("the checker can fail (synthetic sources)", () => {
  const check = (path: string, text: string) => layerViolations([{ path, text }]);

  it.each([
    ["worker/edge/x.ts", 'import { a } from "../mcp/serve";', /against the layer order/],
    ["worker/contracts/x.ts", 'export { a } from "../config/env";', /against the layer order/],
    ["worker/edge/x.ts", 'import { sha } from "../storage/hash";', /sibling storage/],
    ["worker/signals/x.ts", 'import { trimmedText } from "../contacts/schema";', /sibling contacts/],
    ["worker/signals/x.ts", 'import { a } from "../contacts/index";', /sibling contacts/],
    ["worker/mcp/x.ts", 'import { saveContact } from "../contacts/store";', /through worker\/contacts\/index\.ts/],
    ["worker/site/x.ts", 'import { a } from "../a2a/index";', /sibling a2a/],
    ["worker/storage/x.ts", 'const m = await import("../entries/monolith");', /against the layer order/],
    ["worker/misc/x.ts", "export const a = 1;", /has no layer/],
    ["worker/mcp/x.ts", 'import { z } from "zod";', /import \* as z/],
    ["worker/mcp/x.ts", 'import { type ZodType, z } from "zod";', /import \* as z/],
    ["cli/commands/x.ts", 'import { a } from "../../worker/edge/pipeline";', /only worker\/contracts/],
    ["cli/x.ts", 'import {\n  a,\n  b,\n} from "../worker/storage/d1";', /only worker\/contracts/],
    ["cli/commands/x.ts", 'import { a } from "../../worker/storage/dialogue-sql";', /only worker\/contracts/],
    ["worker/storage/owner/sql.ts", 'import { statement } from "../d1";', /at run time/],
  ])("%s: %s", (path, text, message) => {
    const problems = check(path, text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it.each([
    ["worker/mcp/x.ts", 'import { proposeContactTool } from "../contacts/index";'],
    ["worker/entries/x.ts", 'import { runScheduled } from "../notify/index";'],
    ["worker/edge/x.ts", 'import { sha256Hex } from "../lib/hash";'],
    ["worker/mcp/x.ts", 'import * as z from "zod";'],
    ["worker/edge/x.ts", '/**\n * import { a } from "../mcp/serve";\n */\n// import { b } from "../entries/monolith";'],
    ["worker/contacts/x.ts", 'import { a } from "./store";'],
    ["cli/commands/x.ts", 'import { PACKAGE_VERSION } from "../../worker/contracts";'],
    ["cli/commands/x.ts", 'import { isRecord } from "../../worker/contracts/guards";'],
    ["cli/commands/x.ts", 'import { contactOneStatement } from "../../worker/storage/owner/sql";'],
    ["worker/storage/owner/sql.ts", 'import type { Statement } from "../d1";'],
    ["worker/storage/owner/sql.ts", 'import type { SqlStatement } from "../../contracts/sql-statement";'],
  ])("allows %s: %s", (path, text) => {
    expect(check(path, text)).toEqual([]);
  });
});
