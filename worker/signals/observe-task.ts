/**
 * The observed-goal workflow (03 §7): after a search could read the corpus,
 * record the searched task privately — within the public-write budget, best
 * effort, awaited so telemetry is accurate.
 *
 * Goal notifications (05): while TELEGRAM_GOAL_NOTIFICATIONS_ENABLED is on, a
 * non-test observation is written in one D1 batch with its outbox row
 * (statement of the outbox storage group), all or nothing — no fallback to the
 * observation alone. Otherwise the single insert is the only write mode.
 */
import type { Env } from "../config/env";
import { isOn } from "../config/flags";
import { batch, run } from "../storage/d1";
import { onStorageError } from "../storage/failure";
import { insertObservationStatement } from "../storage/observations/store";
import { enqueueObservationStatement } from "../storage/outbox/store";
import { newObservationId, nowIso } from "../storage/ids";
import type { PublicWriteLimiter } from "../lib/tool-definition";
import type { SearchInput } from "./schemas";

export interface ObserveResult {
  saved: boolean;
  rateLimited: boolean;
}

export async function observeSearchedTask(
  db: D1Database,
  input: SearchInput,
  options: { controlledTest: boolean; checkPublicWrite: PublicWriteLimiter; env: Env },
): Promise<ObserveResult> {
  const { limited } = await options.checkPublicWrite();
  if (limited) return { saved: false, rateLimited: true };
  const observation = {
    observationId: newObservationId(),
    createdAt: nowIso(),
    goal: input.goal,
    blocker: input.blocker ?? null,
    tried: input.tried ?? null,
    // Smoke tests (controlled User-Agent) become test observations too.
    isTest: input.is_test === true || options.controlledTest,
  };
  const insert = insertObservationStatement(observation);
  return onStorageError(
    async () => {
      if (!observation.isTest && options.env !== undefined && isOn(options.env, "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED")) {
        await batch(db, [insert, enqueueObservationStatement(observation.observationId, observation.createdAt)]);
      } else {
        await run(db, insert);
      }
      return { saved: true, rateLimited: false };
    },
    // Best effort by design: the search result stands; telemetry says observed_task_saved: false.
    () => ({ saved: false, rateLimited: false }),
  );
}
