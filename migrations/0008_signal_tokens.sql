CREATE TABLE IF NOT EXISTS task_signal_tokens (
  signal_id TEXT PRIMARY KEY,
  tokenizer_version INTEGER NOT NULL,
  tokens TEXT NOT NULL
);
