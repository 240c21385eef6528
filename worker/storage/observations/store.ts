/** Runs the `observations` group's statements (./sql.ts); readers throw `StorageError`. */
import { all, first } from "../d1";
import { observationSourceStatement, observedGoalPageStatement, type ObservationSourceRow, type ObservedGoalPageQuery, type ObservedGoalRow } from "./sql";

export type { ObservationInsertRow, ObservationSourceRow, ObservedGoalPageQuery, ObservedGoalRow } from "./sql";
export { insertObservationStatement } from "./sql";

/** The notification's view of an observation, or null when the row no longer exists. */
export function observationSource(db: D1Database, observationId: string): Promise<ObservationSourceRow | null> {
  return first<ObservationSourceRow>(db, observationSourceStatement(observationId));
}

export function observedGoalPage(db: D1Database, query: ObservedGoalPageQuery): Promise<ObservedGoalRow[]> {
  return all<ObservedGoalRow>(db, observedGoalPageStatement(query));
}
