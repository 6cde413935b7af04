-- kerf schema v11: workload lists sort every workload by its cost change and by risk.
-- `monthly_savings` becomes the signed saving (−cost_delta, 0 when unknown), so sorting
-- by savings orders the workloads that cost more too, instead of leaving them tied at 0.
-- `risk` ranks what a recommendation protects against: 3 OOM kill, 2 potential memory
-- leak, 1 requests raised (under-provisioned), 0 none.
ALTER TABLE workloads ADD COLUMN risk INTEGER NOT NULL DEFAULT 0;

UPDATE workloads SET monthly_savings = -COALESCE(cost_delta, 0.0);
UPDATE workloads SET risk = CASE
    WHEN has_changes = 0 THEN 0
    WHEN notices LIKE '%,oom-kill-detected,%' THEN 3
    WHEN notices LIKE '%,potential-memory-leak,%' THEN 2
    WHEN cost_delta > 0 THEN 1
    ELSE 0 END;

CREATE INDEX workloads_impact ON workloads (abs(monthly_savings), id);
CREATE INDEX workloads_risk ON workloads (risk, -monthly_savings, id);
