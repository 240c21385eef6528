CREATE TABLE IF NOT EXISTS dialogues (
  dialogue_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  root_contact_id TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS dialogue_contacts (
  contact_id TEXT PRIMARY KEY,
  dialogue_id TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('root', 'follow_up')),
  joined_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_dialogue_contacts_dialogue
  ON dialogue_contacts (dialogue_id, joined_at DESC);
CREATE TABLE IF NOT EXISTS dialogue_replies (
  reply_id TEXT PRIMARY KEY,
  dialogue_id TEXT NOT NULL,
  contact_id TEXT NOT NULL,
  draft_id TEXT NOT NULL UNIQUE,
  draft_revision INTEGER NOT NULL,
  body TEXT NOT NULL,
  published_at TEXT NOT NULL,
  fetched_at TEXT
);
CREATE INDEX IF NOT EXISTS idx_dialogue_replies_unread
  ON dialogue_replies (dialogue_id, fetched_at, published_at, reply_id);
CREATE TABLE IF NOT EXISTS dialogue_owner_reads (
  contact_id TEXT PRIMARY KEY,
  read_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dialogue_fetch_attempts (
  key_hash TEXT NOT NULL,
  window_start TEXT NOT NULL,
  failures INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_hash, window_start)
);
