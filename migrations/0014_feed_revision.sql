-- kerf schema v14: the agents' feeds by change. Every write to a table the config or
-- recommendation feed is built from bumps one counter, so the hub tells in one read
-- whether a feed it computed is still current (`fleet::feed_cache`), and an agent that
-- already has version N gets only what changed since (docs/contracts/agent.md, "Feeds by
-- change"). A trigger, not the code paths that write: a write nobody remembered cannot
-- leave an agent on an old feed.
CREATE TABLE feed_revision (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL
);
INSERT INTO feed_revision (id, revision) VALUES (1, 0);

CREATE TRIGGER feed_approvals_i AFTER INSERT ON approvals BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_approvals_u AFTER UPDATE ON approvals BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_approvals_d AFTER DELETE ON approvals BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_automation_pauses_i AFTER INSERT ON automation_pauses BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_automation_pauses_u AFTER UPDATE ON automation_pauses BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_automation_pauses_d AFTER DELETE ON automation_pauses BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_cluster_datasources_i AFTER INSERT ON cluster_datasources BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_cluster_datasources_u AFTER UPDATE ON cluster_datasources BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_cluster_datasources_d AFTER DELETE ON cluster_datasources BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_clusters_i AFTER INSERT ON clusters BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_clusters_u AFTER UPDATE ON clusters BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_clusters_d AFTER DELETE ON clusters BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_policies_i AFTER INSERT ON policies BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_policies_u AFTER UPDATE ON policies BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_policies_d AFTER DELETE ON policies BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_policy_versions_i AFTER INSERT ON policy_versions BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_policy_versions_u AFTER UPDATE ON policy_versions BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_policy_versions_d AFTER DELETE ON policy_versions BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_settings_i AFTER INSERT ON settings BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_settings_u AFTER UPDATE ON settings BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_settings_d AFTER DELETE ON settings BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_workload_overrides_i AFTER INSERT ON workload_overrides BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_workload_overrides_u AFTER UPDATE ON workload_overrides BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_workload_overrides_d AFTER DELETE ON workload_overrides BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_workloads_i AFTER INSERT ON workloads BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_workloads_u AFTER UPDATE ON workloads BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_workloads_d AFTER DELETE ON workloads BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_recommendations_i AFTER INSERT ON recommendations BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_recommendations_u AFTER UPDATE ON recommendations BEGIN UPDATE feed_revision SET revision = revision + 1; END;
CREATE TRIGGER feed_recommendations_d AFTER DELETE ON recommendations BEGIN UPDATE feed_revision SET revision = revision + 1; END;
