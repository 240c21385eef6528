CREATE INDEX IF NOT EXISTS idx_notification_outbox_kind
  ON notification_outbox (source_kind, state, created_at);
