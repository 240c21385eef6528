/**
 * The telemetry event as a runtime schema (01 §9, 02 §5.6, 03 §9, 04 §7, 05 §8):
 * the exact field set per event type, types, length limits and the closed value
 * lists. Tests parse every captured event with it; `magnt metrics` tests build
 * their fixtures against it.
 *
 * Why a separate module and not part of `./index`: the Worker imports only the
 * *types* of the contract, and pulling zod schemas through the contracts barrel
 * would grow every Worker bundle. Import this file directly, never re-export it
 * from `worker/contracts/index.ts`.
 */
import * as z from "zod";
import {
  A2A_PROTOCOL_VERSION_VALUES,
  EVENT_TYPES,
  OUTCOMES,
  ROLES,
  SCHEDULED_OUTCOMES,
  TOOL_RESULTS,
  VALIDATION_CODES,
  VALIDATION_ISSUES_MAX,
  A2A_METHOD_VALUES,
  CLIENT_KINDS,
  MCP_METHOD_VALUES,
  OWNER_STEPS,
  RESOURCE_NAME_VALUES,
  TOOL_NAME_VALUES,
} from "./events";
import { EVENT_FIELD_MAX } from "./limits";

const codePoints = (max: number) => z.string().refine((value) => [...value].length <= max, `longer than ${max} code points`);
const nullableText = (max: number) => codePoints(max).nullable();
const count = () => z.number().int().min(0);
/** 01 §9.5: no control characters, U+2028 or U+2029 in any event string. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const noControlInStrings = (event: Record<string, unknown>): boolean =>
  Object.values(event).every((value) => typeof value !== "string" || !CONTROL_CHARACTERS.test(value));
const CONTROL_MESSAGE = "an event string carries a control character";

/** 01 §9.1: fields of every request event. */
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
  clientKind: z.enum(CLIENT_KINDS),
  clientName: z.string(),
  referrer: codePoints(EVENT_FIELD_MAX.referrer),
  country: codePoints(EVENT_FIELD_MAX.country),
  colo: codePoints(EVENT_FIELD_MAX.colo),
  city: codePoints(EVENT_FIELD_MAX.city),
  asn: z.number().int().nullable(),
  status: z.number().int().min(100).max(599),
  duration_ms: count(),
  outcome: z.enum(OUTCOMES),
  controlled_test: z.boolean(),
  identity_verified: z.literal(false),
  forwarded_to_core: z.boolean().optional(),
  /** 09 §5: present only when a transient D1 failure was retried. */
  d1_retries: z.number().int().min(1).optional(),
};

/** 01 §9.2 and §11, 02 §5.6, 03 §9, 01 §14: MCP request fields. */
const mcp = {
  mcp_protocol_version: nullableText(EVENT_FIELD_MAX.mcp_protocol_version),
  mcp_method: z.enum(MCP_METHOD_VALUES).nullable(),
  client_name: nullableText(EVENT_FIELD_MAX.client_name),
  client_version: nullableText(EVENT_FIELD_MAX.client_version),
  tool_name: z.enum(TOOL_NAME_VALUES).nullable(),
  resource_name: z.enum(RESOURCE_NAME_VALUES).nullable(),
  rpc_error_code: z.number().int().nullable(),
  tool_result: z.enum(TOOL_RESULTS).nullable(),
  validation_status: z.enum(["valid", "invalid"]).optional(),
  validation_field: z.string().optional(),
  validation_code: z.enum(VALIDATION_CODES).optional(),
  validation_issue_count: z.number().int().min(1).optional(),
  validation_issues: z
    .array(z.strictObject({ field: z.string(), code: z.enum(VALIDATION_CODES) }))
    .max(VALIDATION_ISSUES_MAX)
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
  redelivered: z.boolean().optional(),
  more_pending: z.boolean().optional(),
  read_receipts_included: z.boolean().optional(),
  items_returned: count().optional(),
  include_tests: z.boolean().optional(),
};

/** 01 §9.4, 04 §7: A2A request fields. */
const a2a = {
  a2a_protocol_version: z.enum(A2A_PROTOCOL_VERSION_VALUES).nullable(),
  a2a_method: z.enum(A2A_METHOD_VALUES).nullable(),
  rpc_error_code: z.number().int().nullable().optional(),
};

/** `http`, `mcp_card`, `a2a_card`: common fields only, plus the owner gateway's `owner_step` (06 §9). */
export const httpEventSchema = z.strictObject({
  ...common,
  event_type: z.enum(["http", "mcp_card", "a2a_card"]),
  owner_step: z.enum(OWNER_STEPS).optional(),
});
/** `mcp_request`, `owner_mcp_request`. */
export const mcpEventSchema = z.strictObject({ ...common, ...mcp, event_type: z.enum(["mcp_request", "owner_mcp_request"]) });
/** `a2a_request`. */
export const a2aEventSchema = z.strictObject({ ...common, ...a2a, event_type: z.literal("a2a_request") });

/** 05 §8: one event per cron run — counts only, no ids, texts or Telegram data. */
export const scheduledEventObjectSchema = z.strictObject({
  event_id: z.uuid(),
  time: z.iso.datetime(),
  role: z.enum(ROLES),
  event_type: z.literal("scheduled"),
  outcome: z.enum(SCHEDULED_OUTCOMES),
  discovered: count(),
  attempted: count(),
  delivered: count(),
  retried: count(),
  failed: count(),
  skipped: count(),
  overflow_skipped: count(),
  duration_ms: count(),
  d1_retries: z.number().int().min(1).optional(),
});

/** Every request event (one per HTTP request, 01 §9). */
export const requestEventSchema = z
  .discriminatedUnion("event_type", [httpEventSchema, mcpEventSchema, a2aEventSchema])
  .refine(noControlInStrings, CONTROL_MESSAGE);

/** A scheduled-run event (05 §8). */
export const scheduledEventSchema = scheduledEventObjectSchema.refine(noControlInStrings, CONTROL_MESSAGE);

/** Any line the door's telemetry writes: a request event or a scheduled-run event. */
export const telemetryEventSchema = z
  .discriminatedUnion("event_type", [httpEventSchema, mcpEventSchema, a2aEventSchema, scheduledEventObjectSchema])
  .refine(noControlInStrings, CONTROL_MESSAGE);

export type RequestEventShape = z.infer<typeof requestEventSchema>;
export type ScheduledEventShape = z.infer<typeof scheduledEventSchema>;
export type TelemetryEventShape = z.infer<typeof telemetryEventSchema>;

/** Parses one request event; throws with the zod message when it breaks the contract. */
export function assertValidEvent(event: unknown): RequestEventShape {
  return requestEventSchema.parse(event);
}

/** Parses one scheduled-run event; throws with the zod message when it breaks the contract. */
export function assertValidScheduledEvent(event: unknown): ScheduledEventShape {
  return scheduledEventSchema.parse(event);
}

/** Parses any telemetry line's event; throws with the zod message when it breaks the contract. */
export function assertValidTelemetryEvent(event: unknown): TelemetryEventShape {
  return telemetryEventSchema.parse(event);
}
