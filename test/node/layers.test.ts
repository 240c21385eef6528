/**
 * One direction of imports (docs/architecture.md, "Layers"), read from the
 * source text of worker/ and cli/:
 *
 *   contracts → config → lib → storage, edge → capabilities → surfaces → entries
 *
 * Fails on an import against that order, on siblings importing each other
 * (two capabilities, storage ↔ edge, two surfaces), on reaching into a
 * capability other than through its index.ts, on cli/ importing worker/
 * outside worker/contracts, on a command of cli/commands/ importing another
 * command (what two commands share lives in cli/lib/), on cli/lib/ importing
 * a command, on a folder under worker/ that has no layer, and
 * on `import { z } from "zod"` under worker/ (the namespace import keeps zod's
 * locales out of the bundle). The checker is tested on synthetic sources too,
 * so a rule that can never fire is noticed.
 *
 * SQL is text, so imports alone cannot see who touches a table. The second
 * checker (`tableViolations`, docs/architecture.md "Storage", decision 183)
 * reads the SQL keywords that name a table — `FROM`, `JOIN`, `INTO`,
 * `UPDATE`, `DELETE FROM`, in any case, comments aside — in worker/, cli/ and
 * scripts/ (tests and migrations aside), and fails when:
 * - a table is named outside the storage group that owns it
 *   (`worker/storage/<group>/`, the map `TABLE_OWNERS`);
 * - a group writes (`INTO`, `UPDATE`, `DELETE FROM`) a table of another group —
 *   writes happen only in the owner;
 * - a group reads (`FROM`, `JOIN`) a table of another group that its `sql.ts`
 *   header does not declare on its `Reads:` line — a cross-group read model
 *   lives in the group of its driving table and says what else it reads;
 * - a `Reads:` line declares a table the group owns, does not know, or never reads;
 * - a group's `sql.ts` imports anything but `import type` from `../d1` and
 *   `worker/contracts/` (the CLI imports it, so it must stay dependency-free).
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

/** `cli/commands/<command>[.ts|/…]` → the command (a file or a group's folder), else null. */
function cliCommand(path: string): string | null {
  const parts = path.replace(/\.ts$/, "").split("/");
  return parts[0] === "cli" && parts[1] === "commands" && parts.length > 2 ? parts[2]! : null;
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
        const fromCommand = cliCommand(file.path);
        const toCommand = cliCommand(target);
        if (file.path.startsWith("cli/lib/") && toCommand !== null) problems.push(`${file.path}: cli/lib imports the command ${target}`);
        if (fromCommand !== null && toCommand !== null && toCommand !== fromCommand) {
          problems.push(`${file.path}: imports another command, ${target} (what two commands share belongs in cli/lib/)`);
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

/** Each table's one owning group, `worker/storage/<group>/` (docs/architecture.md "Storage"). */
export const TABLE_OWNERS: Record<string, string> = {
  contacts: "contacts",
  task_signals: "signals",
  task_signal_tokens: "signals",
  observed_task_signals: "observations",
  notification_outbox: "outbox",
  notification_state: "outbox",
  contact_owner_state: "owner",
  owner_drafts: "owner",
  dialogues: "dialogue",
  dialogue_contacts: "dialogue",
  dialogue_replies: "dialogue",
  dialogue_owner_reads: "dialogue",
  dialogue_fetch_attempts: "dialogue",
  owner_oauth_spent: "oauth",
};

const TABLE_REFERENCE = new RegExp(
  `\\b(DELETE\\s+FROM|INSERT\\s+(?:OR\\s+\\w+\\s+)?INTO|REPLACE\\s+INTO|INTO|UPDATE|FROM|JOIN)\\s+["'\`]?(${Object.keys(TABLE_OWNERS).join("|")})\\b`,
  "gi",
);
const READS_LINE = /^\s*\*\s*Reads:\s*(.*)$/m;

function storageGroup(path: string): string | null {
  const parts = path.split("/");
  return parts[0] === "worker" && parts[1] === "storage" && parts.length > 3 ? parts[2]! : null;
}

/** The tables a group's `sql.ts` header declares on its `Reads:` line (a parenthesis is prose, e.g. "(only its own table)"). */
function declaredReads(sqlText: string): string[] {
  const line = READS_LINE.exec(sqlText)?.[1] ?? "";
  return line.trim().startsWith("(") ? [] : line.split(",").map((name) => name.trim()).filter((name) => name !== "");
}

/** Every table-ownership violation in `files`, one line each (empty when every table has one owner). */
export function tableViolations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  const declared = new Map<string, string[]>();
  const readByGroup = new Map<string, Set<string>>();
  for (const file of files) {
    const group = storageGroup(file.path);
    if (group !== null && file.path === `worker/storage/${group}/sql.ts`) declared.set(group, declaredReads(file.text));
  }
  for (const file of files) {
    const group = storageGroup(file.path);
    const code = withoutComments(file.text);
    for (const match of code.matchAll(TABLE_REFERENCE)) {
      const keyword = match[1]!.toUpperCase().replace(/\s+/g, " ");
      const table = match[2]!.toLowerCase();
      const owner = TABLE_OWNERS[table]!;
      const writes = keyword !== "FROM" && keyword !== "JOIN";
      if (group === owner) continue;
      if (group === null) {
        problems.push(`${file.path}: ${keyword} ${table} outside its owning module worker/storage/${owner}/ (move the statement there)`);
      } else if (writes) {
        problems.push(`${file.path}: ${keyword} ${table} — group ${group} writes a table of group ${owner} (writes only in the owner)`);
      } else if (!(declared.get(group) ?? []).includes(table)) {
        problems.push(`${file.path}: ${keyword} ${table} — group ${group} reads a table of group ${owner} without declaring it on the Reads: line of worker/storage/${group}/sql.ts`);
      } else {
        const read = readByGroup.get(group) ?? new Set<string>();
        read.add(table);
        readByGroup.set(group, read);
      }
    }
    if (group !== null && file.path === `worker/storage/${group}/sql.ts`) {
      for (const specifier of importsOf(file.text)) {
        const target = normalize(join(dirname(file.path), specifier)).split(sep).join("/");
        const typeOnly = new RegExp(`import\\s+type\\s[^;]*from\\s*["']${specifier.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}["']`).test(file.text);
        const allowed =
          target.startsWith("worker/contracts/") ||
          (target === "worker/storage/d1" && typeOnly) ||
          (dirname(target) === `worker/storage/${group}` && !/\/(store|index)$/.test(target));
        if (!allowed) problems.push(`${file.path}: imports ${specifier} (a group's sql.ts imports only \`import type\` from ../d1 and worker/contracts/)`);
      }
    }
  }
  for (const [group, tables] of declared) {
    for (const table of tables) {
      const owner = TABLE_OWNERS[table];
      if (owner === undefined) problems.push(`worker/storage/${group}/sql.ts: Reads: names ${table}, which is no table of the map`);
      else if (owner === group) problems.push(`worker/storage/${group}/sql.ts: Reads: names its own table ${table}`);
      else if (!readByGroup.get(group)?.has(table)) problems.push(`worker/storage/${group}/sql.ts: Reads: declares ${table}, which the group never reads (stale declaration)`);
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
      else if (/\.(ts|mjs|js)$/.test(name)) out.push({ path: relative(ROOT, full).split(sep).join("/"), text: readFileSync(full, "utf8") });
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

  it("every table is named only in its owning storage group (SQL included)", () => {
    const files = [...sourcesUnder("worker"), ...sourcesUnder("cli"), ...sourcesUnder("scripts")];
    expect(tableViolations(files)).toEqual([]);
  });

  it("every group of the map has its folder with sql.ts and store.ts", () => {
    for (const group of new Set(Object.values(TABLE_OWNERS))) {
      expect(readdirSync(join(ROOT, "worker", "storage", group)), group).toEqual(expect.arrayContaining(["sql.ts", "store.ts"]));
    }
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
    ["cli/x.ts", 'import { a } from "../worker/storage/contacts/store";', /only worker\/contracts/],
    ["worker/storage/owner/sql.ts", 'import { statement } from "../d1";', /at run time/],
    ["cli/commands/review.ts", 'import { readSnapshot } from "./flags/target";', /another command/],
    ["cli/commands/flags/list.ts", 'import { a } from "../metrics/index";', /another command/],
    ["cli/commands/smoke/steps.ts", 'import { a } from "../dev";', /another command/],
    ["cli/lib/x.ts", 'import { a } from "../commands/flags/catalog";', /cli\/lib imports the command/],
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
    ["cli/commands/x.ts", 'import { ownerContactPageStatement } from "../../worker/storage/contacts/sql";'],
    ["cli/commands/flags/list.ts", 'import { stateOf } from "./target";'],
    ["cli/commands/review.ts", 'import { readSnapshot } from "../lib/flag-store";'],
    ["cli/program.ts", 'import { registerFlags } from "./commands/flags/index";'],
    ["worker/storage/owner/sql.ts", 'import type { Statement } from "../d1";'],
    ["worker/storage/owner/sql.ts", 'import type { SqlStatement } from "../../contracts/sql-statement";'],
  ])("allows %s: %s", (path, text) => {
    expect(check(path, text)).toEqual([]);
  });
});

describe("the table checker can fail (synthetic sources)", () => {
  const contactsSql = { path: "worker/storage/contacts/sql.ts", text: "/**\n * Reads: contact_owner_state\n */\nconst a = \"SELECT 1 FROM contacts c LEFT JOIN contact_owner_state s\";" };
  const check = (path: string, text: string) => tableViolations([contactsSql, { path, text }]);

  it.each([
    ["worker/owner/x.ts", 'const q = "SELECT 1 FROM contacts WHERE contact_id = ?";', /FROM contacts outside its owning module worker\/storage\/contacts\//],
    ["worker/notify/x.ts", "const q = `UPDATE notification_outbox SET state = 'x'`;", /UPDATE notification_outbox outside its owning module worker\/storage\/outbox\//],
    ["worker/notify/x.ts", 'run(db, "DELETE FROM owner_oauth_spent WHERE 1");', /DELETE FROM owner_oauth_spent outside its owning module worker\/storage\/oauth\//],
    ["worker/signals/x.ts", 'const q = "insert into observed_task_signals (a) values (1)";', /INSERT INTO observed_task_signals outside/],
    ["worker/owner/x.ts", 'const q = `SELECT 1\n  FROM\n  "owner_drafts" d`;', /FROM owner_drafts outside its owning module worker\/storage\/owner\//],
    ["worker/dialogue/x.ts", 'const q = "SELECT 1 FROM x JOIN dialogue_replies r";', /JOIN dialogue_replies outside/],
    ["cli/commands/review.ts", 'const q = "SELECT * FROM contacts";', /FROM contacts outside its owning module/],
    ["scripts/x.mjs", 'const q = "SELECT * FROM task_signals";', /FROM task_signals outside its owning module worker\/storage\/signals\//],
    ["worker/storage/d1.ts", 'const q = "SELECT 1 FROM dialogues";', /FROM dialogues outside its owning module worker\/storage\/dialogue\//],
    ["worker/storage/owner/store.ts", 'const q = "UPDATE contacts SET review_status = 1";', /group owner writes a table of group contacts/],
    ["worker/storage/outbox/sql.ts", 'const q = "INSERT INTO dialogue_owner_reads (a) VALUES (1)";', /group outbox writes a table of group dialogue/],
    ["worker/storage/signals/sql.ts", 'const q = "SELECT 1 FROM task_signals t JOIN contacts c";', /group signals reads a table of group contacts without declaring it/],
    ["worker/storage/contacts/store.ts", 'const q = "SELECT 1 FROM owner_drafts";', /group contacts reads a table of group owner without declaring it/],
    ["worker/storage/oauth/sql.ts", 'import { run } from "../d1";', /imports \.\.\/d1/],
    ["worker/storage/oauth/sql.ts", 'import { sha256Hex } from "../../lib/hash";', /imports \.\.\/\.\.\/lib\/hash/],
    ["worker/storage/oauth/sql.ts", 'import { a } from "./store";', /imports \.\/store/],
  ])("%s: %s", (path, text, message) => {
    const problems = check(path, text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it("a Reads: line must be true: no own, unknown or unused table", () => {
    const sql = (reads: string, body: string) => [{ path: "worker/storage/owner/sql.ts", text: `/**\n * Reads: ${reads}\n */\n${body}` }];
    expect(tableViolations(sql("owner_drafts", 'const a = "SELECT 1 FROM owner_drafts";'))).toEqual([
      "worker/storage/owner/sql.ts: Reads: names its own table owner_drafts",
    ]);
    expect(tableViolations(sql("drafts", 'const a = "SELECT 1 FROM owner_drafts";'))).toEqual([
      "worker/storage/owner/sql.ts: Reads: names drafts, which is no table of the map",
    ]);
    expect(tableViolations(sql("contacts", 'const a = "SELECT 1 FROM owner_drafts";'))).toEqual([
      "worker/storage/owner/sql.ts: Reads: declares contacts, which the group never reads (stale declaration)",
    ]);
  });

  it("a name in prose or a comment is not a query; the CLI is not exempt", () => {
    expect(check("worker/owner/x.ts", '// SELECT 1 FROM contacts\n/** UPDATE owner_drafts */\nconst contacts = 1; const from = contacts;')).toEqual([]);
    expect(check("worker/storage/contacts/store.ts", 'const q = "SELECT 1 FROM contacts c JOIN contact_owner_state s";')).toEqual([]);
    const imports = 'import type { Statement } from "../d1";\nimport { A } from "../../contracts/ids";\nimport { B } from "./schema-0001";';
    expect(tableViolations([{ path: "worker/storage/contacts/sql.ts", text: imports }])).toEqual([]);
    // The CLI has no exemption: a query in a command is a restated schema.
    expect(tableViolations([{ path: "cli/commands/review.ts", text: 'const q = "SELECT * FROM contacts";' }])).toHaveLength(1);
  });
});
