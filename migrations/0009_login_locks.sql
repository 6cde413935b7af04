-- Login locks kept across restarts (issue 18): a lock of one account for one client
-- address, or (account = '') of one address for every account. Rows past until_ms are
-- dead and pruned whenever a lock is written.
CREATE TABLE login_locks (
    account  TEXT    NOT NULL,
    address  TEXT    NOT NULL,
    until_ms INTEGER NOT NULL,
    PRIMARY KEY (account, address)
) WITHOUT ROWID;
