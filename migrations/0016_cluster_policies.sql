-- kerf schema v16: the RightsizingPolicy objects of each cluster, as its agent reports
-- them (docs/contracts/policy.md, "Policies from the cluster"). One row per object
-- name: `spec` is the document in force (the last valid generation, NULL while none
-- was), `generation` the latest the agent saw and `errors` what is wrong with it (NULL
-- when it is the one in force). They take part in resolution for that cluster's
-- workloads, ahead of the hub's policies; every change reaches the agents' feeds.
CREATE TABLE cluster_policies (
    id                  INTEGER PRIMARY KEY,
    cluster             TEXT    NOT NULL,
    name                TEXT    NOT NULL,
    uid                 TEXT    NOT NULL,
    generation          INTEGER NOT NULL,
    accepted_generation INTEGER,
    spec                TEXT,
    errors              TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (cluster, name)
);

CREATE TRIGGER feed_cluster_policies_i AFTER INSERT ON cluster_policies BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_cluster_policies_u AFTER UPDATE ON cluster_policies BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_cluster_policies_d AFTER DELETE ON cluster_policies BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
