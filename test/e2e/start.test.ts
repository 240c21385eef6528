/**
 * (a) The README's start command: `npm start -- --port <free>` on a fresh
 * state directory answers /__magnt_probe (versions, storage flags) and serves
 * the built-in page at /, fully offline.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_DOOR_VERSION, SHARED_MEMORY_VERSION } from "../../worker/contracts";
import { freePort, removeTempDirs, startDoorWithNpm, stopAllDoors, tempDir, type Door } from "./helpers";

let door: Door | undefined;

beforeAll(async () => {
  const port = await freePort();
  door = await startDoorWithNpm(port, tempDir("start"));
  console.info(`npm start answered the probe after ${door.readyAfterMs} ms (fresh state, migrations applied)`);
});

afterAll(async () => {
  await stopAllDoors();
  removeTempDirs();
});

describe("npm start", () => {
  it("prints the door's URL", () => {
    expect(door!.output()).toContain(`MAGNT door: http://localhost:${door!.port}/ (MCP: http://localhost:${door!.port}/mcp)`);
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
