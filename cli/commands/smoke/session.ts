/**
 * One smoke run's connection and memory: the official MCP client over
 * Streamable HTTP (with the controlled User-Agent), the synthetic task, and
 * the values carried from step to step (profile, contact id, receipt, signal
 * id). The steps themselves live in steps.ts; this class only offers the
 * calls they make and the scrubbing every printed message goes through.
 */
import type { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SMOKE_CLIENT_NAME, SMOKE_CLIENT_VERSION, TOOL_SEARCH } from "../../../worker/contracts";
import { describeUnknown } from "../../lib/errors";
import { controlledFetch, type ReachTracker } from "../../lib/http";
import { isRecord, StepFailure, Unreachable } from "./expectations";
import { syntheticTask, TEST_CONTACT, type SyntheticTask } from "./plan";
import { proseStrings, redact } from "./redaction";

/** Values one step produces for a later one. */
export interface CarriedState {
  profile?: unknown;
  contactArgs?: Record<string, unknown>;
  contactId?: string;
  receipt?: string;
  contributeArgs?: Record<string, unknown>;
  signalId?: string;
}

/** Longest error message printed for a failed step. */
const MESSAGE_MAX_CHARS = 300;

export class SmokeSession {
  readonly task: SyntheticTask = syntheticTask();
  readonly carried: CarriedState = {};
  private readonly tracker: ReachTracker = { responses: 0 };
  private readonly client: Client;
  private readonly transport: StreamableHTTPClientTransport;

  /**
   * Loads the MCP client only when a smoke test runs: every other command
   * (metrics above all, 08 §5.2) starts without its ~27 MB.
   */
  static async open(url: URL, timeout: number, legacy: boolean): Promise<SmokeSession> {
    const sdk = await import("@modelcontextprotocol/client");
    return new SmokeSession(url, timeout, legacy, sdk);
  }

  private constructor(
    readonly url: URL,
    readonly timeout: number,
    readonly legacy: boolean,
    sdk: typeof import("@modelcontextprotocol/client"),
  ) {
    this.client = new sdk.Client(
      { name: SMOKE_CLIENT_NAME, version: SMOKE_CLIENT_VERSION },
      { versionNegotiation: { mode: legacy ? "legacy" : "auto" } },
    );
    this.transport = new sdk.StreamableHTTPClientTransport(url, { fetch: controlledFetch(this.tracker) });
  }

  /**
   * Removes private text from a message before it can be printed: every
   * synthetic token and the task fields, the test contact's summary, and the
   * profile's prose once it has been read (redaction.ts).
   */
  scrub(message: string): string {
    const secrets = [
      this.task.goal,
      this.task.blocker,
      this.task.tried,
      ...this.task.tokens,
      TEST_CONTACT.summary,
      ...proseStrings(this.carried.profile),
    ];
    const text = redact(message, secrets);
    return text.length > MESSAGE_MAX_CHARS ? `${text.slice(0, MESSAGE_MAX_CHARS - 1)}…` : text;
  }

  async close(): Promise<void> {
    try {
      await this.client.close();
    } catch {
      // Closing a client that never connected (or whose server went away) is not a smoke failure.
    }
  }

  /**
   * Connects and returns the negotiated version and era. No HTTP answer at all
   * (DNS, TCP, TLS, connect timeout) is `Unreachable` (exit 3); anything the
   * server did answer is a step failure (exit 1).
   */
  async connect(): Promise<{ version: string; era: string }> {
    try {
      await this.client.connect(this.transport, { timeout: this.timeout });
    } catch (error) {
      if (this.tracker.responses === 0) {
        throw new Unreachable(`cannot reach ${this.url.href}: ${this.tracker.networkError ?? `no HTTP answer within ${this.timeout} ms (${describeUnknown(error)})`}`);
      }
      throw error;
    }
    return { version: this.client.getNegotiatedProtocolVersion() ?? "unknown", era: this.client.getProtocolEra() ?? "unknown" };
  }

  async toolNames(): Promise<string[]> {
    return (await this.client.listTools(undefined, { timeout: this.timeout })).tools.map((tool) => tool.name);
  }

  async resourceUris(): Promise<string[]> {
    return (await this.client.listResources(undefined, { timeout: this.timeout })).resources.map((resource) => resource.uri);
  }

  /** The text of a resource's first content item, or undefined when it has none. */
  async resourceText(uri: string): Promise<string | undefined> {
    const result = await this.client.readResource({ uri }, { timeout: this.timeout });
    const first = result.contents[0];
    return first !== undefined && "text" in first && typeof first.text === "string" ? first.text : undefined;
  }

  /** Calls a tool and returns its `structuredContent` (every door result carries one, 02 §3). */
  async callTool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const result = await this.client.callTool({ name, arguments: args }, { timeout: this.timeout });
    if (!isRecord(result.structuredContent)) {
      throw new StepFailure(`${name} returned no structuredContent${result.isError === true ? " (tool error)" : ""}`);
    }
    return result.structuredContent;
  }

  /** The synthetic task as tool arguments, in the test or the ordinary cohort. */
  taskArgs(isTest: boolean): Record<string, unknown> {
    return { goal: this.task.goal, blocker: this.task.blocker, tried: this.task.tried, is_test: isTest };
  }

  search(isTest: boolean): Promise<Record<string, unknown>> {
    return this.callTool(TOOL_SEARCH, this.taskArgs(isTest));
  }
}

/** A value an earlier step must have produced (the run stops at the first failure, so this is a bug guard). */
export function required<T>(value: T | undefined): T {
  if (value === undefined) throw new StepFailure("an earlier step did not produce its result");
  return value;
}
