-- kerf schema v14: the agents' feeds by change. Every write to a table the config or
-- recommendation feed is built from adds a row here: the workload it touched, or NULL
-- when it may touch every workload's entry (a policy, a pause, the settings...). The hub
-- tells in one read whether a feed it built is still current and, when only some
-- workloads changed, rebuilds only their entries (`fleet::feed_cache`); an agent that
-- holds version N gets only what changed since (docs/contracts/agent.md, "Feeds by
-- change"). Triggers, not the code paths that write: a write nobody remembered cannot
-- leave an agent on an old feed. The retention job keeps the newest rows only.
CREATE TABLE feed_changes (
    revision    INTEGER PRIMARY KEY AUTOINCREMENT,
    workload_id TEXT
);

CREATE TRIGGER feed_workloads_i AFTER INSERT ON workloads BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.id); END;
CREATE TRIGGER feed_workloads_u AFTER UPDATE ON workloads BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.id); END;
CREATE TRIGGER feed_workloads_d AFTER DELETE ON workloads BEGIN INSERT INTO feed_changes (workload_id) VALUES (OLD.id); END;
CREATE TRIGGER feed_recommendations_i AFTER INSERT ON recommendations BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.workload_id); END;
CREATE TRIGGER feed_recommendations_u AFTER UPDATE ON recommendations BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.workload_id); END;
CREATE TRIGGER feed_recommendations_d AFTER DELETE ON recommendations BEGIN INSERT INTO feed_changes (workload_id) VALUES (OLD.workload_id); END;
CREATE TRIGGER feed_approvals_i AFTER INSERT ON approvals BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.workload_id); END;
CREATE TRIGGER feed_approvals_u AFTER UPDATE ON approvals BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.workload_id); END;
CREATE TRIGGER feed_approvals_d AFTER DELETE ON approvals BEGIN INSERT INTO feed_changes (workload_id) VALUES (OLD.workload_id); END;
CREATE TRIGGER feed_workload_overrides_i AFTER INSERT ON workload_overrides BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.workload_id); END;
CREATE TRIGGER feed_workload_overrides_u AFTER UPDATE ON workload_overrides BEGIN INSERT INTO feed_changes (workload_id) VALUES (NEW.workload_id); END;
CREATE TRIGGER feed_workload_overrides_d AFTER DELETE ON workload_overrides BEGIN INSERT INTO feed_changes (workload_id) VALUES (OLD.workload_id); END;
CREATE TRIGGER feed_automation_pauses_i AFTER INSERT ON automation_pauses BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_automation_pauses_u AFTER UPDATE ON automation_pauses BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_automation_pauses_d AFTER DELETE ON automation_pauses BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_cluster_datasources_i AFTER INSERT ON cluster_datasources BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_cluster_datasources_u AFTER UPDATE ON cluster_datasources BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_cluster_datasources_d AFTER DELETE ON cluster_datasources BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_clusters_i AFTER INSERT ON clusters BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_clusters_u AFTER UPDATE ON clusters BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_clusters_d AFTER DELETE ON clusters BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_policies_i AFTER INSERT ON policies BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_policies_u AFTER UPDATE ON policies BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_policies_d AFTER DELETE ON policies BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_policy_versions_i AFTER INSERT ON policy_versions BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_policy_versions_u AFTER UPDATE ON policy_versions BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_policy_versions_d AFTER DELETE ON policy_versions BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_settings_i AFTER INSERT ON settings BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_settings_u AFTER UPDATE ON settings BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
CREATE TRIGGER feed_settings_d AFTER DELETE ON settings BEGIN INSERT INTO feed_changes (workload_id) VALUES (NULL); END;
