/**
 * Shared memory (03): `search_shared_experience` and `contribute_task_signal`.
 * What other layers may use.
 *
 * - schemas.ts           strict inputs
 * - tokenize.ts, stopwords.ts, matcher.ts   the pure literal matcher
 * - candidate-tokens.ts  the lists candidates are matched on: held between searches, or computed for legacy rows (03 §5.6)
 * - window-index.ts      each cohort's inverted index of those lists: one probe per query token
 * - signal-store.ts      the corpus SQL and insert-once of contributions
 * - observations.ts, observe-task.ts        the private observed-goal record
 * - search-tool.ts, contribute-tool.ts      results and telemetry
 */
export { searchTool } from "./search-tool";
export { contributeTool } from "./contribute-tool";
export { contributeInputSchema, searchInputSchema } from "./schemas";
