/**
 * `magnt smoke [url]` (08 §6): the release check of a running door with the
 * official MCP client. One line (or one JSON object) per step; the first
 * failed step stops the run and the rest are reported as skipped.
 *
 * Privacy: the output only ever carries receipts, statuses and flags. Task
 * text, the contact summary, profile prose and the random task tokens are
 * never printed, and every error message is scrubbed of the tokens before it
 * is shown, because a server error could echo them back.
 */
/// <reference path="../types/ndjson.d.ts" />
import { randomInt, randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Command } from "commander";
import ndjson from "ndjson";
import {
  CONTACT_ID_PATTERN,
  CONTACT_STATUS,
  CONTRIBUTE_STATUS,
  MCP_LEGACY_PROTOCOL_VERSIONS,
  MCP_MODERN_PROTOCOL_VERSION,
  OWNER_TOOL_PREFIX,
  PROFILE_RESOURCE_URI,
  PUBLIC_TOOL_NAMES,
  SEARCH_RECEIPT_PATTERN,
  SEARCH_STATUS,
  SIGNAL_ID_PATTERN,
  SMOKE_CLIENT_NAME,
  SMOKE_CLIENT_VERSION,
  TOOL_ABOUT,
  TOOL_CONTRIBUTE,
  TOOL_FETCH_REPLY,
  TOOL_PROPOSE_CONTACT,
  TOOL_SEARCH,
} from "../../worker/contracts";
import { defineAction, examples, type CommandRuntime } from "../lib/command";
import type { CliContext } from "../lib/context";
import { CheckFailed, describeUnknown, EnvironmentError } from "../lib/errors";
import { controlledFetch, parseHttpUrl, type ReachTracker } from "../lib/http";
import { parseIntegerOption } from "../lib/options";

export const SMOKE_DEFAULT_URL = "http://localhost:8787/mcp";
export const SMOKE_DEFAULT_TIMEOUT_MS = 15_000;
/** The profile's fixed `name` (02 §4). */
const PROFILE_NAME = "MAGNT";
/** Fixed content of the test contact (08 §6). Never printed. */
const TEST_CONTACT = {
  summary:
    "Owner-authorised deployment check: this message was sent by the magnt smoke test to verify a MAGNT deployment. It is a test, not a real contact.",
  intent: "deployment_verification",
  agent_identity: SMOKE_CLIENT_NAME,
  found_via: "magnt smoke",
  is_test: true,
} as const;

export const BASE_STEPS = ["connect", "list_tools", "list_resources", "read_profile", "call_about_magnt"] as const;
export const SUBMIT_STEPS = ["propose_contact", "propose_contact_retry"] as const;
export const SHARED_MEMORY_STEPS = [
  "search_before",
  "contribute",
  "contribute_retry",
  "search_after",
  "search_ordinary",
] as const;
export type StepName = (typeof BASE_STEPS)[number] | (typeof SUBMIT_STEPS)[number] | (typeof SHARED_MEMORY_STEPS)[number];

interface SmokeOptions {
  submitTest?: boolean;
  sharedMemoryTest?: boolean;
  legacy?: boolean;
  timeout?: string;
}

/**
 * What a step may print: receipts, statuses, flags, versions, tool names. A
 * tool's own status is printed as `result`, so it never collides with the
 * step's `status` (passed/failed/skipped) in the JSON line.
 */
type StepDetail = Record<string, string | boolean | string[]>;

export interface StepRecord {
  step: StepName;
  status: "passed" | "failed" | "skipped";
  detail?: StepDetail;
  message?: string;
}

/** A step's expectation did not hold (exit 1). */
class StepFailure extends Error {}
/** The endpoint could not be reached at all (exit 3). */
class Unreachable extends Error {}

export function registerSmoke(program: Command, ctx: CliContext): void {
  program
    .command("smoke")
    .description("release check of a running door with the official MCP client")
    .argument("[url]", "the door's MCP endpoint", SMOKE_DEFAULT_URL)
    .option("--submit-test", "also send a test contact and its identical retry", false)
    .option("--shared-memory-test", "also search, contribute and re-search a random synthetic task (test cohort)", false)
    .option("--legacy", "use the client's legacy 2025-11-25 handshake instead of auto negotiation", false)
    .option("--timeout <ms>", "per request and for connect", String(SMOKE_DEFAULT_TIMEOUT_MS))
    .addHelpText(
      "after",
      examples([
        "magnt smoke",
        "magnt smoke https://magnt.ru/mcp --submit-test --shared-memory-test",
        "magnt smoke http://127.0.0.1:8787/mcp --legacy --json",
      ]),
    )
    .action(defineAction<SmokeOptions>(ctx, runSmoke));
}

/** The synthetic task of step 8: random tokens only, so it can never overlap earlier smoke rows. */
export function syntheticTask(): { goal: string; blocker: string; tried: string; tokens: string[] } {
  const tokens = Array.from({ length: 11 }, randomToken);
  return {
    goal: tokens.slice(0, 5).join(" "),
    blocker: tokens.slice(5, 8).join(" "),
    tried: tokens.slice(8, 11).join(" "),
    tokens,
  };
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";

/** 12 lower-case base-36 characters starting with a letter (08 §6 step 8). */
export function randomToken(): string {
  let token = LETTERS[randomInt(LETTERS.length)]!;
  for (let i = 1; i < 12; i += 1) token += BASE36[randomInt(BASE36.length)]!;
  return token;
}

async function runSmoke(rt: CommandRuntime, args: string[], options: SmokeOptions): Promise<void> {
  const url = parseHttpUrl(args[0] === "" || args[0] === undefined ? SMOKE_DEFAULT_URL : args[0]);
  const timeout = parseIntegerOption("--timeout", options.timeout, 1, 600_000);
  const plan: StepName[] = [
    ...BASE_STEPS,
    ...(options.submitTest === true ? SUBMIT_STEPS : []),
    ...(options.sharedMemoryTest === true ? SHARED_MEMORY_STEPS : []),
  ];
  const reporter = createReporter(rt);
  const session = new SmokeSession(url, timeout, options.legacy === true);
  let failure: { step: StepName; message: string; unreachable: boolean } | undefined;
  try {
    for (const step of plan) {
      if (failure !== undefined) {
        reporter.step({ step, status: "skipped" });
        continue;
      }
      try {
        const detail = await session.run(step);
        reporter.step({ step, status: "passed", detail });
      } catch (error) {
        const message = session.scrub(error instanceof StepFailure || error instanceof Unreachable ? error.message : describeUnknown(error));
        failure = { step, message, unreachable: error instanceof Unreachable };
        reporter.step({ step, status: "failed", message });
      }
    }
  } finally {
    await session.close();
  }
  const failed = failure === undefined ? 0 : 1;
  await reporter.finish({ ok: failure === undefined, steps: plan.length, failed });
  if (failure === undefined) return;
  const text = `smoke failed at step ${failure.step}: ${failure.message}`;
  throw failure.unreachable ? new EnvironmentError(text) : new CheckFailed(text);
}

/** Prints step lines: human lines, or JSON lines through `ndjson`. */
function createReporter(rt: CommandRuntime): {
  step(record: StepRecord): void;
  finish(summary: { ok: boolean; steps: number; failed: number }): Promise<void>;
} {
  const { out, ctx } = rt;
  if (out.json) {
    const stream = ndjson.stringify();
    stream.on("data", (line: Buffer | string) => ctx.stdout.write(String(line)));
    return {
      step(record) {
        stream.write({ step: record.step, status: record.status, ...(record.detail ?? {}), ...(record.message === undefined ? {} : { message: record.message }) });
      },
      finish(summary) {
        return new Promise<void>((resolve) => {
          stream.on("end", resolve);
          stream.end({ summary });
        });
      },
    };
  }
  const width = Math.max(...[...BASE_STEPS, ...SUBMIT_STEPS, ...SHARED_MEMORY_STEPS].map((name) => name.length));
  return {
    step(record) {
      const name = record.step.padEnd(width);
      if (record.status === "passed") out.line(`${out.paint.ok("✔")} ${name}  ${formatDetail(record.detail ?? {})}`.trimEnd());
      else if (record.status === "failed") out.line(`${out.paint.fail("✘")} ${name}  ${record.message ?? ""}`.trimEnd());
      else out.line(`${out.paint.dim("-")} ${out.paint.dim(`${name}  skipped`)}`);
    },
    async finish(summary) {
      out.line(summary.ok ? out.paint.ok(`smoke passed (${summary.steps} steps)`) : out.paint.fail(`smoke failed (${summary.failed} of ${summary.steps} steps failed, the rest skipped)`));
    },
  };
}

function formatDetail(detail: StepDetail): string {
  return Object.entries(detail)
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(", ") : String(value)}`)
    .join("  ");
}

/**
 * One smoke run: the client, the synthetic task and the receipts carried from
 * step to step. Each step method returns what may be printed or throws.
 */
class SmokeSession {
  private readonly tracker: ReachTracker = { responses: 0 };
  private readonly client: Client;
  private readonly transport: StreamableHTTPClientTransport;
  private readonly task = syntheticTask();
  private profile: unknown;
  private contactArgs: Record<string, unknown> | undefined;
  private contactId: string | undefined;
  private receipt: string | undefined;
  private contributeArgs: Record<string, unknown> | undefined;
  private signalId: string | undefined;

  constructor(
    private readonly url: URL,
    private readonly timeout: number,
    private readonly legacy: boolean,
  ) {
    this.client = new Client(
      { name: SMOKE_CLIENT_NAME, version: SMOKE_CLIENT_VERSION },
      { versionNegotiation: { mode: legacy ? "legacy" : "auto" } },
    );
    this.transport = new StreamableHTTPClientTransport(url, { fetch: controlledFetch(this.tracker) });
  }

  /** Removes every synthetic token from a message before it can be printed. */
  scrub(message: string): string {
    let text = message;
    for (const token of this.task.tokens) text = text.split(token).join("[redacted]");
    return text.length > 300 ? `${text.slice(0, 299)}…` : text;
  }

  async close(): Promise<void> {
    try {
      await this.client.close();
    } catch {
      // Closing a client that never connected (or whose server went away) is not a smoke failure.
    }
  }

  run(step: StepName): Promise<StepDetail> {
    switch (step) {
      case "connect":
        return this.connect();
      case "list_tools":
        return this.listTools();
      case "list_resources":
        return this.listResources();
      case "read_profile":
        return this.readProfile();
      case "call_about_magnt":
        return this.callAbout();
      case "propose_contact":
        return this.proposeContact();
      case "propose_contact_retry":
        return this.proposeContactRetry();
      case "search_before":
        return this.searchBefore();
      case "contribute":
        return this.contribute();
      case "contribute_retry":
        return this.contributeRetry();
      case "search_after":
        return this.searchAfter();
      case "search_ordinary":
        return this.searchOrdinary();
    }
  }

  private async connect(): Promise<StepDetail> {
    try {
      await this.client.connect(this.transport, { timeout: this.timeout });
    } catch (error) {
      if (this.tracker.responses === 0) {
        throw new Unreachable(`cannot reach ${this.url.href}: ${this.tracker.networkError ?? `no HTTP answer within ${this.timeout} ms (${describeUnknown(error)})`}`);
      }
      throw error;
    }
    const version = this.client.getNegotiatedProtocolVersion() ?? "unknown";
    const era = this.client.getProtocolEra() ?? "unknown";
    const expected = this.legacy
      ? { version: MCP_LEGACY_PROTOCOL_VERSIONS[0], era: "legacy" }
      : { version: MCP_MODERN_PROTOCOL_VERSION, era: "modern" };
    if (version !== expected.version || era !== expected.era) {
      throw new StepFailure(`negotiated ${version} (${era}), expected ${expected.version} (${expected.era})`);
    }
    return { protocol_version: version, era };
  }

  private async listTools(): Promise<StepDetail> {
    const names = (await this.client.listTools(undefined, { timeout: this.timeout })).tools.map((tool) => tool.name);
    const owner = names.filter((name) => name.startsWith(OWNER_TOOL_PREFIX));
    if (owner.length > 0) throw new StepFailure(`owner tools listed publicly: ${owner.join(", ")}`);
    const publicNames = names.filter((name) => name !== TOOL_FETCH_REPLY).sort();
    const expected = [...PUBLIC_TOOL_NAMES].sort();
    if (!isDeepStrictEqual(publicNames, expected)) {
      throw new StepFailure(`tools are ${publicNames.join(", ") || "(none)"}; expected ${expected.join(", ")}`);
    }
    return { tools: names, dialogue: names.includes(TOOL_FETCH_REPLY) };
  }

  private async listResources(): Promise<StepDetail> {
    const uris = (await this.client.listResources(undefined, { timeout: this.timeout })).resources.map((resource) => resource.uri);
    if (!uris.includes(PROFILE_RESOURCE_URI)) throw new StepFailure(`${PROFILE_RESOURCE_URI} is not listed`);
    return { resources: uris };
  }

  private async readProfile(): Promise<StepDetail> {
    const result = await this.client.readResource({ uri: PROFILE_RESOURCE_URI }, { timeout: this.timeout });
    const first = result.contents[0];
    const text = first !== undefined && "text" in first && typeof first.text === "string" ? first.text : undefined;
    if (text === undefined) throw new StepFailure(`${PROFILE_RESOURCE_URI} has no text content`);
    try {
      this.profile = JSON.parse(text);
    } catch {
      throw new StepFailure(`${PROFILE_RESOURCE_URI} is not JSON`);
    }
    if (!isRecord(this.profile) || this.profile.name !== PROFILE_NAME) throw new StepFailure(`profile name is not ${PROFILE_NAME}`);
    return { profile_name: PROFILE_NAME };
  }

  private async callAbout(): Promise<StepDetail> {
    const content = await this.callTool(TOOL_ABOUT, {});
    if (!isDeepStrictEqual(content, this.profile)) throw new StepFailure(`${TOOL_ABOUT} differs from ${PROFILE_RESOURCE_URI}`);
    const contact = isRecord(content.contact) ? content.contact : {};
    if (typeof contact.storage_available !== "boolean") throw new StepFailure("contact.storage_available is not a boolean");
    return { storage_available: contact.storage_available };
  }

  private async proposeContact(): Promise<StepDetail> {
    this.contactArgs = { ...TEST_CONTACT, submission_id: randomUUID() };
    const content = await this.callTool(TOOL_PROPOSE_CONTACT, this.contactArgs);
    expectStatus(content, CONTACT_STATUS.accepted);
    const contactId = expectPattern(content, "contact_id", CONTACT_ID_PATTERN);
    if (content.duplicate !== false) throw new StepFailure("duplicate is not false on the first submission");
    this.contactId = contactId;
    const dialogue = isRecord(content.dialogue) && typeof content.dialogue.status === "string" ? safeWord(content.dialogue.status) : undefined;
    return {
      contact_id: contactId,
      result: CONTACT_STATUS.accepted,
      self_reported_test: true,
      ...(dialogue === undefined ? {} : { dialogue_status: dialogue }),
    };
  }

  private async proposeContactRetry(): Promise<StepDetail> {
    const content = await this.callTool(TOOL_PROPOSE_CONTACT, this.required(this.contactArgs));
    expectStatus(content, CONTACT_STATUS.accepted);
    const contactId = expectPattern(content, "contact_id", CONTACT_ID_PATTERN);
    if (contactId !== this.contactId) throw new StepFailure("the identical retry returned a different contact_id");
    if (content.duplicate !== true) throw new StepFailure("duplicate is not true on the identical retry");
    return { contact_id: contactId, duplicate_retry_verified: true };
  }

  private async searchBefore(): Promise<StepDetail> {
    const content = await this.search(true);
    expectStatus(content, SEARCH_STATUS.noMatch);
    this.receipt = expectPattern(content, "search_receipt", SEARCH_RECEIPT_PATTERN);
    return { result: SEARCH_STATUS.noMatch, search_receipt: this.receipt };
  }

  private async contribute(): Promise<StepDetail> {
    this.contributeArgs = { ...this.taskArgs(true), submission_id: randomUUID(), search_receipt: this.required(this.receipt) };
    const content = await this.callTool(TOOL_CONTRIBUTE, this.contributeArgs);
    expectStatus(content, CONTRIBUTE_STATUS.accepted);
    this.signalId = expectPattern(content, "signal_id", SIGNAL_ID_PATTERN);
    return { result: CONTRIBUTE_STATUS.accepted, signal_id: this.signalId };
  }

  private async contributeRetry(): Promise<StepDetail> {
    const content = await this.callTool(TOOL_CONTRIBUTE, this.required(this.contributeArgs));
    expectStatus(content, CONTRIBUTE_STATUS.duplicate);
    const signalId = expectPattern(content, "signal_id", SIGNAL_ID_PATTERN);
    if (signalId !== this.signalId) throw new StepFailure("the identical retry returned a different signal_id");
    return { result: CONTRIBUTE_STATUS.duplicate, signal_id: signalId };
  }

  private async searchAfter(): Promise<StepDetail> {
    const content = await this.search(true);
    expectStatus(content, SEARCH_STATUS.matches);
    if (!matchIds(content).includes(this.required(this.signalId))) throw new StepFailure("the test cohort search does not return the contributed signal_id");
    return { result: SEARCH_STATUS.matches, test_cohort_match_verified: true };
  }

  private async searchOrdinary(): Promise<StepDetail> {
    const content = await this.search(false);
    const status = content.status;
    if (status !== SEARCH_STATUS.matches && status !== SEARCH_STATUS.noMatch) {
      throw new StepFailure(`status ${safeWord(status)} (expected ${SEARCH_STATUS.matches} or ${SEARCH_STATUS.noMatch})`);
    }
    if (matchIds(content).includes(this.required(this.signalId))) throw new StepFailure("the ordinary cohort search returned the test signal_id");
    return { result: status, ordinary_cohort_isolated: true };
  }

  private search(isTest: boolean): Promise<Record<string, unknown>> {
    return this.callTool(TOOL_SEARCH, this.taskArgs(isTest));
  }

  private taskArgs(isTest: boolean): Record<string, unknown> {
    return { goal: this.task.goal, blocker: this.task.blocker, tried: this.task.tried, is_test: isTest };
  }

  /** Calls a tool and returns its `structuredContent` (every door result carries one, 02 §3). */
  private async callTool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const result = await this.client.callTool({ name, arguments: args }, { timeout: this.timeout });
    if (!isRecord(result.structuredContent)) {
      throw new StepFailure(`${name} returned no structuredContent${result.isError === true ? " (tool error)" : ""}`);
    }
    return result.structuredContent;
  }

  /** A value an earlier step must have produced (the run stops at the first failure, so this is a bug guard). */
  private required<T>(value: T | undefined): T {
    if (value === undefined) throw new StepFailure("an earlier step did not produce its result");
    return value;
  }
}

function expectStatus(content: Record<string, unknown>, expected: string): void {
  if (content.status !== expected) throw new StepFailure(`status ${safeWord(content.status)} (expected ${expected})`);
}

function expectPattern(content: Record<string, unknown>, key: string, pattern: RegExp): string {
  const value = content[key];
  if (typeof value !== "string" || !pattern.test(value)) throw new StepFailure(`${key} is missing or malformed`);
  return value;
}

function matchIds(content: Record<string, unknown>): string[] {
  return Array.isArray(content.matches) ? content.matches.filter(isRecord).map((match) => String(match.signal_id)) : [];
}

/** A server-provided status is printed only if it looks like a status word, never as free text. */
function safeWord(value: unknown): string {
  return typeof value === "string" && /^[a-z0-9_]{1,48}$/.test(value) ? value : "(unexpected value)";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
