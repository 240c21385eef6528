/**
 * migrations/checksums.json pins the SHA-256 of every migration file (09 §2):
 * an edited, added, renamed or removed file fails here until the manifest is
 * updated on purpose (and an applied migration is never edited).
 */
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MIGRATION_FILES } from "../../worker/contracts";

const DIR = fileURLToPath(new URL("../../migrations", import.meta.url));
const manifest = JSON.parse(readFileSync(join(DIR, "checksums.json"), "utf8")) as Record<string, string>;
const files = readdirSync(DIR).filter((name) => name.endsWith(".sql")).sort();

describe("migrations/checksums.json", () => {
  it("lists exactly the .sql files of migrations/", () => {
    expect(Object.keys(manifest).sort()).toEqual(files);
  });

  it.each(files)("%s matches its pinned SHA-256", (name) => {
    expect(createHash("sha256").update(readFileSync(join(DIR, name))).digest("hex")).toBe(manifest[name]);
  });

  it("every file is named NNNN_name.sql and every contract migration exists", () => {
    for (const name of files) expect(name).toMatch(/^\d{4}_[a-z0-9_]+\.sql$/);
    for (const name of MIGRATION_FILES) expect(files).toContain(name);
  });
});
