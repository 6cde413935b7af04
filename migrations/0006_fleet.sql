-- kerf schema v6: fleet configuration. Cluster metadata and the cluster-wide freeze,
-- automation pauses (per cluster or the whole fleet), agent heartbeats, datasource
-- checks and the readiness state each cluster is in. (Version 5 is the policies half.)

ALTER TABLE clusters ADD COLUMN display_name     TEXT    NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN description      TEXT    NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN labels           TEXT    NOT NULL DEFAULT '{}';
ALTER TABLE clusters ADD COLUMN updated_at       INTEGER;
ALTER TABLE clusters ADD COLUMN token_rotated_at INTEGER;
ALTER TABLE clusters ADD COLUMN frozen           INTEGER NOT NULL DEFAULT 0;
ALTER TABLE clusters ADD COLUMN freeze_reason    TEXT;
ALTER TABLE clusters ADD COLUMN frozen_at        INTEGER;
ALTER TABLE clusters ADD COLUMN freeze_until     INTEGER;

-- One row per paused scope: a cluster name, or '*' for the whole fleet.
CREATE TABLE automation_pauses (
    scope      TEXT    PRIMARY KEY,
    reason     TEXT    NOT NULL,
    paused_at  INTEGER NOT NULL,
    paused_by  TEXT    NOT NULL,   -- the actor, JSON
    resume_at  INTEGER
);

CREATE INDEX automation_pauses_resume ON automation_pauses (resume_at)
    WHERE resume_at IS NOT NULL;

-- The latest heartbeat of each cluster's agent.
CREATE TABLE cluster_heartbeats (
    cluster_id         INTEGER PRIMARY KEY REFERENCES clusters(id),
    received_at        INTEGER NOT NULL,
    agent_version      TEXT    NOT NULL,
    kubernetes_version TEXT    NOT NULL,
    capabilities       TEXT    NOT NULL DEFAULT '{}'
);

-- The latest datasource check of each cluster (reachable, metrics present).
CREATE TABLE cluster_datasource_checks (
    cluster_id      INTEGER PRIMARY KEY REFERENCES clusters(id),
    checked_at      INTEGER NOT NULL,
    reachable       INTEGER NOT NULL,
    missing_metrics TEXT    NOT NULL DEFAULT '[]',
    message         TEXT    NOT NULL
);

-- The readiness each cluster is in now; changes are audited as ReadinessChanged.
CREATE TABLE cluster_readiness (
    cluster_id   INTEGER PRIMARY KEY REFERENCES clusters(id),
    state        TEXT    NOT NULL,   -- ready | degraded | not-ready
    reasons      TEXT    NOT NULL DEFAULT '[]',
    checks       TEXT    NOT NULL DEFAULT '{}',
    since        INTEGER NOT NULL,
    evaluated_at INTEGER NOT NULL
);

INSERT INTO cluster_readiness (cluster_id, state, reasons, checks, since, evaluated_at)
SELECT id, 'not-ready', '["no agent heartbeat received yet"]', '{}', created_at, created_at
FROM clusters;
