-- kerf schema v4: recommendation runs, workloads, recommendations and hub settings.
-- Timestamps are INTEGER Unix milliseconds. Big engine output is one compact JSON TEXT
-- per recommendation; lists and filters read the small denormalized columns only.

-- Settings users change at runtime (recommender, pricing), one JSON document per key.
CREATE TABLE settings (
    key        TEXT    PRIMARY KEY,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);

-- One row per run of one cluster. seq orders runs (newest = highest) and backs cursors.
CREATE TABLE runs (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    id                  TEXT    NOT NULL UNIQUE,
    cluster             TEXT    NOT NULL,
    trigger             TEXT    NOT NULL,          -- scheduled | manual
    status              TEXT    NOT NULL,          -- running | succeeded | partial | failed
    phase               TEXT    NOT NULL,          -- collect | analyze | store | done
    started_at          INTEGER NOT NULL,
    finished_at         INTEGER,
    window_start        INTEGER NOT NULL,
    window_end          INTEGER NOT NULL,
    settings_identity   TEXT    NOT NULL,
    workloads_total     INTEGER NOT NULL DEFAULT 0,
    workloads_done      INTEGER NOT NULL DEFAULT 0,
    workloads_failed    INTEGER NOT NULL DEFAULT 0,
    workloads_stale     INTEGER NOT NULL DEFAULT 0,
    recommendations     INTEGER NOT NULL DEFAULT 0,
    phase_ms            TEXT    NOT NULL DEFAULT '{}',   -- {"collect":..,"analyze":..,"store":..}
    collect_stats       TEXT    NOT NULL DEFAULT '{}',
    errors              TEXT    NOT NULL DEFAULT '[]'    -- [{"workload"?, "message"}]
);

CREATE INDEX runs_cluster ON runs (cluster, seq);
CREATE INDEX runs_status ON runs (status, seq);
CREATE INDEX runs_started ON runs (started_at);

-- A workload, stable across runs: id = hash of (cluster, namespace, kind, name).
-- The latest_* columns mirror the latest recommendation for filters and sorts.
CREATE TABLE workloads (
    id                  TEXT    PRIMARY KEY,
    cluster             TEXT    NOT NULL,
    namespace           TEXT    NOT NULL,
    kind                TEXT    NOT NULL,
    name                TEXT    NOT NULL,
    uid                 TEXT    NOT NULL DEFAULT '',
    replicas            INTEGER,
    labels              TEXT    NOT NULL DEFAULT '{}',
    current             TEXT    NOT NULL DEFAULT '[]',   -- per container requests/limits in force
    first_seen_at       INTEGER NOT NULL,
    last_seen_at        INTEGER NOT NULL,
    last_run_id         TEXT    NOT NULL,
    stale               INTEGER NOT NULL DEFAULT 0,
    stale_reason        TEXT,
    stale_since         INTEGER,
    latest_rec_id       TEXT,
    has_changes         INTEGER NOT NULL DEFAULT 0,      -- latest recommendation suggests a change
    data_quality        TEXT,                            -- worst status of the latest one
    notices             TEXT    NOT NULL DEFAULT '',     -- ",a,b," for LIKE '%,a,%'
    confidence          INTEGER NOT NULL DEFAULT -1,     -- lowest confidence; -1 = none
    cost_delta          REAL,                            -- monthly; NULL = unknown
    monthly_savings     REAL    NOT NULL DEFAULT 0,      -- max(0, -cost_delta), sort key
    UNIQUE (cluster, namespace, kind, name)
);

CREATE INDEX workloads_name ON workloads (name, id);
CREATE INDEX workloads_savings ON workloads (monthly_savings, id);
CREATE INDEX workloads_confidence ON workloads (confidence, id);
CREATE INDEX workloads_cluster ON workloads (cluster, namespace, name);

CREATE TABLE recommendations (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT    NOT NULL UNIQUE,
    workload_id       TEXT    NOT NULL,
    run_id            TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    policy_version    TEXT    NOT NULL,
    settings_identity TEXT    NOT NULL,
    cost_delta        REAL,
    summary           TEXT    NOT NULL,   -- values per container × resource (small)
    analysis          TEXT    NOT NULL    -- the engine's results for the workload, whole
);

CREATE INDEX recommendations_workload ON recommendations (workload_id, seq);
CREATE INDEX recommendations_created ON recommendations (created_at);
CREATE INDEX workloads_latest ON workloads (latest_rec_id);
