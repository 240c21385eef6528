/**
 * Validation diagnostics for tool calls (01 §11): which field failed and why,
 * as closed codes — never the value, an unknown key's name or a validator
 * message. The wrapper runs the exact schema object registered with the SDK on
 * the same arguments, so its verdict is the SDK's verdict; it only observes.
 */
import type * as z from "zod";
import {
  VALIDATION_FIELD_ARGUMENTS,
  VALIDATION_ISSUES_MAX,
  type EventAnnotations,
  type ValidationCode,
  type ValidationIssue,
} from "../contracts/events";

type ValidationDiagnostics = Pick<
  EventAnnotations,
  "validation_status" | "validation_field" | "validation_code" | "validation_issue_count" | "validation_issues"
>;

/** A zod issue as far as the mapping needs it (zod 4 `$ZodIssue`). */
interface IssueLike {
  code: string;
  path: PropertyKey[];
  minimum?: number | bigint;
  keys?: string[];
}

/**
 * Validates `args` (absent arguments count as `{}`) against `schema` and
 * returns the telemetry fields. A path outside the schema's own keys is
 * reported as the field `arguments`, so unknown key names never reach a log.
 */
export function diagnoseArguments(schema: z.ZodType, args: unknown): ValidationDiagnostics {
  const input = args === undefined ? {} : args;
  const parsed = schema.safeParse(input);
  if (parsed.success) return { validation_status: "valid" };

  const declaredKeys = declaredKeysOf(schema);
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  let count = 0;
  for (const issue of parsed.error.issues as IssueLike[]) {
    count += issue.code === "unrecognized_keys" ? Math.max(1, issue.keys?.length ?? 1) : 1;
    const mapped = mapIssue(issue, input, declaredKeys);
    const key = `${mapped.field}\u0000${mapped.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(mapped);
  }
  const first = issues[0]!;
  return {
    validation_status: "invalid",
    validation_field: first.field,
    validation_code: first.code,
    validation_issue_count: count,
    validation_issues: issues.slice(0, VALIDATION_ISSUES_MAX),
  };
}

function mapIssue(issue: IssueLike, input: unknown, declaredKeys: ReadonlySet<string>): ValidationIssue {
  const head = issue.path[0];
  const field = typeof head === "string" && declaredKeys.has(head) ? head : VALIDATION_FIELD_ARGUMENTS;
  return { field, code: codeFor(issue, input, field) };
}

function codeFor(issue: IssueLike, input: unknown, field: string): ValidationCode {
  switch (issue.code) {
    case "unrecognized_keys":
      return "unknown_field";
    case "invalid_type":
      return issue.path.length === 1 && field !== VALIDATION_FIELD_ARGUMENTS && !hasOwnKey(input, field)
        ? "missing_required"
        : "invalid_type";
    case "too_small":
      return Number(issue.minimum ?? 0) <= 1 ? "empty_value" : "too_short";
    case "too_big":
      return "too_long";
    case "invalid_format":
      return "invalid_format";
    default:
      // invalid_value (enum, literal), custom (cross-field rules) and anything else.
      return "invalid_value";
  }
}

function hasOwnKey(value: unknown, key: string): boolean {
  return typeof value === "object" && value !== null && Object.prototype.hasOwnProperty.call(value, key);
}

function declaredKeysOf(schema: z.ZodType): ReadonlySet<string> {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return new Set(shape ? Object.keys(shape) : []);
}
