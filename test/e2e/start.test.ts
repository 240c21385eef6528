/**
 * (a) The README's start command: `npm start -- --port <free>` on a fresh
 * state directory announces the door only once it answers: nothing is
 * requested before the announcement, and the first request after it — a
 * public `tools/list` — is a 200. Then it answers /__magnt_probe (versions,
 * storage flags) and serves the built-in page at /, fully offline.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_DOOR_VERSION, MIGRATION_FILES, SHARED_MEMORY_VERSION } from "../../worker/contracts";
import { toolsListRequest } from "../../cli/lib/readiness";
import { freePort, READY_LINE, removeTempDirs, startDoorWithNpm, stopAllDoors, tempDir, type Door } from "./helpers";

let door: Door | undefined;

beforeAll(async () => {
  const port = await freePort();
  door = await startDoorWithNpm(port, tempDir("start"), [], { untilPrinted: READY_LINE });
  console.info(`npm start announced the door after ${door.readyAfterMs} ms (fresh state, migrations applied)`);
});

afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

describe("npm start", () => {
  it("the first request after the announcement, a public tools/list, is a 200", async () => {
    const response = await fetch(door!.mcp, toolsListRequest());
    expect(response.status).toBe(200);
    expect(((await response.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
  });

  it("prints the door's URL, the cron pass on its port and how to stop", () => {
    expect(door!.output()).toContain(`MAGNT door: http://localhost:${door!.port}/ (MCP: http://localhost:${door!.port}/mcp) — ready`);
    expect(door!.output()).toContain(`one cron pass (Telegram outbox, runs on this door, port ${door!.port}):\n  curl http://127.0.0.1:${door!.port}/cdn-cgi/handler/scheduled\n`);
    expect(door!.output()).toContain(READY_LINE);
  });

  it("starts quietly: one line per migration applied, none of Wrangler's migration tables (08 §13)", () => {
    const before = door!.output().slice(0, door!.output().indexOf("MAGNT door:"));
    for (const name of MIGRATION_FILES) expect(before).toContain(`migration applied: ${name}\n`);
    expect(before).not.toContain("Migrations to be applied");
    expect(before).not.toMatch(/[┌├└]─/);
  });

  it("answers /__magnt_probe with the release and storage flags", async () => {
    const response = await fetch(`${door!.origin}/__magnt_probe`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toContain("no-store");
    const probe = (await response.json()) as Record<string, unknown>;
    expect(probe).toMatchObject({
      ok: true,
      mcp_door_version: MCP_DOOR_VERSION,
      shared_memory_version: SHARED_MEMORY_VERSION,
      contact_storage_configured: true,
      shared_memory_storage_configured: true,
      origin: "builtin",
    });
  });

  it("serves the built-in page at /", async () => {
    const response = await fetch(`${door!.origin}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("x-magnt-origin")).toBe("builtin");
    expect(await response.text()).toContain("<html");
  });

  it("sets PUBLIC_ORIGIN from the port (the Server Card's remote URL)", async () => {
    const response = await fetch(`${door!.origin}/.well-known/mcp/server-card.json`);
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain(`"url":"http://localhost:${door!.port}/mcp"`);
  });
});
