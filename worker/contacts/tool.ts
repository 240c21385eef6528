/**
 * `propose_contact` (02 §5): a private message for Alexander's later human
 * review. Nothing is automatic — no e-mail, no URL opened, no reply sent.
 */
import { CONTACT_NOT_SAVED_CODE, CONTACT_REVIEW_STATUS_PENDING, CONTACT_STATUS, TOOL_PROPOSE_CONTACT } from "../contracts/tools";
import { RATE_LIMIT_RETRY_AFTER_S } from "../contracts/limits";
import { defineTool, failure, success } from "../lib/tool-definition";
import type { EventAnnotations } from "../contracts/events";
import { contactInputSchema, type ContactInput } from "./schema";
import { saveContact, type StoredContactRow } from "./store";

const MESSAGES = {
  accepted:
    "Your message was saved for Alexander's later human review. Saved does not mean read, accepted or agreed to, and it creates no financial, legal or other commitment.",
  continuation:
    "To send a later message about the same matter, pass this contact_id as previous_contact_id. To retry this exact message, reuse the same submission_id with identical content. Include reply_to if you want an answer.",
  conflict:
    "This submission_id was already used for a different message. Nothing was changed. Use a new UUID for a new message.",
  notSaved:
    "Your message was not saved and has not been delivered. Retry later with the same submission_id, or write to agents@magnt.ru.",
  rateLimited: `Too many writes from this address. Nothing was stored. Retry after ${RATE_LIMIT_RETRY_AFTER_S} seconds with the same submission_id.`,
} as const;

/** `not_saved` (02 §5.4): never a `contact_id`, for every storage fault. */
export function notSaved(self_reported_test: boolean) {
  return failure(
    { status: CONTACT_STATUS.notSaved, code: CONTACT_NOT_SAVED_CODE, message: MESSAGES.notSaved },
    { tool_result: "storage_unavailable", self_reported_test, rate_limited: false },
  );
}

/** Over the public-write limit (01 §14): nothing read or written. */
export function publicWriteLimited(self_reported_test: boolean) {
  return failure(
    { status: CONTACT_STATUS.rateLimited, retry_after_s: RATE_LIMIT_RETRY_AFTER_S, message: MESSAGES.rateLimited },
    { tool_result: "rate_limited", rate_limited: true, self_reported_test },
  );
}

export function conflict(self_reported_test: boolean) {
  return failure(
    { status: CONTACT_STATUS.conflict, message: MESSAGES.conflict },
    { tool_result: "submission_conflict", self_reported_test, rate_limited: false },
  );
}

/**
 * The receipt of a stored contact (02 §5.4); `extra` appends fields after
 * `continuation` (C.1's `dialogue`) and its telemetry (07 §8).
 */
export function receipt(
  row: StoredContactRow,
  duplicate: boolean,
  input: ContactInput,
  extra: { result?: Record<string, unknown>; telemetry?: EventAnnotations } = {},
) {
  return success(
    {
      status: CONTACT_STATUS.accepted,
      contact_id: row.contact_id,
      received_at: row.created_at,
      duplicate,
      review_status: CONTACT_REVIEW_STATUS_PENDING,
      message: MESSAGES.accepted,
      continuation: MESSAGES.continuation,
      ...extra.result,
    },
    {
      tool_result: "accepted_for_human_review",
      contact_id: row.contact_id,
      duplicate,
      has_reply_channel: input.reply_to !== undefined,
      has_previous_contact: input.previous_contact_id !== undefined,
      self_reported_test: input.is_test === true,
      rate_limited: false,
      ...extra.telemetry,
    },
  );
}

/** What both variants of the tool share: name, title, description and annotations. */
export const PROPOSE_CONTACT_META = {
  name: TOOL_PROPOSE_CONTACT,
  title: "Leave a message for Alexander",
  description:
    "Leave a private message for Alexander Redkov's later human review: a greeting, a question, a research interest or a proposal. Returns a receipt (contact_id) once the message is stored. Nothing is answered or committed automatically.",
  annotations: {
    title: "Leave a message for Alexander",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
} as const;

export const proposeContactTool = defineTool({
  ...PROPOSE_CONTACT_META,
  inputSchema: contactInputSchema,
  async run(input, ctx) {
    const self_reported_test = input.is_test === true;
    const db = ctx.env.CONTACTS;
    if (!db) return notSaved(self_reported_test);
    const { limited } = await ctx.checkPublicWrite();
    if (limited) return publicWriteLimited(self_reported_test);

    const saved = await saveContact(db, input, ctx.client);
    switch (saved.kind) {
      case "accepted":
      case "duplicate":
        return receipt(saved.row, saved.kind === "duplicate", input);
      case "conflict":
        return conflict(self_reported_test);
      case "not_saved":
        return notSaved(self_reported_test);
    }
  },
});
