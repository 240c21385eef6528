/** The repository's TypeScript sources as text, for the tests that read the architecture off the code. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

export const ROOT = join(__dirname, "..", "..");

export interface SourceFile {
  /** Repository-relative path with forward slashes, e.g. `worker/mcp/serve.ts`. */
  readonly path: string;
  readonly text: string;
}

/** Every `.ts` file below `folder` (repository-relative). */
export function sourcesUnder(folder: string): SourceFile[] {
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

/** Source text without comments, so a name quoted in a JSDoc is not read as code. */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}
