CREATE TABLE IF NOT EXISTS notification_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  activated_at TEXT NOT NULL,
  owner_chat_hash TEXT,
  lease_id TEXT,
  lease_expires_at TEXT,
  backoff_until TEXT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notification_outbox (
  outbox_id TEXT PRIMARY KEY,
  source_kind TEXT NOT NULL CHECK (source_kind IN ('contact', 'observation')),
  source_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'retry_wait', 'delivered', 'failed', 'skipped')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  last_attempt_at TEXT,
  last_error_code TEXT,
  last_http_status INTEGER,
  delivered_at TEXT,
  telegram_message_id INTEGER,
  UNIQUE (source_kind, source_id)
);
CREATE INDEX IF NOT EXISTS idx_notification_outbox_due
  ON notification_outbox (state, next_attempt_at, created_at, outbox_id);
CREATE INDEX IF NOT EXISTS idx_contacts_notify
  ON contacts (self_reported_test, created_at, contact_id);
