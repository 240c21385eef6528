/**
 * SQL of the private observed-demand table `observed_task_signals` (03 §7).
 * Only the minimal searched task and a test flag: no client, address, receipt
 * or any other identifier besides the opaque `observation_id`.
 */
import { statement, type Statement } from "../storage/d1";
import type { SearchInput } from "./schemas";

interface Observation {
  observationId: string;
  createdAt: string;
  task: Pick<SearchInput, "goal" | "blocker" | "tried">;
  isTest: boolean;
}

export function insertObservationStatement(observation: Observation): Statement {
  return statement(
    `INSERT INTO observed_task_signals (observation_id, created_at, goal, blocker, tried, self_reported_test)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(observation_id) DO NOTHING`,
    observation.observationId,
    observation.createdAt,
    observation.task.goal,
    observation.task.blocker ?? null,
    observation.task.tried ?? null,
    observation.isTest ? 1 : 0,
  );
}
