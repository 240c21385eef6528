/**
 * Validation diagnostics agree with the SDK's verdict (01 §11): for every
 * public tool and inputs that produce every reachable code, the event says
 * `invalid` exactly when the SDK rejected the arguments, and names the code.
 */
import { describe, expect, it } from "vitest";
import { captureConsole } from "../helpers/door";
import { callToolModern } from "../helpers/mcp";

interface Case {
  tool: string;
  args: unknown;
  /** The expected first (field, code), or null for valid arguments. */
  expected: [string, string] | null;
}

const long = (length: number) => "x".repeat(length);
const uuid = () => crypto.randomUUID();

const CASES: Case[] = [
  { tool: "about_magnt", args: {}, expected: null },
  { tool: "about_magnt", args: undefined, expected: null },
  { tool: "about_magnt", args: { extra: 1 }, expected: ["arguments", "unknown_field"] },

  { tool: "propose_contact", args: { summary: "ok", is_test: true }, expected: null },
  { tool: "propose_contact", args: {}, expected: ["summary", "missing_required"] },
  { tool: "propose_contact", args: { summary: "\t \n" }, expected: ["summary", "empty_value"] },
  { tool: "propose_contact", args: { summary: ["x"] }, expected: ["summary", "invalid_type"] },
  { tool: "propose_contact", args: { summary: "x", found_via: long(501) }, expected: ["found_via", "too_long"] },
  { tool: "propose_contact", args: { summary: "x", submission_id: "1234" }, expected: ["submission_id", "invalid_format"] },
  { tool: "propose_contact", args: { summary: "x", previous_contact_id: `mc_${uuid()}x` }, expected: ["previous_contact_id", "invalid_format"] },
  { tool: "propose_contact", args: { summary: "x", dialogue_token: "dt_x" }, expected: ["arguments", "unknown_field"] },

  { tool: "search_shared_experience", args: { goal: "deploy worker", is_test: true }, expected: null },
  { tool: "search_shared_experience", args: { blocker: "x" }, expected: ["goal", "missing_required"] },
  { tool: "search_shared_experience", args: { goal: " " }, expected: ["goal", "empty_value"] },
  { tool: "search_shared_experience", args: { goal: "x", tried: long(2001) }, expected: ["tried", "too_long"] },
  { tool: "search_shared_experience", args: { goal: "x", is_test: 1 }, expected: ["is_test", "invalid_type"] },
  { tool: "search_shared_experience", args: { goal: "x", learned: "y" }, expected: ["arguments", "unknown_field"] },

  { tool: "contribute_task_signal", args: { goal: "share", learned: "y", is_test: true, submission_id: uuid() }, expected: null },
  { tool: "contribute_task_signal", args: { goal: long(1001) }, expected: ["goal", "too_long"] },
  { tool: "contribute_task_signal", args: { goal: "x", learned: long(2001) }, expected: ["learned", "too_long"] },
  { tool: "contribute_task_signal", args: { goal: "x", search_receipt: "sr_123" }, expected: ["search_receipt", "invalid_format"] },
  { tool: "contribute_task_signal", args: { goal: "x", search_receipt: `sr_${"A".repeat(32)}` }, expected: ["search_receipt", "invalid_format"] },
  { tool: "contribute_task_signal", args: { goal: null }, expected: ["goal", "invalid_type"] },
];

describe("validation diagnostics agree with the SDK (01 §11)", () => {
  it.each(CASES)("$tool $args → $expected", async ({ tool, args, expected }) => {
    const logs = captureConsole();
    const { result } = await callToolModern(tool, args);
    const event = logs.events()[0]!;
    const sdkRejected = result!.isError === true && (result!.content[0]?.text ?? "").startsWith("Input validation error");
    expect(event.validation_status === "invalid").toBe(sdkRejected);
    if (expected === null) {
      expect(event.validation_status).toBe("valid");
      expect(event.tool_result).not.toBe("invalid_arguments");
    } else {
      expect([event.validation_field, event.validation_code]).toEqual(expected);
      expect(event.tool_result).toBe("invalid_arguments");
      expect(event.validation_issues![0]).toEqual({ field: expected[0], code: expected[1] });
    }
  });

  it("caps the issue list at 8 while counting every issue", async () => {
    const logs = captureConsole();
    const args: Record<string, unknown> = { summary: 1, intent: 1, what_you_need_from_human: 1, agent_identity: 1, operator: 1, reply_to: 1, found_via: 1, previous_contact_id: 1, submission_id: 1, is_test: "x" };
    await callToolModern("propose_contact", args);
    const event = logs.events()[0]!;
    expect(event.validation_issue_count).toBe(10);
    expect(event.validation_issues).toHaveLength(8);
  });
});
