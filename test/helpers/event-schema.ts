/**
 * The telemetry event as a schema (01 §9): exact field set per event type,
 * types and length limits. Tests parse every captured event with it.
 */
import * as z from "zod";
import { EVENT_TYPES, OUTCOMES, ROLES, TOOL_RESULTS, VALIDATION_CODES } from "../../worker/contracts/events";
import { EVENT_FIELD_MAX } from "../../worker/contracts/limits";

const codePoints = (max: number) => z.string().refine((value) => [...value].length <= max, `longer than ${max} code points`);
const nullableText = (max: number) => codePoints(max).nullable();
const noControl = (value: string) => !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value);

const common = {
  event_id: z.uuid(),
  time: z.iso.datetime(),
  role: z.enum(ROLES),
  event_type: z.enum(EVENT_TYPES),
  method: codePoints(EVENT_FIELD_MAX.method),
  host: codePoints(EVENT_FIELD_MAX.host),
  path: codePoints(EVENT_FIELD_MAX.path),
  query: codePoints(EVENT_FIELD_MAX.query),
  userAgent: codePoints(EVENT_FIELD_MAX.userAgent),
  clientKind: z.enum(["bot", "probable-bot", "browser-or-unknown"]),
  clientName: z.string(),
  referrer: codePoints(EVENT_FIELD_MAX.referrer),
  country: codePoints(EVENT_FIELD_MAX.country),
  colo: codePoints(EVENT_FIELD_MAX.colo),
  city: codePoints(EVENT_FIELD_MAX.city),
  asn: z.number().int().nullable(),
  status: z.number().int().min(100).max(599),
  duration_ms: z.number().int().min(0),
  outcome: z.enum(OUTCOMES),
  controlled_test: z.boolean(),
  identity_verified: z.literal(false),
  forwarded_to_core: z.boolean().optional(),
};

const mcp = {
  mcp_protocol_version: nullableText(EVENT_FIELD_MAX.mcp_protocol_version),
  mcp_method: z.string().nullable(),
  client_name: nullableText(EVENT_FIELD_MAX.client_name),
  client_version: nullableText(EVENT_FIELD_MAX.client_version),
  tool_name: z.string().nullable(),
  resource_name: z.string().nullable(),
  rpc_error_code: z.number().int().nullable(),
  tool_result: z.enum(TOOL_RESULTS).nullable(),
  validation_status: z.enum(["valid", "invalid"]).optional(),
  validation_field: z.string().optional(),
  validation_code: z.enum(VALIDATION_CODES).optional(),
  validation_issue_count: z.number().int().min(1).optional(),
  validation_issues: z
    .array(z.strictObject({ field: z.string(), code: z.enum(VALIDATION_CODES) }))
    .max(8)
    .optional(),
  contact_id: z.string().regex(/^mc_[0-9a-f-]{36}$/).optional(),
  duplicate: z.boolean().optional(),
  has_reply_channel: z.boolean().optional(),
  has_previous_contact: z.boolean().optional(),
  self_reported_test: z.boolean().optional(),
  rate_limited: z.boolean().optional(),
  matches_count: z.number().int().min(0).max(3).optional(),
  observed_task_saved: z.boolean().optional(),
  search_receipt: z.string().regex(/^sr_[0-9a-f]{32}$/).optional(),
  signal_id: z.string().regex(/^ts_[0-9a-f-]{36}$/).optional(),
  dialogue_token_issued: z.boolean().optional(),
  dialogue_joined: z.boolean().optional(),
};

const a2a = {
  a2a_protocol_version: z.enum(["1.0", "0.3", "unsupported"]).nullable(),
  a2a_method: z.string().nullable(),
  rpc_error_code: z.number().int().nullable().optional(),
};

const httpEvent = z.strictObject({ ...common, event_type: z.enum(["http", "mcp_card", "a2a_card"]) });
const mcpEvent = z.strictObject({ ...common, ...mcp, event_type: z.enum(["mcp_request", "owner_mcp_request"]) });
const a2aEvent = z.strictObject({ ...common, ...a2a, event_type: z.literal("a2a_request") });

export const requestEventSchema = z.discriminatedUnion("event_type", [httpEvent, mcpEvent, a2aEvent]).refine(
  (event) => Object.values(event).every((value) => typeof value !== "string" || noControl(value)),
  "an event string carries a control character",
);

/** Parses one event; throws with the zod message when it breaks the contract. */
export function assertValidEvent(event: unknown) {
  return requestEventSchema.parse(event);
}
