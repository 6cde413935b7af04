-- kerf schema v13: an approval outlives the run that superseded its recommendation when
-- the new one asks for the same values within the workload's change tolerance (it is
-- carried over to it: `recommendation_id` moves, `carried_at` says when); otherwise it
-- lapses, with the reason (`lapsed_at`, `lapse_reason`), and is shown as lapsed instead
-- of being dropped without a word.
ALTER TABLE approvals ADD COLUMN carried_at INTEGER;
ALTER TABLE approvals ADD COLUMN lapsed_at INTEGER;
ALTER TABLE approvals ADD COLUMN lapse_reason TEXT;
