-- kerf schema v17: sign-in through an OpenID Connect provider (docs/contracts/teams.md,
-- "Single sign-on").
--
-- A user the provider created carries its `subject` (the issuer and the ID token's
-- `sub`, one per person and provider) and no usable password (`password_hash` = '',
-- which no password matches).
ALTER TABLE users ADD COLUMN subject TEXT;
CREATE UNIQUE INDEX users_subject ON users (subject) WHERE subject IS NOT NULL;

-- A session opened through the provider keeps what re-checks it: the provider's
-- tokens, sealed with the data dir's key and bound to the session, and when they were
-- last checked.
ALTER TABLE sessions ADD COLUMN sso_sealed BLOB;
ALTER TABLE sessions ADD COLUMN sso_checked_at INTEGER;

-- Sign-ins in flight: between the redirect to the provider and its answer. Keyed by
-- the SHA-256 of `state`; `browser_sha256` binds it to the browser that started it
-- (the SHA-256 of a cookie only that browser holds). Used once, then deleted.
CREATE TABLE sso_logins (
    state_sha256   TEXT    PRIMARY KEY,
    browser_sha256 TEXT    NOT NULL,
    nonce          TEXT    NOT NULL,
    pkce_verifier  TEXT    NOT NULL,
    redirect_uri   TEXT    NOT NULL,
    return_to      TEXT    NOT NULL,
    created_at     INTEGER NOT NULL
);

-- Provider groups and the roles they give, as set in the UI (those of the config
-- file are not stored). A fleet role, or a team role in a team.
CREATE TABLE sso_group_mappings (
    id         INTEGER PRIMARY KEY,
    group_name TEXT    NOT NULL,
    role       TEXT    CHECK (role IN ('admin', 'editor', 'viewer')),
    team_id    INTEGER REFERENCES teams (id) ON DELETE CASCADE,
    team_role  TEXT    CHECK (team_role IN ('team-admin', 'team-editor', 'team-viewer')),
    CHECK ((role IS NULL) <> (team_id IS NULL)),
    CHECK ((team_id IS NULL) = (team_role IS NULL))
);
