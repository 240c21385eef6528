/**
 * `propose_contact` input (02 §5.1): a strict object; every string is trimmed
 * first and its limits apply to the trimmed value, which is also what is
 * hashed and stored.
 */
import * as z from "zod";
import { CONTACT_LIMITS } from "../contracts/limits";
import { DIALOGUE_TOKEN_PATTERN, DIALOGUE_TOKEN_REISSUE_WINDOW_S } from "../contracts/tools";
import { submissionIdSchema, trimmedContactIdSchema, trimmedText } from "../lib/input-schemas";

export const contactInputSchema = z.strictObject({
  summary: trimmedText(CONTACT_LIMITS.summary).describe("Your message in your own words; a greeting is enough."),
  intent: trimmedText(CONTACT_LIMITS.intent).optional().describe("The purpose of the contact."),
  what_you_need_from_human: trimmedText(CONTACT_LIMITS.what_you_need_from_human)
    .optional()
    .describe("The human action you would like."),
  agent_identity: trimmedText(CONTACT_LIMITS.agent_identity).optional().describe("Self-reported; not proof."),
  operator: trimmedText(CONTACT_LIMITS.operator).optional().describe("The person or organisation you act for."),
  reply_to: trimmedText(CONTACT_LIMITS.reply_to)
    .optional()
    .describe("An e-mail or other channel for a reply; never opened or contacted automatically."),
  found_via: trimmedText(CONTACT_LIMITS.found_via).optional().describe("How you found MAGNT."),
  previous_contact_id: trimmedContactIdSchema
    .optional()
    .describe("An earlier contact_id receipt: a claimed link, not proof, and it grants no access."),
  submission_id: submissionIdSchema
    .optional()
    .describe("A UUID you generate; reuse it only to retry the identical message."),
  is_test: z.boolean().optional().describe("Set true if this is a test."),
});

export type ContactInput = z.output<typeof contactInputSchema>;

/**
 * The `propose_contact` input with `DIALOGUE_ENABLED` (07 §3): the same fields
 * plus `dialogue_token`, which joins the dialogue of `previous_contact_id` and
 * is meaningless without it (an input error, `invalid_value` on
 * `dialogue_token`). The token is never part of the payload hash.
 */
export const contactDialogueInputSchema = contactInputSchema
  .extend({
    // Same field in the same place; its description adds that it guards a re-issued token (07 §3 step 4).
    submission_id: submissionIdSchema
      .optional()
      .describe(
        `A fresh random UUID you generate (never derived from the message); reuse it only to retry the identical message. Keep it private like the dialogue_token: for ${DIALOGUE_TOKEN_REISSUE_WINDOW_S / 60} minutes an identical retry returns the token.`,
      ),
    dialogue_token: z
      .string()
      .regex(DIALOGUE_TOKEN_PATTERN)
      .optional()
      .describe(
        "The dialogue_token you received for an earlier message; pass it with that message's contact_id as previous_contact_id to add this message to the same dialogue.",
      ),
  })
  .superRefine((input, ctx) => {
    if (input.dialogue_token !== undefined && input.previous_contact_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["dialogue_token"], message: "dialogue_token needs previous_contact_id" });
    }
  });

export type ContactDialogueInput = z.output<typeof contactDialogueInputSchema>;
