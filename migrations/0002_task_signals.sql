CREATE TABLE IF NOT EXISTS task_signals (
  signal_id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  goal TEXT NOT NULL,
  blocker TEXT,
  tried TEXT,
  learned TEXT,
  submission_id TEXT NOT NULL UNIQUE,
  payload_hash TEXT NOT NULL,
  self_reported_test INTEGER NOT NULL DEFAULT 0 CHECK (self_reported_test IN (0, 1)),
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'hidden'))
);
CREATE INDEX IF NOT EXISTS idx_task_signals_search
  ON task_signals (self_reported_test, status, created_at DESC, signal_id DESC);
