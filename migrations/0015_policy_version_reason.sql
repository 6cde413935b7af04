-- kerf schema v15: the reason typed with a policy change is kept with the version it made,
-- so the policy's Versions table can say why each version exists (issue 27). Versions
-- written before this keep the reason their configuration-audit row holds, where the
-- retention job has not removed that row yet.
ALTER TABLE policy_versions ADD COLUMN reason TEXT;

UPDATE policy_versions SET reason = (
    SELECT a.message FROM audit_events a
    WHERE a.type = 'config_changed'
      AND a.target_type = 'policy'
      AND a.target_id = CAST(policy_versions.policy_id AS TEXT)
      AND a.reason IN ('PolicyCreated', 'PolicyUpdated', 'PolicyReverted')
      AND json_extract(a.after_json, '$.version') = policy_versions.version
    ORDER BY a.seq DESC LIMIT 1
);
