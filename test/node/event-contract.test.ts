/**
 * The Worker's event types (worker/contracts/events.ts, imported by the Worker
 * as types and plain lists) and the runtime schema (worker/contracts/event-schema.ts,
 * used by tests and `magnt metrics`) describe the same events. The type-level
 * checks run under `npm run typecheck`; the runtime ones under `npm test`.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { RequestEvent, ScheduledEvent } from "../../worker/contracts/events";
import { MCP_METHOD_VALUES, TOOL_NAME_VALUES, toolNameLabel } from "../../worker/contracts/events";
import {
  requestEventSchema,
  type RequestEventShape,
  type ScheduledEventShape,
} from "../../worker/contracts/event-schema";

describe("event contract", () => {
  it("a scheduled event is exactly the schema's shape", () => {
    expectTypeOf<ScheduledEvent>().toEqualTypeOf<ScheduledEventShape>();
  });

  it("every event the schema accepts is a RequestEvent the Worker can build", () => {
    expectTypeOf<RequestEventShape>().toExtend<RequestEvent>();
  });

  it("the schema rejects a label outside the closed lists", () => {
    const base = {
      event_id: "6f1c1d5e-3c1b-4d5e-9f3a-2b1c0d9e8f7a",
      time: "2026-11-30T12:00:00.000Z",
      role: "monolith",
      event_type: "mcp_request",
      method: "POST",
      host: "magnt.ru",
      path: "/mcp",
      query: "",
      userAgent: "",
      clientKind: "browser-or-unknown",
      clientName: "",
      referrer: "",
      country: "",
      colo: "",
      city: "",
      asn: null,
      status: 200,
      duration_ms: 1,
      outcome: "success",
      controlled_test: false,
      identity_verified: false,
      mcp_protocol_version: null,
      mcp_method: "tools/call",
      client_name: null,
      client_version: null,
      tool_name: "about_magnt",
      resource_name: null,
      rpc_error_code: null,
      tool_result: null,
    };
    expect(requestEventSchema.safeParse(base).success).toBe(true);
    expect(requestEventSchema.safeParse({ ...base, tool_name: "made_up_tool" }).success).toBe(false);
    expect(requestEventSchema.safeParse({ ...base, mcp_method: "tools/destroy" }).success).toBe(false);
  });

  it("toolNameLabel keeps a listed name and maps anything else to unknown", () => {
    for (const name of TOOL_NAME_VALUES) expect(toolNameLabel(name)).toBe(name);
    expect(toolNameLabel("made_up_tool")).toBe("unknown");
    expect(MCP_METHOD_VALUES.at(-1)).toBe("unknown");
  });
});
