-- kerf schema v5: RightsizingPolicies with their version history, per-workload overrides
-- and one-time approvals. Timestamps are INTEGER Unix milliseconds.

-- A policy; its content lives in policy_versions. A soft-deleted policy keeps its row
-- and history (deleted_at set); its name is free again for a new policy.
CREATE TABLE policies (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    version     INTEGER NOT NULL,            -- the current version (policy_versions.version)
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER
);

CREATE UNIQUE INDEX policies_live_name ON policies (name) WHERE deleted_at IS NULL;

-- Every version of every policy, 1, 2, 3… with no gaps: each write appends one.
CREATE TABLE policy_versions (
    policy_id   INTEGER NOT NULL REFERENCES policies(id),
    version     INTEGER NOT NULL,
    spec        TEXT    NOT NULL,            -- the PolicySpec JSON
    created_at  INTEGER NOT NULL,
    actor       TEXT    NOT NULL,            -- the audit actor JSON
    change      TEXT    NOT NULL,            -- created | updated | reverted | deleted
    PRIMARY KEY (policy_id, version)
);

-- At most one override per workload.
CREATE TABLE workload_overrides (
    workload_id TEXT    PRIMARY KEY,
    spec        TEXT    NOT NULL,            -- the OverrideSpec JSON
    expires_at  INTEGER,
    created_at  INTEGER NOT NULL,
    actor       TEXT    NOT NULL
);

-- One-time approvals of a recommendation of an audit-mode workload. Consumed when the
-- agent reports `applied ApprovedOnce` with details.approvalId.
CREATE TABLE approvals (
    id                 TEXT    PRIMARY KEY,
    workload_id        TEXT    NOT NULL,
    recommendation_id  TEXT    NOT NULL,
    actor              TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,
    consumed_at        INTEGER,
    consumed_by_event  TEXT
);

CREATE INDEX approvals_workload ON approvals (workload_id, created_at);
-- One approval per recommendation, ever: a consumed one cannot be approved again.
CREATE UNIQUE INDEX approvals_recommendation ON approvals (recommendation_id);
