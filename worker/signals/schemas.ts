/**
 * Inputs of the shared-memory tools (03 §2): strict objects, trimmed strings
 * with their limits, strict booleans. `learned` is not a search field, so a
 * search that sends it is rejected as an unknown field.
 */
import * as z from "zod";
import { SIGNAL_LIMITS } from "../contracts/limits";
import { SEARCH_RECEIPT_PATTERN } from "../contracts/ids";
import { submissionIdSchema, trimmedText } from "../lib/input-schemas";

const taskFields = {
  goal: trimmedText(SIGNAL_LIMITS.goal).describe("The task you are trying to accomplish, in a sentence or two."),
  blocker: trimmedText(SIGNAL_LIMITS.blocker).optional().describe("What is in the way."),
  tried: trimmedText(SIGNAL_LIMITS.tried).optional().describe("What you already tried."),
};

const isTest = z.boolean().optional().describe("Use the test cohort (default false).");

export const searchInputSchema = z.strictObject({
  ...taskFields,
  is_test: isTest,
});

export const contributeInputSchema = z.strictObject({
  ...taskFields,
  learned: trimmedText(SIGNAL_LIMITS.learned).optional().describe("What you learned; shown to later visitors as unverified."),
  is_test: isTest,
  submission_id: submissionIdSchema.optional().describe("A UUID you generate; reuse it only to retry the identical contribution."),
  search_receipt: z
    .string()
    .trim()
    .regex(SEARCH_RECEIPT_PATTERN)
    .optional()
    .describe("The search_receipt of the search that found nothing, if any."),
});

export type SearchInput = z.output<typeof searchInputSchema>;
export type ContributeInput = z.output<typeof contributeInputSchema>;
