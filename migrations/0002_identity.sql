-- kerf schema v2: local users, sessions, teams with namespace patterns, team-scoped
-- tokens, and an index for the configuration audit (config_changed rows).

CREATE TABLE users (
    id                  INTEGER PRIMARY KEY,
    username            TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    display_name        TEXT    NOT NULL DEFAULT '',
    -- fleet role: admin, editor, viewer; NULL = team roles only
    role                TEXT CHECK (role IN ('admin', 'editor', 'viewer')),
    password_hash       TEXT    NOT NULL,
    disabled            INTEGER NOT NULL DEFAULT 0,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    password_changed_at INTEGER NOT NULL
);

-- Only the SHA-256 of a session id is stored; the id lives in the user's cookie.
CREATE TABLE sessions (
    id_sha256    TEXT    PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token   TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE teams (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    description TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- The namespaces a team owns: cluster and namespace patterns with `*` globs.
CREATE TABLE team_namespaces (
    team_id   INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    cluster   TEXT    NOT NULL,
    namespace TEXT    NOT NULL,
    PRIMARY KEY (team_id, cluster, namespace)
);

CREATE TABLE team_members (
    team_id INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role    TEXT    NOT NULL CHECK (role IN ('team-admin', 'team-editor', 'team-viewer')),
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

-- A token with a team role (team-admin/-editor/-viewer in api_tokens.role) names its
-- team; fleet-role tokens leave it NULL. Deleting the team deletes its tokens.
ALTER TABLE api_tokens ADD COLUMN team_id INTEGER REFERENCES teams (id) ON DELETE CASCADE;
ALTER TABLE api_tokens ADD COLUMN created_by TEXT;

CREATE INDEX audit_events_config_target ON audit_events (target_type, target_id, seq)
    WHERE type = 'config_changed';
