CREATE TABLE IF NOT EXISTS observed_task_signals (
  observation_id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  goal TEXT NOT NULL,
  blocker TEXT,
  tried TEXT,
  self_reported_test INTEGER NOT NULL DEFAULT 0 CHECK (self_reported_test IN (0, 1))
);
CREATE INDEX IF NOT EXISTS idx_observed_task_signals_review
  ON observed_task_signals (self_reported_test, created_at DESC, observation_id DESC);
