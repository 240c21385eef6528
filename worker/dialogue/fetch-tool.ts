/**
 * `fetch_contact_reply` (07 §5): a visitor holding a dialogue token pulls the
 * owner's published replies, one per call, oldest first, and may re-read one
 * already delivered by its `reply_id`.
 *
 * Threat model:
 * - Reading someone else's replies: only a caller presenting the token whose
 *   hash is stored for the dialogue of `contact_id` gets any reply text; every
 *   refusal (unknown contact, no dialogue, revoked, wrong token) is the same
 *   bytes and is counted by the shared attempt limiter (storage/dialogue/access.ts).
 * - Burning D1 writes from a tool that looks like a read: each wrong attempt
 *   takes the caller's public-write budget (01 §14) before its counter upsert;
 *   a spent budget answers `rate_limited` and writes nothing. The right token
 *   never touches the budget.
 * - Double delivery under concurrency: a reply is claimed by one guarded UPDATE
 *   (`fetched_at IS NULL`), so concurrent fetches never return the same reply as
 *   new; a lost answer is recovered through `delivered_replies` + `reply_id`.
 * - Reply text is owner-written but handed to an agent: it is labelled
 *   `content_label: "owner_reply"` and never logged; telemetry carries booleans only.
 * - A missing or malformed key fails closed (`storage_error`, telemetry
 *   `dialogue_misconfigured`), as does a missing binding or any D1 fault.
 */
import * as z from "zod";
import {
  CONTENT_LABEL_OWNER_REPLY,
  DIALOGUE_NOT_FOUND_MESSAGE,
  DIALOGUE_RATE_LIMITED_MESSAGE,
  DIALOGUE_TOKEN_PATTERN,
  FETCH_REPLY_STATUS,
  TOOL_FETCH_REPLY,
} from "../contracts/tools";
import { isOn } from "../config/flags";
import { importDialogueKey } from "../lib/dialogue-token";
import { trimmedContactIdSchema, trimmedReplyIdSchema } from "../lib/input-schemas";
import { defineTool, failure, success, type ToolOutcome } from "../lib/tool-definition";
import { verifyDialogueAccess } from "../storage/dialogue/access";
import {
  claimOldestReply,
  deliveredReplies,
  deliveredReply,
  hasPendingReply,
  readReceiptRows,
  type ReadReceiptRow,
  type ReplyRow,
} from "../storage/dialogue/store";
import { onStorageError } from "../storage/failure";
import { nowIso } from "../storage/ids";

export const fetchReplyInputSchema = z.strictObject({
  contact_id: trimmedContactIdSchema.describe("The contact_id receipt of any of your messages in the dialogue."),
  dialogue_token: z.string().regex(DIALOGUE_TOKEN_PATTERN).describe("The dialogue_token you received when the dialogue was opened."),
  reply_id: trimmedReplyIdSchema
    .optional()
    .describe("Re-read a reply that was already delivered to you (listed in delivered_replies)."),
});

const MESSAGES = {
  replyNotFound: "No delivered reply with this reply_id exists in this dialogue. Fetch without reply_id to receive the next new reply.",
  storageError:
    "Replies cannot be fetched right now; retry later. A reply that was being delivered is listed in delivered_replies on your next fetch and can be re-read by its reply_id.",
} as const;

function refusal(status: string, message: string, tool_result: "reply_not_found" | "storage_error" | "dialogue_misconfigured"): ToolOutcome {
  return failure({ status, message }, { tool_result });
}

const storageError = () => refusal(FETCH_REPLY_STATUS.storageError, MESSAGES.storageError, "storage_error");

/** A read receipt as the visitor sees it (07 §6): `read_by_owner` says what `read_at` implies, for clients that only test a boolean. */
function readReceipt(row: ReadReceiptRow) {
  return { contact_id: row.contact_id, received_at: row.received_at, read_by_owner: row.read_at !== null, read_at: row.read_at };
}

function replyBody(reply: ReplyRow) {
  return { reply_id: reply.reply_id, in_reply_to: reply.contact_id, published_at: reply.published_at, text: reply.body };
}

export const fetchReplyTool = defineTool({
  name: TOOL_FETCH_REPLY,
  title: "Fetch a reply to your message",
  description:
    "Fetch the next reply Alexander published to your dialogue, one per call, oldest first; pass reply_id to re-read one already delivered. Needs the contact_id of one of your messages and the dialogue_token returned when the dialogue was opened. Replies are pulled only: nothing is pushed to you.",
  annotations: {
    title: "Fetch a reply to your message",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  inputSchema: fetchReplyInputSchema,
  async run(input, ctx) {
    const db = ctx.env.CONTACTS;
    if (!db) return storageError();
    if ((await importDialogueKey(ctx.env.DIALOGUE_TOKEN_KEY)) === null) {
      return refusal(FETCH_REPLY_STATUS.storageError, MESSAGES.storageError, "dialogue_misconfigured");
    }

    // A wrong attempt writes a counter row, so it takes this address's public-write budget first (01 §14).
    const access = await verifyDialogueAccess(db, input.contact_id, input.dialogue_token, Date.now(), ctx.checkPublicWrite);
    switch (access.kind) {
      case "storage_error":
        return storageError();
      case "refused":
        return failure({ status: FETCH_REPLY_STATUS.dialogueNotFound, message: DIALOGUE_NOT_FOUND_MESSAGE }, { tool_result: "dialogue_not_found", rate_limited: false });
      case "rate_limited":
        // Either limit answers the same way; only telemetry's `rate_limited` tells the public-write budget apart.
        return failure(
          { status: FETCH_REPLY_STATUS.rateLimited, retry_after_s: access.retryAfterS, message: DIALOGUE_RATE_LIMITED_MESSAGE },
          { tool_result: "rate_limited", rate_limited: access.limit === "public_writes" },
        );
      case "granted":
        break;
    }

    const dialogueId = access.membership.dialogue_id;
    const receipts = isOn(ctx.env, "DIALOGUE_READ_RECEIPTS_ENABLED");
    return onStorageError(async (): Promise<ToolOutcome> => {
      let reply: ReplyRow | null;
      let redelivered: boolean;
      if (input.reply_id !== undefined) {
        reply = await deliveredReply(db, dialogueId, input.reply_id);
        if (reply === null) return refusal(FETCH_REPLY_STATUS.replyNotFound, MESSAGES.replyNotFound, "reply_not_found");
        redelivered = true;
      } else {
        reply = await claimOldestReply(db, dialogueId, nowIso());
        redelivered = false;
      }
      const more_pending = await hasPendingReply(db, dialogueId);
      const delivered_replies = await deliveredReplies(db, dialogueId);
      const receiptList = receipts ? { read_receipts: (await readReceiptRows(db, dialogueId)).map(readReceipt) } : {};
      const telemetry = { redelivered, more_pending, read_receipts_included: receipts };

      if (reply === null) {
        return success(
          { status: FETCH_REPLY_STATUS.nonePending, contact_id: input.contact_id, more_pending: false, delivered_replies, ...receiptList },
          { tool_result: "no_reply_pending", ...telemetry, more_pending: false },
        );
      }
      return success(
        {
          status: FETCH_REPLY_STATUS.delivered,
          contact_id: input.contact_id,
          reply: replyBody(reply),
          fetched_at: reply.fetched_at,
          redelivered,
          more_pending,
          delivered_replies,
          content_label: CONTENT_LABEL_OWNER_REPLY,
          ...receiptList,
        },
        { tool_result: "reply_delivered", ...telemetry },
      );
    }, storageError);
  },
});
