/**
 * Reading the row a notification refers to (05 §5 step 10), at send time —
 * message text is never stored in the outbox. The storage groups select only
 * the columns a message may use (`storage/contacts`, `storage/observations`);
 * notify never writes to those tables, so a failed notification can never
 * alter a contact or an observation.
 */
import { contactSource } from "../storage/contacts/store";
import { observationSource } from "../storage/observations/store";
import type { SourceKind } from "../storage/outbox/store";

export type Source =
  | {
      kind: "contact";
      id: string;
      createdAt: string;
      isTest: boolean;
      hasReplyChannel: boolean;
      isFollowUp: boolean;
      text: string;
    }
  | {
      kind: "observation";
      id: string;
      createdAt: string;
      isTest: boolean;
      hasBlocker: boolean;
      hasTried: boolean;
      text: string;
    };

/** The source row, or null when it no longer exists (rows may be deleted by hand, 09 §1). */
export async function loadSource(db: D1Database, kind: SourceKind, id: string): Promise<Source | null> {
  if (kind === "contact") {
    const row = await contactSource(db, id);
    return row === null
      ? null
      : {
          kind,
          id: row.contact_id,
          createdAt: row.created_at,
          isTest: row.self_reported_test !== 0,
          hasReplyChannel: row.has_reply_channel === 1,
          isFollowUp: row.is_follow_up === 1,
          text: row.summary,
        };
  }
  const row = await observationSource(db, id);
  return row === null
    ? null
    : {
        kind,
        id: row.observation_id,
        createdAt: row.created_at,
        isTest: row.self_reported_test !== 0,
        hasBlocker: row.has_blocker === 1,
        hasTried: row.has_tried === 1,
        text: row.goal,
      };
}
