import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callDoor, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";

describe("wiring", () => {
  it("serves the probe through the runtime's own dispatch", async () => {
    const response = await SELF.fetch("https://magnt.ru/__magnt_probe");
    expect(response.status).toBe(200);
    const probe = await response.json<Record<string, unknown>>();
    expect(probe.mcp_door_version).toBe("0.2.0");
  });
  it("emits one valid event", async () => {
    const logs = captureConsole();
    const response = await callDoor("/__magnt_probe");
    expect(response.status).toBe(200);
    expect(logs.events()).toHaveLength(1);
    assertValidEvent(logs.events()[0]);
  });
});
