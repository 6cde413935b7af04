-- kerf schema v7: notifications. Channels (secrets only as a sealed blob, the target only
-- masked in clear), the rules that route events to them, each channel's weekly digest
-- schedule, the delivery log, and the dispatcher's cursors.

CREATE TABLE notification_channels (
    id               INTEGER PRIMARY KEY,
    name             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    type             TEXT    NOT NULL CHECK (type IN ('slack', 'teams', 'webhook', 'email')),
    -- A team's channel hears only about the team's namespaces; NULL = the whole fleet.
    -- Deleting the team deletes its channels (as it deletes its tokens).
    team_id          INTEGER REFERENCES teams (id) ON DELETE CASCADE,
    enabled          INTEGER NOT NULL DEFAULT 1,
    settings_json    TEXT    NOT NULL DEFAULT '{}',   -- non-secret settings (email server, recipients)
    target_masked    TEXT    NOT NULL,                -- where it goes, with secrets masked
    secrets_sealed   BLOB    NOT NULL,                -- URL, signing secret, SMTP password
    digest_enabled   INTEGER NOT NULL DEFAULT 1,
    digest_schedule  TEXT    NOT NULL,                -- cron, in digest_time_zone
    digest_time_zone TEXT    NOT NULL,                -- IANA name
    digest_last_slot INTEGER,                         -- slots at or before this are done (sent, or before the schedule was set), ms
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);

CREATE TABLE notification_rules (
    id          INTEGER PRIMARY KEY,
    channel_id  INTEGER NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1,
    match_json  TEXT    NOT NULL,   -- {"events","reasons","clusters","namespaces"}
    -- Only the namespaces of this team (a rule of a fleet channel may narrow to a team).
    team_id     INTEGER REFERENCES teams (id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX notification_rules_channel ON notification_rules (channel_id);

-- One message to one channel. seq orders the log; id is the delivery id receivers see
-- (X-Kerf-Delivery) and stays the same across retries; dedupe_key makes recording
-- idempotent (a digest slot, a failed run, a batch of audit rows is recorded once).
CREATE TABLE notification_deliveries (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    channel_id      INTEGER NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    kind            TEXT    NOT NULL CHECK (kind IN ('events', 'notice', 'digest', 'test')),
    dedupe_key      TEXT    NOT NULL UNIQUE,
    title           TEXT    NOT NULL,
    message_json    TEXT    NOT NULL,   -- the channel-independent message, rendered at send
    event_ids       TEXT    NOT NULL DEFAULT '[]',
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_status     INTEGER,            -- the receiver's HTTP status / SMTP code
    last_error      TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    delivered_at    INTEGER
);
CREATE INDEX notification_deliveries_due ON notification_deliveries (status, channel_id, next_attempt_at, seq);
CREATE INDEX notification_deliveries_channel ON notification_deliveries (channel_id, seq);

-- How far the dispatcher has read: 'audit' = audit_events.seq, 'runs' = runs.seq below
-- which every run has finished and been looked at. Starting at the current end, so an
-- upgrade does not replay the history.
CREATE TABLE notification_cursors (
    name     TEXT    PRIMARY KEY,
    position INTEGER NOT NULL
);
INSERT INTO notification_cursors (name, position)
    SELECT 'audit', COALESCE(MAX(seq), 0) FROM audit_events;
INSERT INTO notification_cursors (name, position)
    SELECT 'runs', COALESCE(MAX(seq), 0) FROM runs;
