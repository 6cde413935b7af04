-- kerf schema v12: what kerf changed on each workload and is still live, folded from the
-- agents' applied and rolled_back events as they are stored (`runs::realized`), so the
-- workload pages show a change at once and the overview and digest count what it saved.
-- One row per workload with a live change; a workload whose requests are all back at
-- their baseline has none.
--   chain: JSON {baseline, inForce}: per container and resource the request before
--          kerf's first change and the one kerf set last (millicores, bytes).
--   applied_at, event_id, reason, approved_by, strategy, recommendation_id, containers:
--          the last applied event (its time, id, reason, who approved an ApprovedOnce,
--          how, which recommendation, and its containers [{name, from, to}] as sent).
--   realized_monthly: the monthly saving of the requests in force against the baseline,
--          priced when the last event was folded in (as runs price a recommendation).
--   updated_at: the time of the last event folded in (a rollback included).
CREATE TABLE live_changes (
    workload_id       TEXT    PRIMARY KEY REFERENCES workloads (id) ON DELETE CASCADE,
    chain             TEXT    NOT NULL,
    realized_monthly  REAL    NOT NULL,
    applied_at        INTEGER NOT NULL,
    event_id          TEXT    NOT NULL,
    reason            TEXT    NOT NULL,
    approved_by       TEXT,
    strategy          TEXT    NOT NULL,
    recommendation_id TEXT,
    containers        TEXT    NOT NULL,
    updated_at        INTEGER NOT NULL
);
