/**
 * The observed-goal workflow (03 §7): after a search could read the corpus,
 * record the searched task privately — within the public-write budget, best
 * effort, awaited so telemetry is accurate.
 *
 * Seam for goal notifications (05): when TELEGRAM_GOAL_NOTIFICATIONS_ENABLED
 * lands, a non-test observation is written in one batch with its outbox row
 * (statement from notify/notification-queue.ts); until then the single insert
 * below is the only write mode.
 */
import { run } from "../storage/d1";
import { newObservationId, nowIso } from "../storage/ids";
import type { PublicWriteLimiter } from "../lib/tool-definition";
import { insertObservationStatement } from "./observations";
import type { SearchInput } from "./schemas";

export interface ObserveResult {
  saved: boolean;
  rateLimited: boolean;
}

export async function observeSearchedTask(
  db: D1Database,
  input: SearchInput,
  options: { controlledTest: boolean; checkPublicWrite: PublicWriteLimiter },
): Promise<ObserveResult> {
  const { limited } = await options.checkPublicWrite();
  if (limited) return { saved: false, rateLimited: true };
  const observation = {
    observationId: newObservationId(),
    createdAt: nowIso(),
    task: { goal: input.goal, blocker: input.blocker, tried: input.tried },
    // Smoke tests (controlled User-Agent) become test observations too.
    isTest: input.is_test === true || options.controlledTest,
  };
  try {
    await run(db, insertObservationStatement(observation));
    return { saved: true, rateLimited: false };
  } catch {
    // Best effort by design: the search result stands; telemetry says observed_task_saved: false.
    return { saved: false, rateLimited: false };
  }
}
