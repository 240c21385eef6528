/**
 * `owner_list_observed_goals` (06 §6.2): the searched tasks, newest first,
 * paged by keyset, visitor text labelled. Reads only, through the
 * `observations` storage group; a storage fault is `storage_error`.
 */
import { OBSERVATION_ID_PATTERN } from "../contracts/ids";
import { onStorageError } from "../storage/failure";
import { observedGoalPage } from "../storage/observations/store";
import { storageFailure, type ListResult } from "./contacts";
import { keysetPage } from "./paging";
import { labelVisitorContent, type VisitorContent } from "./visitor-content";

export interface ListObservedGoalsQuery {
  readonly includeTests?: boolean;
  readonly since?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

type GoalVisitorFields = { goal: string | null; blocker: string | null; tried: string | null };

export interface ObservedGoalItem {
  readonly observation_id: string;
  readonly observed_at: string;
  readonly self_reported_test: boolean;
  readonly visitor_content: VisitorContent<GoalVisitorFields>;
}

export async function listObservedGoals(db: D1Database, query: ListObservedGoalsQuery): Promise<ListResult<ObservedGoalItem>> {
  return onStorageError(async (): Promise<ListResult<ObservedGoalItem>> => {
    const page = await keysetPage(
      { cursor: query.cursor, limit: query.limit, idPattern: OBSERVATION_ID_PATTERN },
      (after, limit) => observedGoalPage(db, { includeTests: query.includeTests ?? false, since: query.since ?? null, after, limit }),
      (row) => ({ createdAt: row.created_at, id: row.observation_id }),
    );
    if (page.status !== "ok") return page;
    return {
      status: "ok",
      items: page.rows.map((row) => ({
        observation_id: row.observation_id,
        observed_at: row.created_at,
        self_reported_test: row.self_reported_test === 1,
        visitor_content: labelVisitorContent({ goal: row.goal, blocker: row.blocker, tried: row.tried }),
      })),
      next_cursor: page.next_cursor,
    };
  }, storageFailure);
}
