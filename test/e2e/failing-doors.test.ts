/**
 * (b) Smoke against broken doors names the failing step and exits 1: a door
 * whose config has no D1 binding (storage missing) and a door whose local
 * database has no migrations applied. The two doors run side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, magnt, MAGNT_BIN, relocatedLocalConfigText, removeTempDirs, startDoor, stopAllDoors, tempDir, type Door } from "./helpers";

let noStorage: Door | undefined;
let unmigrated: Door | undefined;

/** wrangler.local.jsonc without its d1_databases block, in a temp dir (main made absolute). */
function configWithoutStorage(): string {
  const text = relocatedLocalConfigText().replace(/"d1_databases":\s*\[[\s\S]*?\n  \],?/, "");
  if (text.includes("d1_databases")) throw new Error("could not remove d1_databases from the local config");
  const path = join(tempDir("nostorage"), "wrangler.nostorage.jsonc");
  writeFileSync(path, text);
  return path;
}

beforeAll(async () => {
  // One after the other: Wrangler picks a free inspector port only when the other door already holds 9229.
  const portA = await freePort();
  noStorage = await startDoor(process.execPath, [MAGNT_BIN, "dev", "--no-migrate", "--port", String(portA), "--config", configWithoutStorage(), "--persist-to", tempDir("nostorage-state")], portA);
  const portB = await freePort();
  unmigrated = await startDoor(process.execPath, [MAGNT_BIN, "dev", "--no-migrate", "--port", String(portB), "--persist-to", tempDir("unmigrated")], portB);
});

afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

describe("storage missing", () => {
  it("plain smoke passes and reports storage_available: false", async () => {
    const run = await magnt(["smoke", noStorage!.mcp]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("storage_available: false");
  });

  it("--submit-test fails at propose_contact with exit 1", async () => {
    const run = await magnt(["smoke", noStorage!.mcp, "--submit-test", "--json"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("smoke failed at step propose_contact: status not_saved");
    const last = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { error: { code: string } };
    expect(last.error.code).toBe("check_failed");
  });

  it("probe-check fails the storage flags (exit 1) unless --no-expect-storage", async () => {
    expect((await magnt(["probe-check", noStorage!.origin])).code).toBe(1);
    expect((await magnt(["probe-check", noStorage!.origin, "--no-expect-storage"])).code).toBe(0);
  });
});

describe("migrations not applied", () => {
  it("--shared-memory-test fails at search_before with exit 1", async () => {
    const run = await magnt(["smoke", unmigrated!.mcp, "--shared-memory-test"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("smoke failed at step search_before: status storage_error");
    expect(run.stdout).toMatch(/contribute\s+skipped/);
  });
});
