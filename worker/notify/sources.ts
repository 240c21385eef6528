/**
 * Reading the row a notification refers to (05 §5 step 10), at send time —
 * message text is never stored in the outbox. Only the columns a message may
 * use are selected: ids, timestamps, the test flag, presence booleans and the
 * one excerpt source (`summary` or `goal`). `reply_to`, `operator`,
 * `agent_identity`, `found_via` and client metadata are never read here.
 *
 * These are read-only SELECTs on tables the contacts and signals capabilities
 * write (09 §3); notify never writes to them, so a failed notification can
 * never alter a contact or an observation.
 */
import { first, statement } from "../storage/d1";
import type { SourceKind } from "./notification-queue";

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

interface ContactRow {
  contact_id: string;
  created_at: string;
  self_reported_test: number;
  has_reply_channel: number;
  is_follow_up: number;
  summary: string;
}

interface ObservationRow {
  observation_id: string;
  created_at: string;
  self_reported_test: number;
  has_blocker: number;
  has_tried: number;
  goal: string;
}

/** The source row, or null when it no longer exists (rows may be deleted by hand, 09 §1). */
export async function loadSource(db: D1Database, kind: SourceKind, id: string): Promise<Source | null> {
  if (kind === "contact") {
    const row = await first<ContactRow>(
      db,
      statement(
        `SELECT contact_id, created_at, self_reported_test,
                (reply_to IS NOT NULL AND reply_to <> '') AS has_reply_channel,
                (previous_contact_id IS NOT NULL AND previous_contact_id <> '') AS is_follow_up,
                summary
         FROM contacts WHERE contact_id = ?`,
        id,
      ),
    );
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
  const row = await first<ObservationRow>(
    db,
    statement(
      `SELECT observation_id, created_at, self_reported_test,
              (blocker IS NOT NULL AND blocker <> '') AS has_blocker,
              (tried IS NOT NULL AND tried <> '') AS has_tried,
              goal
       FROM observed_task_signals WHERE observation_id = ?`,
      id,
    ),
  );
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
