/**
 * The telemetry event contract (spec 01 §9, 02 §5.6, 03 §9, 04 §7). The Worker
 * builds events of this shape and `magnt metrics` reads them, so the field names
 * and closed value lists live here only. The runtime schema (zod) is
 * `./event-schema.ts`, which the Worker never imports at run time.
 */
import { DIALOGUE_TOOL_NAMES, OWNER_TOOL_NAMES, PROFILE_RESOURCE_URI, PUBLIC_TOOL_NAMES } from "./tools";

export const ROLES = ["monolith", "gateway", "core", "owner_gateway"] as const;
export type Role = (typeof ROLES)[number];

export const EVENT_TYPES = [
  "mcp_request",
  "mcp_card",
  "a2a_request",
  "a2a_card",
  "owner_mcp_request",
  "http",
  "scheduled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Event types `magnt metrics` counts (08 §5.3). Reserved for `magnt metrics`. */
export const COUNTED_EVENT_TYPES = ["mcp_request", "mcp_card", "a2a_request", "a2a_card"] as const;

/** The closed list of request outcomes (01 §9.3). */
export const OUTCOMES = [
  "success",
  "tool_error",
  "protocol_error",
  "notification_accepted",
  "stream_opened",
  "handler_error",
  "internal_error",
  "body_too_large",
  "host_rejected",
  "origin_rejected",
  "method_not_allowed",
  "bad_request",
  "not_modified",
  "unsupported_media_type",
  "origin_unavailable",
  "core_unavailable",
  "token_rejected",
  "scope_rejected",
  "owner_disabled",
  "owner_misconfigured",
  "not_owner",
  "oauth_error",
  "http_success",
  "http_error",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** JSON-RPC methods named in telemetry; anything else is `unknown` (01 §9.2). */
export const MCP_METHOD_ALLOWLIST = [
  "initialize",
  "notifications/initialized",
  "notifications/cancelled",
  "server/discover",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "prompts/list",
  "subscriptions/listen",
] as const;

/** Methods whose answer may never end; the wrapper never reads them (01 §9.2). */
export const MCP_STREAMING_METHODS: readonly string[] = ["subscriptions/listen"];

/** Validation diagnostic codes (01 §11). */
export const VALIDATION_CODES = [
  "missing_required",
  "empty_value",
  "invalid_type",
  "too_long",
  "invalid_format",
  "unknown_field",
  "too_short",
  "invalid_value",
] as const;
export type ValidationCode = (typeof VALIDATION_CODES)[number];
export const VALIDATION_ISSUES_MAX = 8;
/** The `validation_field` used for unknown keys and undeclared paths. */
export const VALIDATION_FIELD_ARGUMENTS = "arguments";

/** `tool_result` values set by the wrapper itself (01 §9.2). */
export const TOOL_RESULT_INVALID_ARGUMENTS = "invalid_arguments";
export const TOOL_RESULT_UNCLASSIFIED = "unclassified_tool_error";
export const TOOL_RESULT_PROFILE_RETURNED = "profile_returned";

/** `tool_result` values of the owner tools (06 §9; the C.1 values are listed with them, 07 §8). */
export const OWNER_TOOL_RESULTS = [
  "ok",
  "draft_saved",
  "state_set",
  "reply_published",
  "already_published",
  "dialogue_revoked",
  "contact_not_found",
  "draft_not_found",
  "revision_conflict",
  "draft_published",
  "insufficient_scope",
  "invalid_cursor",
  "no_dialogue",
] as const;

/** `tool_result` values (02 §5.6, 03 §9, 06 §9). Dialogue values are added with their release. */
export const TOOL_RESULTS = [
  TOOL_RESULT_PROFILE_RETURNED,
  "accepted_for_human_review",
  "submission_conflict",
  "storage_unavailable",
  "rate_limited",
  "dialogue_not_found",
  "dialogue_misconfigured",
  "reply_delivered",
  "no_reply_pending",
  "reply_not_found",
  "matches_found",
  "no_relevant_experience",
  "storage_error",
  "accepted",
  "duplicate",
  TOOL_RESULT_INVALID_ARGUMENTS,
  TOOL_RESULT_UNCLASSIFIED,
  ...OWNER_TOOL_RESULTS,
] as const;
export type ToolResult = (typeof TOOL_RESULTS)[number];

/** A2A v1.0 methods (04 §4) and the 0.3 names recognised in telemetry (04 §7). */
export const A2A_V1_METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
] as const;
export const A2A_V03_METHODS = [
  "message/send",
  "message/stream",
  "tasks/get",
  "tasks/cancel",
  "tasks/resubscribe",
  "tasks/pushNotificationConfig/set",
  "tasks/pushNotificationConfig/get",
  "tasks/pushNotificationConfig/list",
  "tasks/pushNotificationConfig/delete",
  "agent/getAuthenticatedExtendedCard",
] as const;
export const A2A_PROTOCOL_VERSION_VALUES = ["1.0", "0.3", "unsupported"] as const;

/** The value every closed list falls back to for a name the door does not recognise (01 §9.2, §9.4). */
export const UNKNOWN_VALUE = "unknown";

/** `mcp_method`: an allow-listed JSON-RPC method or `unknown` (01 §9.2). */
export const MCP_METHOD_VALUES = [...MCP_METHOD_ALLOWLIST, UNKNOWN_VALUE] as const;
export type McpMethodLabel = (typeof MCP_METHOD_VALUES)[number];
/** `tool_name`: a known tool of either server (public, dialogue or owner list) or `unknown` (01 §9.2). */
export const TOOL_NAME_VALUES = [...PUBLIC_TOOL_NAMES, ...DIALOGUE_TOOL_NAMES, ...OWNER_TOOL_NAMES, UNKNOWN_VALUE] as const;
export type ToolNameLabel = (typeof TOOL_NAME_VALUES)[number];

const KNOWN_TOOL_NAMES: ReadonlySet<string> = new Set(TOOL_NAME_VALUES);
/** A tool name as telemetry may carry it: one of the closed list, else `unknown` (01 §9.2). */
export function toolNameLabel(name: string): ToolNameLabel {
  return KNOWN_TOOL_NAMES.has(name) ? (name as ToolNameLabel) : UNKNOWN_VALUE;
}
/** `resource_name`: the profile resource or `unknown` (01 §9.2). */
export const RESOURCE_NAME_VALUES = [PROFILE_RESOURCE_URI, UNKNOWN_VALUE] as const;
export type ResourceNameLabel = (typeof RESOURCE_NAME_VALUES)[number];
/** `a2a_method`: a v1.0 or v0.3 method name or `unknown` (01 §9.4, 04 §7). */
export const A2A_METHOD_VALUES = [...A2A_V1_METHODS, ...A2A_V03_METHODS, UNKNOWN_VALUE] as const;
export type A2aMethodLabel = (typeof A2A_METHOD_VALUES)[number];

/** `owner_step` of the owner gateway's `http` event (06 §9). */
export const OWNER_STEPS = [
  "metadata",
  "register",
  "authorize",
  "consent",
  "github_callback",
  "token_code",
  "token_refresh",
  "mcp",
  "other",
] as const;
export type OwnerStepLabel = (typeof OWNER_STEPS)[number];

/** Client kinds of the User-Agent classifier (01 §10). */
export const CLIENT_KINDS = ["bot", "probable-bot", "browser-or-unknown"] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];


export interface ValidationIssue {
  field: string;
  code: ValidationCode;
}

/**
 * Every field an event may carry. Common fields are always present; the others
 * only on the event types that define them (01 §9.1, 9.2, 9.4; 02 §5.6; 03 §9).
 */
export interface RequestEvent {
  event_id: string;
  time: string;
  role: Role;
  event_type: EventType;
  method: string;
  host: string;
  path: string;
  query: string;
  userAgent: string;
  clientKind: ClientKind;
  clientName: string;
  referrer: string;
  country: string;
  colo: string;
  city: string;
  asn: number | null;
  status: number;
  duration_ms: number;
  outcome: Outcome;
  controlled_test: boolean;
  identity_verified: false;
  forwarded_to_core?: boolean;
  /** D1 attempts beyond the first over the request's statements (09 §5); absent when nothing was retried. */
  d1_retries?: number;
  /** Owner gateway only: which part of the OAuth server or `/mcp` answered (06 §9). */
  owner_step?: OwnerStepLabel;

  // MCP (mcp_request, owner_mcp_request): always present there, null when not applicable.
  mcp_protocol_version?: string | null;
  mcp_method?: McpMethodLabel | null;
  client_name?: string | null;
  client_version?: string | null;
  tool_name?: ToolNameLabel | null;
  resource_name?: ResourceNameLabel | null;
  rpc_error_code?: number | null;
  tool_result?: ToolResult | null;

  // Validation diagnostics (known tool calls only, 01 §11).
  validation_status?: "valid" | "invalid";
  validation_field?: string;
  validation_code?: ValidationCode;
  validation_issue_count?: number;
  validation_issues?: ValidationIssue[];

  // Tool fields (02 §5.6, 03 §9, 01 §14).
  contact_id?: string;
  duplicate?: boolean;
  has_reply_channel?: boolean;
  has_previous_contact?: boolean;
  self_reported_test?: boolean;
  rate_limited?: boolean;
  matches_count?: number;
  observed_task_saved?: boolean;
  search_receipt?: string;
  signal_id?: string;
  dialogue_token_issued?: boolean;
  dialogue_joined?: boolean;
  // fetch_contact_reply (07 §8): booleans only, never an id, token, hash or text.
  redelivered?: boolean;
  more_pending?: boolean;
  read_receipts_included?: boolean;

  // Owner tools (06 §9): never ids or text.
  /** List tools: how many items the page returned. */
  items_returned?: number;
  /** List tools: whether self-reported test items were asked for. */
  include_tests?: boolean;

  // A2A (04 §7).
  a2a_protocol_version?: (typeof A2A_PROTOCOL_VERSION_VALUES)[number] | null;
  a2a_method?: A2aMethodLabel | null;
}

/** Fields a capability may add to its request's event (everything but the common envelope). */
export type EventAnnotations = Partial<
  Omit<
    RequestEvent,
    | "event_id"
    | "time"
    | "role"
    | "method"
    | "host"
    | "path"
    | "query"
    | "userAgent"
    | "clientKind"
    | "clientName"
    | "referrer"
    | "country"
    | "colo"
    | "city"
    | "asn"
    | "status"
    | "duration_ms"
    | "controlled_test"
    | "identity_verified"
  >
>;

/** Outcomes of a scheduled (cron) run (05 §8). */
export const SCHEDULED_OUTCOMES = [
  "ok",
  "disabled",
  "misconfigured",
  "lease_busy",
  "lease_lost",
  "chat_mismatch",
  "backoff",
  "storage_error",
] as const;
export type ScheduledOutcome = (typeof SCHEDULED_OUTCOMES)[number];

/** One event per cron run (05 §8): counts only — no ids, texts or Telegram data. */
export interface ScheduledEvent {
  event_id: string;
  time: string;
  role: Role;
  event_type: "scheduled";
  outcome: ScheduledOutcome;
  discovered: number;
  attempted: number;
  delivered: number;
  retried: number;
  failed: number;
  skipped: number;
  overflow_skipped: number;
  duration_ms: number;
  /** D1 attempts beyond the first over the run's statements (09 §5); absent when nothing was retried. */
  d1_retries?: number;
}
