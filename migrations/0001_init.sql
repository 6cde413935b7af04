-- kerf schema v1: clusters, API tokens and the audit log.
-- Timestamps are INTEGER Unix milliseconds.

CREATE TABLE clusters (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL UNIQUE,
    token_sha256 TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    retired_at   INTEGER
);

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL,
    role         TEXT    NOT NULL,
    token_sha256 TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    revoked_at   INTEGER
);

-- One row per stored event. seq orders the log (newest = highest) and backs the
-- audit cursor; id is the sender's UUID and makes storage exactly-once.
-- config_changed rows (written by the hub itself) use actor/target/before/after.
CREATE TABLE audit_events (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT    NOT NULL UNIQUE,
    cluster           TEXT,
    type              TEXT    NOT NULL,
    reason            TEXT    NOT NULL,
    time_ms           INTEGER NOT NULL,
    received_at_ms    INTEGER NOT NULL,
    namespace         TEXT,
    kind              TEXT,
    name              TEXT,
    recommendation_id TEXT,
    payload           TEXT    NOT NULL,
    actor             TEXT,
    target_type       TEXT,
    target_id         TEXT,
    before_json       TEXT,
    after_json        TEXT
);

CREATE INDEX audit_events_cluster ON audit_events (cluster, seq);
CREATE INDEX audit_events_workload ON audit_events (namespace, kind, name, seq);
CREATE INDEX audit_events_type ON audit_events (type, reason, seq);
CREATE INDEX audit_events_recommendation ON audit_events (recommendation_id) WHERE recommendation_id IS NOT NULL;
