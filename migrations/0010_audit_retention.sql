-- Audit retention (issue 18): rows are pruned by arrival time (an index for it, also
-- read in arrival order by `kerf audit export`), and every pruned workload event is
-- tallied by (cluster, type, reason) so kerf_actions_total keeps counting it.
CREATE INDEX audit_events_received ON audit_events (received_at_ms);

CREATE TABLE audit_pruned_counts (
    cluster TEXT    NOT NULL,
    type    TEXT    NOT NULL,
    reason  TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (cluster, type, reason)
) WITHOUT ROWID;
