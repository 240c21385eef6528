/**
 * The C.1 owner tools (07 §4): `owner_publish_reply` turns one reviewed draft
 * revision into a reply the visitor can fetch; `owner_revoke_dialogue` makes a
 * dialogue's token stop working. Defined here, registered by the owner server
 * (mcp/owner-server.ts) under the registration rule of 07 §1.
 *
 * Threat model:
 * - Publishing by accident or by a prompt-injected agent: publication is one
 *   explicit call per draft, pinned to `expected_revision` (the text the owner
 *   reviewed), behind the `owner.publish` scope, which is granted only when the
 *   client asked for it and the owner approved it on its own consent line.
 *   Nothing is ever published automatically, and a published reply is immutable.
 * - Publishing into a leaked dialogue: a revoked dialogue accepts no reply.
 * - Races with `owner_save_draft`: the reply body is copied from the draft row in
 *   the same guarded statement that checks the revision (storage/dialogue/sql.ts).
 * - Telemetry: closed `tool_result` labels only — never an id, a token or text.
 */
import * as z from "zod";
import type { ContactId, DraftId } from "../contracts/id-types";
import { OWNER_DIALOGUE_STATUS } from "../contracts/tools";
import type { EventAnnotations } from "../contracts/events";
import { contactIdSchema, draftIdSchema } from "../lib/input-schemas";
import { defineTool, failure, success, type RegisteredTool, type ToolContext, type ToolOutcome } from "../lib/tool-definition";
import { contactExists } from "../storage/contacts/store";
import { insertReplyFromDraft, membershipOf, newReplyId, replyOfDraft, revokeDialogue, type PublishedReply } from "../storage/dialogue/store";
import { onStorageError } from "../storage/failure";
import { draftForPublishing } from "../storage/owner/store";
import { nowIso } from "../storage/ids";

/** The owner's scopes these tools challenge for (06 §3.3, §6); the same strings as owner/oauth/scopes.ts. */
export const PUBLISH_REPLY_SCOPES = ["owner.read", "owner.write", "owner.publish"] as const;
export const REVOKE_DIALOGUE_SCOPES = ["owner.read", "owner.write"] as const;

type DialogueOwnerToolName = "owner_publish_reply" | "owner_revoke_dialogue";

/** A C.1 owner tool: the definition plus the scopes the SDK must challenge for (the owner server's `requiredScopes`). */
export type DialogueOwnerTool = RegisteredTool<DialogueOwnerToolName> & { readonly requiredScopes: readonly [string, ...string[]] };

export const publishReplyInputSchema = z.strictObject({
  draft_id: draftIdSchema.describe("The draft to publish as a reply the visitor can fetch."),
  expected_revision: z.number().int().min(1).describe("The draft revision you reviewed; publishing fails if the draft changed since."),
});

export const revokeDialogueInputSchema = z.strictObject({
  contact_id: contactIdSchema.describe("Any contact of the dialogue to revoke."),
});

const MESSAGES = {
  storage_error: "The owner's storage did not answer. The change may or may not have been stored: list the contact before retrying.",
  draft_not_found: "No draft has this draft_id.",
  revision_conflict: "The draft changed since you reviewed it. Read it again and publish its current revision if you still want to.",
  no_dialogue: "This contact is not in an open dialogue (it has none, or it was revoked), so nothing can be published to it.",
  contact_not_found: "No contact has this contact_id.",
  no_dialogue_to_revoke: "This contact is not in a dialogue; there is nothing to revoke.",
} as const;

type FailureStatus = "storage_error" | "draft_not_found" | "revision_conflict" | "no_dialogue" | "contact_not_found";

function fail(status: FailureStatus, message: string, extra: Record<string, unknown> = {}): ToolOutcome {
  const telemetry: EventAnnotations = { tool_result: status };
  return failure({ status, message, ...extra }, telemetry);
}

const storageError = () => fail("storage_error", MESSAGES.storage_error);

function published(status: "reply_published" | "already_published", reply: PublishedReply): ToolOutcome {
  return success(
    { status, reply_id: reply.reply_id, draft_id: reply.draft_id, contact_id: reply.contact_id, published_at: reply.published_at },
    { tool_result: status },
  );
}

/** `owner_publish_reply` (07 §4.1) against `db`; every fault is a value. */
async function publishReply(db: D1Database, draftId: DraftId, expectedRevision: number): Promise<ToolOutcome> {
  const draft = await draftForPublishing(db, draftId);
  if (draft === null) return fail("draft_not_found", MESSAGES.draft_not_found);
  if (draft.revision !== expectedRevision) {
    return fail("revision_conflict", MESSAGES.revision_conflict, { current_revision: draft.revision });
  }
  const membership = await membershipOf(db, draft.contact_id);
  if (membership === null || membership.revoked_at !== null) return fail("no_dialogue", MESSAGES.no_dialogue);
  const existing = await replyOfDraft(db, draftId);
  if (existing !== null) return published(OWNER_DIALOGUE_STATUS.alreadyPublished, existing);

  const replyId = newReplyId();
  await insertReplyFromDraft(db, { replyId, draftId, revision: expectedRevision, publishedAt: nowIso() });
  const stored = await replyOfDraft(db, draftId);
  if (stored !== null) {
    return published(stored.reply_id === replyId ? OWNER_DIALOGUE_STATUS.published : OWNER_DIALOGUE_STATUS.alreadyPublished, stored);
  }
  // Nothing inserted: something changed between the checks and the insert; say what.
  const now = await draftForPublishing(db, draftId);
  if (now === null) return fail("draft_not_found", MESSAGES.draft_not_found);
  if (now.revision !== expectedRevision) return fail("revision_conflict", MESSAGES.revision_conflict, { current_revision: now.revision });
  return fail("no_dialogue", MESSAGES.no_dialogue);
}

/** `owner_revoke_dialogue` (07 §4.3): idempotent; the first `revoked_at` stays. */
async function revoke(db: D1Database, contactId: ContactId): Promise<ToolOutcome> {
  if (!(await contactExists(db, contactId))) return fail("contact_not_found", MESSAGES.contact_not_found);
  const membership = await membershipOf(db, contactId);
  if (membership === null) return fail("no_dialogue", MESSAGES.no_dialogue_to_revoke);
  const revokedAt = await revokeDialogue(db, membership.dialogue_id, nowIso());
  if (revokedAt === null) return storageError();
  return success({ status: OWNER_DIALOGUE_STATUS.revoked, contact_id: contactId, revoked_at: revokedAt }, { tool_result: "dialogue_revoked" });
}

/** Runs a store step; a D1 fault (including a missing 0007 table) is `storage_error`. */
async function guarded(ctx: ToolContext, step: (db: D1Database) => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const db = ctx.env.CONTACTS;
  if (!db) return storageError();
  return onStorageError(() => step(db), storageError);
}

function scoped(tool: RegisteredTool<DialogueOwnerToolName>, scopes: readonly [string, ...string[]]): DialogueOwnerTool {
  return Object.assign({}, tool, { requiredScopes: scopes });
}

export const ownerPublishReplyTool: DialogueOwnerTool = /* @__PURE__ */ scoped(
  /* @__PURE__ */ defineTool({
    name: "owner_publish_reply",
    title: "Publish a draft as a reply",
    description:
      "Publishes one of your drafts, at the revision you reviewed, as a reply the visitor can fetch with their dialogue token. " +
      "Only do this on the owner's explicit decision for this draft: a published reply cannot be edited or withdrawn.",
    annotations: { title: "Publish a draft as a reply", readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    inputSchema: publishReplyInputSchema,
    run: (args, ctx) => guarded(ctx, (db) => publishReply(db, args.draft_id, args.expected_revision)),
  }),
  PUBLISH_REPLY_SCOPES,
);

export const ownerRevokeDialogueTool: DialogueOwnerTool = /* @__PURE__ */ scoped(
  /* @__PURE__ */ defineTool({
    name: "owner_revoke_dialogue",
    title: "Revoke a dialogue",
    description:
      "Revokes the dialogue of a contact: its token stops working for fetching replies and for follow-ups, and nothing more can be published to it. " +
      "Use it when a token may have leaked. It cannot be undone; nothing is deleted.",
    annotations: { title: "Revoke a dialogue", readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    inputSchema: revokeDialogueInputSchema,
    run: (args, ctx) => guarded(ctx, (db) => revoke(db, args.contact_id)),
  }),
  REVOKE_DIALOGUE_SCOPES,
);
