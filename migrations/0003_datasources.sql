-- kerf schema v3: datasources (secrets sealed, never in settings_json) and the
-- datasource each cluster points at.

CREATE TABLE datasources (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL UNIQUE,
    type           TEXT    NOT NULL,
    settings_json  TEXT    NOT NULL,
    secrets_sealed BLOB    NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);

CREATE TABLE cluster_datasources (
    cluster_id    INTEGER PRIMARY KEY REFERENCES clusters(id),
    datasource_id INTEGER NOT NULL REFERENCES datasources(id),
    updated_at    INTEGER NOT NULL
);

CREATE INDEX cluster_datasources_by_datasource ON cluster_datasources(datasource_id);
