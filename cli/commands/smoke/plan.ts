/**
 * What a `magnt smoke` run does (08 §6): the step names in their fixed order,
 * which options add which steps, the fixed test contact and the synthetic
 * random-token task. Pure data and pure functions; nothing here talks to a door.
 */
import { randomInt } from "node:crypto";
import { SMOKE_CLIENT_NAME } from "../../../worker/contracts";

export const SMOKE_DEFAULT_URL = "http://localhost:8787/mcp";
export const SMOKE_DEFAULT_TIMEOUT_MS = 15_000;

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
export const ALL_STEPS: readonly StepName[] = [...BASE_STEPS, ...SUBMIT_STEPS, ...SHARED_MEMORY_STEPS];

/**
 * What a step may print: receipts, statuses, flags, versions, tool names. A
 * tool's own status is printed as `result`, so it never collides with the
 * step's `status` (passed/failed/skipped) in the JSON line.
 */
export type StepDetail = Record<string, string | boolean | string[]>;

export interface PlanOptions {
  submitTest?: boolean;
  sharedMemoryTest?: boolean;
}

/** The steps of one run, in order: the base steps, then each option's steps. */
export function smokePlan(options: PlanOptions): StepName[] {
  return [
    ...BASE_STEPS,
    ...(options.submitTest === true ? SUBMIT_STEPS : []),
    ...(options.sharedMemoryTest === true ? SHARED_MEMORY_STEPS : []),
  ];
}

/** The profile's fixed `name` (02 §4). */
export const PROFILE_NAME = "MAGNT";

/** Fixed content of the test contact (08 §6). Never printed (and scrubbed from every error message). */
export const TEST_CONTACT = {
  summary:
    "Owner-authorised deployment check: this message was sent by the magnt smoke test to verify a MAGNT deployment. It is a test, not a real contact.",
  intent: "deployment_verification",
  agent_identity: SMOKE_CLIENT_NAME,
  found_via: "magnt smoke",
  is_test: true,
} as const;

export interface SyntheticTask {
  goal: string;
  blocker: string;
  tried: string;
  tokens: string[];
}

/** The synthetic task of step 8: random tokens only, so it can never overlap earlier smoke rows. */
export function syntheticTask(): SyntheticTask {
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
