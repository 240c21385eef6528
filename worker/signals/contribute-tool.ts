/**
 * `contribute_task_signal` (03 §8): publish a short task signal that later
 * visitors may see. Idempotent by `submission_id`; a retry returns the
 * original `signal_id` and never counts as a new contribution.
 */
import { COHORT, CONTRIBUTE_STATUS, TOOL_CONTRIBUTE } from "../contracts/tools";
import { RATE_LIMIT_RETRY_AFTER_S } from "../contracts/limits";
import { defineTool, failure, success } from "../lib/tool-definition";
import { contributeInputSchema } from "./schemas";
import { saveSignal } from "./signal-store";

const MESSAGES = {
  accepted:
    "Published. This entry may be returned to later visitors and stays active until the owner hides or removes it. Publishing guarantees no benefit.",
  duplicate: "Already published under this submission_id; this is the original signal_id. Nothing was changed.",
  conflict: "This submission_id was already used for a different contribution. Nothing was overwritten. Use a new UUID for a new contribution.",
  rateLimited: `Too many writes from this address. Nothing was stored. Retry after ${RATE_LIMIT_RETRY_AFTER_S} seconds with the same submission_id.`,
  storageError: "Shared memory is unavailable right now. Nothing was published; retry later with the same submission_id.",
} as const;

export const contributeTool = defineTool({
  name: TOOL_CONTRIBUTE,
  title: "Share a task signal",
  description:
    "Publish a short description of a task (goal, blocker, what you tried and learned) so that later visitors searching for similar tasks can see it. Use it only when your instructions allow sharing; never include secrets or private data.",
  annotations: {
    title: "Share a task signal",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  inputSchema: contributeInputSchema,
  async run(input, ctx) {
    const isTest = input.is_test === true;
    const cohort = isTest ? COHORT.test : COHORT.ordinary;
    const base = {
      self_reported_test: isTest,
      ...(input.search_receipt !== undefined ? { search_receipt: input.search_receipt } : {}),
    };
    const storageError = () =>
      failure(
        { status: CONTRIBUTE_STATUS.storageError, message: MESSAGES.storageError },
        { tool_result: "storage_error", self_reported_test: isTest, rate_limited: false },
      );

    const db = ctx.env.CONTACTS;
    if (!db) return storageError();
    const { limited } = await ctx.checkPublicWrite();
    if (limited) {
      return failure(
        { status: CONTRIBUTE_STATUS.rateLimited, retry_after_s: RATE_LIMIT_RETRY_AFTER_S, message: MESSAGES.rateLimited },
        { tool_result: "rate_limited", rate_limited: true, ...base },
      );
    }

    const saved = await saveSignal(db, input);
    switch (saved.kind) {
      case "accepted":
        return success(
          { status: CONTRIBUTE_STATUS.accepted, signal_id: saved.row.signal_id, duplicate: false, cohort, message: MESSAGES.accepted },
          { tool_result: "accepted", signal_id: saved.row.signal_id, rate_limited: false, ...base },
        );
      case "duplicate":
        return success(
          { status: CONTRIBUTE_STATUS.duplicate, signal_id: saved.row.signal_id, duplicate: true, cohort, message: MESSAGES.duplicate },
          { tool_result: "duplicate", signal_id: saved.row.signal_id, rate_limited: false, ...base },
        );
      case "conflict":
        return failure(
          { status: CONTRIBUTE_STATUS.conflict, message: MESSAGES.conflict },
          { tool_result: "submission_conflict", rate_limited: false, ...base },
        );
      case "not_saved":
        return storageError();
    }
  },
});
