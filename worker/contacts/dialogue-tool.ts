/**
 * `propose_contact` with `DIALOGUE_ENABLED` (07 §3): the same receipt plus a
 * `dialogue` object. Without `dialogue_token` (case A) the contact opens a new
 * dialogue and the answer carries its token; with `dialogue_token` and
 * `previous_contact_id` (case B) it joins the dialogue of that contact.
 *
 * Threat model:
 * - Token disclosure: the token is returned only to the request that created
 *   the dialogue and to identical retries of that submission within
 *   `DIALOGUE_TOKEN_REISSUE_WINDOW_S` of the dialogue's creation (re-derived
 *   from the stored dialogue id and checked against the stored hash). A retry
 *   can come from any address, so whoever can reproduce the submission
 *   (`submission_id` and content) could collect the token: the window bounds
 *   that, and the description and the receipt tell agents to use a fresh
 *   random `submission_id` and keep it private like the token. It never
 *   enters telemetry (only `dialogue_token_issued: true`).
 * - Probing with follow-ups: a wrong token, an unknown contact, a contact
 *   without a dialogue and a revoked dialogue give the same bytes, are counted
 *   by the shared attempt limiter and store nothing (storage/dialogue/access.ts).
 * - Races: case A writes contact, dialogue and root membership in one batch whose
 *   dialogue rows are guarded by the existence of *this* request's contact id,
 *   so of 50 identical concurrent submissions exactly one creates a dialogue.
 * - A missing or malformed key fails closed before anything is read or written:
 *   `not_saved`, telemetry `dialogue_misconfigured`.
 */
import {
  DIALOGUE_NOT_FOUND_MESSAGE,
  DIALOGUE_RATE_LIMITED_MESSAGE,
  DIALOGUE_STATUS,
  DIALOGUE_TOKEN_REISSUE_WINDOW_S,
  FETCH_REPLY_STATUS,
} from "../contracts/tools";
import { deriveDialogueToken, dialogueTokenHash, importDialogueKey, type DialogueKey } from "../lib/dialogue-token";
import { defineTool, failure, type ToolContext, type ToolOutcome } from "../lib/tool-definition";
import type { ContactId } from "../contracts/id-types";
import { budgetAlreadyTaken, verifyDialogueAccess } from "../storage/dialogue/access";
import { createDialogueStatements, joinDialogueStatement, membershipOf, newDialogueId, type DialogueMembership } from "../storage/dialogue/store";
import { onStorageError } from "../storage/failure";
import { contactDialogueInputSchema, type ContactDialogueInput } from "./schema";
import { contactWrite, storeContactWrite, type SaveContactResult } from "./store";
import { conflict, notSaved, PROPOSE_CONTACT_META, publicWriteLimited, receipt } from "./tool";

const REISSUE_WINDOW = `${DIALOGUE_TOKEN_REISSUE_WINDOW_S / 60} minutes`;

const DIALOGUE_MESSAGES = {
  tokenIssued: `Store this dialogue_token securely, together with this contact_id. You need both for fetch_contact_reply and to add a later message to this dialogue (pass this contact_id as previous_contact_id with the token). The token proves possession only, not identity; anyone holding it can read replies. For ${REISSUE_WINDOW} after this answer an identical retry of this submission (same submission_id, same content) returns the token again, from any address: the submission_id must be a fresh random UUID, never derived from the message, kept private like the token.`,
  tokenPreviouslyIssued: `This message opened a dialogue, but its dialogue_token cannot be shown again (an identical retry returns it only within ${REISSUE_WINDOW} of the first answer). Use the token from the first answer; if it is lost, start a new dialogue with a new message and a fresh random submission_id.`,
  joined: "This message was added to your existing dialogue; keep using the same dialogue_token.",
  notInDialogue: "This message has no dialogue.",
} as const;

type DialogueObject =
  | { status: typeof DIALOGUE_STATUS.tokenIssued; dialogue_token: string; message: string }
  | { status: Exclude<(typeof DIALOGUE_STATUS)[keyof typeof DIALOGUE_STATUS], "token_issued">; message: string };

function dialogueReceipt(saved: Extract<SaveContactResult, { row: unknown }>, input: ContactDialogueInput, dialogue: DialogueObject): ToolOutcome {
  return receipt(saved.row, saved.kind === "duplicate", input, {
    result: { dialogue },
    telemetry: { dialogue_token_issued: dialogue.status === DIALOGUE_STATUS.tokenIssued, dialogue_joined: dialogue.status === DIALOGUE_STATUS.joined },
  });
}

/** A key that is missing or malformed: `not_saved` to the visitor, `dialogue_misconfigured` in telemetry (07 §2). */
function misconfigured(self_reported_test: boolean): ToolOutcome {
  const answer = notSaved(self_reported_test);
  return Object.assign({}, answer, { telemetry: Object.assign({}, answer.telemetry, { tool_result: "dialogue_misconfigured" as const }) });
}

/**
 * The `dialogue` answer of a duplicate (an identical retry): what the stored
 * contact's membership says, whichever case the retry itself took (07 §3 step 4).
 * The token is re-issued only within the window after the dialogue was opened
 * (an unreadable `created_at` counts as outside it), while not revoked, and
 * only if the current key still derives the stored hash.
 */
async function describeStored(key: DialogueKey, membership: DialogueMembership | null, nowMs: number): Promise<DialogueObject> {
  if (membership === null) return { status: DIALOGUE_STATUS.notInDialogue, message: DIALOGUE_MESSAGES.notInDialogue };
  if (membership.role === "follow_up") return { status: DIALOGUE_STATUS.joined, message: DIALOGUE_MESSAGES.joined };
  const withinWindow = nowMs - Date.parse(membership.created_at) <= DIALOGUE_TOKEN_REISSUE_WINDOW_S * 1000;
  if (withinWindow && membership.revoked_at === null) {
    const token = await deriveDialogueToken(key, membership.dialogue_id);
    if ((await dialogueTokenHash(token)) === membership.token_hash) {
      return { status: DIALOGUE_STATUS.tokenIssued, dialogue_token: token, message: DIALOGUE_MESSAGES.tokenIssued };
    }
  }
  return { status: DIALOGUE_STATUS.tokenPreviouslyIssued, message: DIALOGUE_MESSAGES.tokenPreviouslyIssued };
}

/** Reads the stored contact's membership; a storage fault is null-with-failure, never an exception. */
async function storedMembership(db: D1Database, contactId: ContactId): Promise<{ ok: true; membership: DialogueMembership | null } | { ok: false }> {
  return onStorageError(
    async () => ({ ok: true, membership: await membershipOf(db, contactId) }) as const,
    () => ({ ok: false }) as const,
  );
}

/** Case A: a new dialogue with its token, in one guarded batch with the contact. */
async function openDialogue(db: D1Database, input: ContactDialogueInput, key: DialogueKey, ctx: ToolContext): Promise<ToolOutcome> {
  const self_reported_test = input.is_test === true;
  const write = await contactWrite(input, ctx.client);
  const dialogueId = newDialogueId();
  const token = await deriveDialogueToken(key, dialogueId);
  const tokenHash = await dialogueTokenHash(token);
  const saved = await storeContactWrite(
    db,
    write,
    createDialogueStatements({ dialogueId, tokenHash, contactId: write.contactId, createdAt: write.createdAt }),
  );
  if (saved.kind === "conflict") return conflict(self_reported_test);
  if (saved.kind === "not_saved") return notSaved(self_reported_test);

  const stored = await storedMembership(db, saved.row.contact_id);
  if (!stored.ok) return notSaved(self_reported_test);
  if (saved.kind === "accepted") {
    // Read back: this request's own dialogue, or no receipt at all.
    const own = stored.membership;
    if (own === null || own.role !== "root" || own.dialogue_id !== dialogueId || own.token_hash !== tokenHash) return notSaved(self_reported_test);
    return dialogueReceipt(saved, input, { status: DIALOGUE_STATUS.tokenIssued, dialogue_token: token, message: DIALOGUE_MESSAGES.tokenIssued });
  }
  return dialogueReceipt(saved, input, await describeStored(key, stored.membership, Date.now()));
}

/** Case B: a follow-up, only after the token of `previous_contact_id`'s dialogue was verified. */
async function joinDialogue(
  db: D1Database,
  input: ContactDialogueInput & { dialogue_token: string; previous_contact_id: ContactId },
  key: DialogueKey,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const self_reported_test = input.is_test === true;
  // This call took the public-write budget before anything (`run` below), so a wrong attempt is not charged twice.
  const access = await verifyDialogueAccess(db, input.previous_contact_id, input.dialogue_token, Date.now(), budgetAlreadyTaken);
  switch (access.kind) {
    case "storage_error":
      return notSaved(self_reported_test);
    case "refused":
      return failure(
        { status: FETCH_REPLY_STATUS.dialogueNotFound, message: DIALOGUE_NOT_FOUND_MESSAGE },
        { tool_result: "dialogue_not_found", self_reported_test, rate_limited: false },
      );
    case "rate_limited":
      // The attempt limit (the budget was taken up front): `rate_limited` reports only the public-write limit.
      return failure(
        { status: FETCH_REPLY_STATUS.rateLimited, retry_after_s: access.retryAfterS, message: DIALOGUE_RATE_LIMITED_MESSAGE },
        { tool_result: "rate_limited", self_reported_test, rate_limited: access.limit === "public_writes" },
      );
    case "granted":
      break;
  }
  const dialogueId = access.membership.dialogue_id;
  const write = await contactWrite(input, ctx.client);
  const saved = await storeContactWrite(db, write, [joinDialogueStatement({ dialogueId, contactId: write.contactId, joinedAt: write.createdAt })]);
  if (saved.kind === "conflict") return conflict(self_reported_test);
  if (saved.kind === "not_saved") return notSaved(self_reported_test);

  const stored = await storedMembership(db, saved.row.contact_id);
  if (!stored.ok) return notSaved(self_reported_test);
  if (saved.kind === "accepted") {
    const own = stored.membership;
    if (own === null || own.role !== "follow_up" || own.dialogue_id !== dialogueId) return notSaved(self_reported_test);
    return dialogueReceipt(saved, input, { status: DIALOGUE_STATUS.joined, message: DIALOGUE_MESSAGES.joined });
  }
  return dialogueReceipt(saved, input, await describeStored(key, stored.membership, Date.now()));
}

export const proposeContactDialogueTool = defineTool({
  ...PROPOSE_CONTACT_META,
  description: `${PROPOSE_CONTACT_META.description} A new message also returns a dialogue_token: keep it to fetch replies with fetch_contact_reply and to add later messages to the same dialogue. Use a fresh random UUID as submission_id, never one derived from the message, and keep it private like the token: for ${REISSUE_WINDOW} an identical retry with it returns the token again.`,
  inputSchema: contactDialogueInputSchema,
  async run(input, ctx) {
    const self_reported_test = input.is_test === true;
    const db = ctx.env.CONTACTS;
    if (!db) return notSaved(self_reported_test);
    const key = await importDialogueKey(ctx.env.DIALOGUE_TOKEN_KEY);
    if (key === null) return misconfigured(self_reported_test);
    const { limited } = await ctx.checkPublicWrite();
    if (limited) return publicWriteLimited(self_reported_test);

    const { dialogue_token, previous_contact_id } = input;
    if (dialogue_token !== undefined && previous_contact_id !== undefined) {
      return joinDialogue(db, Object.assign({}, input, { dialogue_token, previous_contact_id }), key, ctx);
    }
    return openDialogue(db, input, key, ctx);
  },
});
