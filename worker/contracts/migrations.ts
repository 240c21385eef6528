/**
 * Migration file names (09 §3). The CLI checks `migrations/` against this list
 * and `migrations/checksums.json`; the Worker names the migration an operator
 * must apply when a table is missing.
 */
export const MIGRATION_FILES = [
  "0001_contacts.sql",
  "0002_task_signals.sql",
  "0003_observed_task_signals.sql",
  "0004_owner_notifications.sql",
  "0005_goal_notifications.sql",
  "0006_owner_state.sql",
  "0007_dialogue.sql",
  "0008_signal_tokens.sql",
] as const;

export const MIGRATION_FOR_TABLE = {
  contacts: "0001_contacts.sql",
  task_signals: "0002_task_signals.sql",
  observed_task_signals: "0003_observed_task_signals.sql",
  notification_state: "0004_owner_notifications.sql",
  notification_outbox: "0004_owner_notifications.sql",
  contact_owner_state: "0006_owner_state.sql",
  owner_drafts: "0006_owner_state.sql",
  owner_oauth_spent: "0006_owner_state.sql",
  dialogues: "0007_dialogue.sql",
  dialogue_contacts: "0007_dialogue.sql",
  dialogue_replies: "0007_dialogue.sql",
  dialogue_owner_reads: "0007_dialogue.sql",
  dialogue_fetch_attempts: "0007_dialogue.sql",
  task_signal_tokens: "0008_signal_tokens.sql",
} as const;

/** The D1 binding name every config and Wrangler command uses. */
export const D1_BINDING = "CONTACTS";
/** The placeholder id production configs ship with until the operator commits the real one (00 §3). */
export const PLACEHOLDER_DATABASE_ID = "00000000-0000-0000-0000-000000000000";
/** The fixed id of the local database, so the local SQLite file never moves. */
export const LOCAL_DATABASE_ID = "00000000-0000-4000-8000-000000000001";
