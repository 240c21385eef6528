/**
 * The shape of a tool, shared by the capabilities that define tools and the
 * MCP surface that registers them (so neither imports the other): its
 * registration metadata, the strict input schema (the same object is
 * registered with the SDK and used by the validation diagnostics) and a `run`
 * that returns a result plus the telemetry fields that describe it — tools
 * never log.
 */
import type * as z from "zod";
import type { EventAnnotations } from "../contracts/events";
import type { PublicToolName } from "../contracts/tools";
import type { Env } from "../config/env";

export interface RateLimitVerdict {
  limited: boolean;
}

/** Checks one public write against the shared per-address budget (01 §14; built by `edge/rate-limit.ts`). */
export type PublicWriteLimiter = () => Promise<RateLimitVerdict>;

/** What a tool may know about the request that called it. */
export interface ToolContext {
  readonly env: Env;
  /** `PUBLIC_ORIGIN`, for every URL the tool returns. */
  readonly origin: string;
  /** Self-reported client metadata as extracted for telemetry (sanitised; null when unknown). */
  readonly client: {
    readonly name: string | null;
    readonly version: string | null;
    readonly protocolVersion: string | null;
  };
  /** The request carries the controlled-test User-Agent (not authentication). */
  readonly controlledTest: boolean;
  /** The shared budget of public writes (01 §14). */
  readonly checkPublicWrite: PublicWriteLimiter;
  /** The names registered on this request's server, so texts advertise exactly those tools (02 §2, §4). */
  readonly registeredTools: readonly string[];
}

export interface ToolOutcome {
  /** Returned as `structuredContent` and as one JSON text item. */
  readonly result: Record<string, unknown>;
  readonly isError: boolean;
  /** Fields added to the request's event; never content. */
  readonly telemetry: EventAnnotations;
}

export interface ToolAnnotations {
  readonly title: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

/** A tool as its capability writes it: `run` sees the schema's own output type. */
export interface ToolDefinition<Schema extends z.ZodObject, Name extends string = PublicToolName> {
  readonly name: Name;
  readonly title: string;
  readonly description: string;
  readonly annotations: ToolAnnotations;
  readonly inputSchema: Schema;
  run(args: z.output<Schema>, ctx: ToolContext): Promise<ToolOutcome>;
}

/** A tool as a server registers it: definitions with different schemas fit in one list. */
export interface RegisteredTool<Name extends string = PublicToolName> {
  readonly name: Name;
  readonly title: string;
  readonly description: string;
  readonly annotations: ToolAnnotations;
  readonly inputSchema: z.ZodObject;
  /** Runs with arguments the SDK has already parsed with `inputSchema`. */
  run(args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

/**
 * Keeps the definition's inferred argument type for its own `run`, and gives
 * the server one erased signature. The single cast is sound because the SDK
 * hands the handler the output of parsing with this very `inputSchema`.
 */
export function defineTool<Schema extends z.ZodObject, Name extends string = PublicToolName>(
  definition: ToolDefinition<Schema, Name>,
): RegisteredTool<Name> {
  return Object.assign({}, definition, { run: (args: unknown, ctx: ToolContext) => definition.run(args as z.output<Schema>, ctx) });
}

export function success(result: Record<string, unknown>, telemetry: EventAnnotations): ToolOutcome {
  return { result, isError: false, telemetry };
}

export function failure(result: Record<string, unknown>, telemetry: EventAnnotations): ToolOutcome {
  return { result, isError: true, telemetry };
}
