/**
 * Inputs of the four owner tools (06 §6.1–§6.4): strict objects, as the tools
 * register them with the SDK. A `since` that does not parse is a custom issue,
 * which the validation diagnostics report as `invalid_value` (01 §11); so is
 * `expected_revision` present without `draft_id` or missing with it.
 */
import * as z from "zod";
import { OWNER_CONTACT_STATES } from "../contracts/owner-state";
import { contactIdSchema, draftIdSchema } from "../lib/input-schemas";


/** ISO 8601 date or date-time, with or without an offset (checked before `Date.parse`, which accepts far more). */
const ISO_DATE_OR_DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `since` re-serialised with `toISOString()` (06 §6.1), so `2026-11-01` and
 * `2026-11-01T00:00:00+03:00` compare correctly with the stored text; null
 * when it is not an ISO 8601 date or date-time or names no real instant.
 */
export function parseSince(value: string): string | null {
  if (!ISO_DATE_OR_DATE_TIME.test(value)) return null;
  const normalised = value.replace(" ", "T").replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
  const time = Date.parse(normalised);
  if (Number.isNaN(time)) return null;
  // Date.parse rolls 2026-02-31 over to March; a date that does not round-trip is refused.
  const datePart = normalised.slice(0, 10);
  const [year, month, day] = datePart.split("-").map(Number) as [number, number, number];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  return new Date(time).toISOString();
}

const since = z
  .string()
  .max(64)
  .refine((value) => parseSince(value) !== null, { message: "since must be an ISO 8601 date or date-time" })
  .optional()
  .describe("Only items created at or after this ISO 8601 date or date-time.");
const includeTests = z.boolean().optional().describe("Include self-reported test items (default false).");
const limit = z.number().int().min(1).max(50).optional().describe("Page size, 1–50 (default 20).");
const cursor = z.string().max(512).optional().describe("next_cursor of the previous page.");
/** Ids as the owner may type them, either case; lower-cased here once (`lib/input-schemas.ts`). */
const contactId = contactIdSchema;

export const listContactsInputSchema = z.strictObject({
  contact_id: contactId.optional().describe("Return only this contact; the other filters and paging are ignored."),
  include_tests: includeTests,
  state: z.enum([...OWNER_CONTACT_STATES, "any"]).optional().describe("Owner state filter (default any)."),
  since,
  limit,
  cursor,
  detail: z.enum(["preview", "full"]).optional().describe("preview cuts long texts to 280 characters (default); full returns them whole."),
});

export const listObservedGoalsInputSchema = z.strictObject({
  include_tests: includeTests,
  since,
  limit,
  cursor,
});

export const saveDraftInputSchema = z
  .strictObject({
    contact_id: contactId.describe("The contact this private draft answers."),
    text: z.string().trim().min(1).max(8000).describe("The draft text (private; never sent)."),
    draft_id: draftIdSchema.optional().describe("Update this draft instead of creating one."),
    expected_revision: z.number().int().min(1).optional().describe("Required with draft_id: the revision you are updating."),
  })
  .superRefine((input, context) => {
    if ((input.draft_id === undefined) !== (input.expected_revision === undefined)) {
      context.addIssue({ code: "custom", path: ["expected_revision"], message: "expected_revision goes with draft_id, and only with it" });
    }
  });

export const setContactStateInputSchema = z.strictObject({
  contact_id: contactId,
  state: z.enum(OWNER_CONTACT_STATES),
});

export type ListContactsInput = z.output<typeof listContactsInputSchema>;
export type ListObservedGoalsInput = z.output<typeof listObservedGoalsInputSchema>;
export type SaveDraftInput = z.output<typeof saveDraftInputSchema>;
export type SetContactStateInput = z.output<typeof setContactStateInputSchema>;
