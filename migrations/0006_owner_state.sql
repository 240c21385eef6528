CREATE TABLE IF NOT EXISTS contact_owner_state (
  contact_id TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('pending', 'acknowledged', 'archived')),
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS owner_drafts (
  draft_id TEXT PRIMARY KEY,
  contact_id TEXT NOT NULL,
  body TEXT NOT NULL,
  revision INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_owner_drafts_contact
  ON owner_drafts (contact_id, updated_at DESC, draft_id DESC);
CREATE TABLE IF NOT EXISTS owner_oauth_spent (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('code', 'refresh', 'family')),
  expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_owner_oauth_spent_expiry
  ON owner_oauth_spent (expires_at);
