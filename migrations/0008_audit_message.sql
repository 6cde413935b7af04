-- The events contract stores a row's human-readable text in `message`: the agent
-- event's `message`, and for `config_changed` rows the user's reason.
ALTER TABLE audit_events ADD COLUMN message TEXT;
UPDATE audit_events SET message = json_extract(payload, '$.reason')
 WHERE type = 'config_changed';
UPDATE audit_events SET message = json_extract(payload, '$.message')
 WHERE type != 'config_changed';
