/**
 * The shape of a public tool: its registration metadata, the strict input
 * schema (the same object is registered with the SDK and used by the
 * validation diagnostics) and a `run` that returns a result plus the telemetry
 * fields that describe it — tools never log.
 */
import type { z } from "zod";
import type { EventAnnotations } from "../contracts/events";
import type { PublicToolName } from "../contracts/tools";
import type { Env } from "../config/env";
import type { PublicWriteLimiter } from "../edge/rate-limit";

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

export interface ToolDefinition<Schema extends z.ZodObject = z.ZodObject> {
  readonly name: PublicToolName;
  readonly title: string;
  readonly description: string;
  readonly annotations: ToolAnnotations;
  readonly inputSchema: Schema;
  run(args: z.output<Schema>, ctx: ToolContext): Promise<ToolOutcome>;
}

/** Erases the schema parameter so definitions with different schemas fit in one list. */
export function defineTool<Schema extends z.ZodObject>(definition: ToolDefinition<Schema>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

export function success(result: Record<string, unknown>, telemetry: EventAnnotations): ToolOutcome {
  return { result, isError: false, telemetry };
}

export function failure(result: Record<string, unknown>, telemetry: EventAnnotations): ToolOutcome {
  return { result, isError: true, telemetry };
}
