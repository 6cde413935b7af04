-- kerf usage store v1 (usage.db): series, their XOR chunks, and the series refused.
-- Timestamps are INTEGER Unix milliseconds.

-- One row per series: a cluster and its full label set, as canonical text
-- metric{a="x",b="y"} (names sorted, empty values dropped). The metric name and the
-- namespace and pod labels ('' when absent) have columns of their own because most reads
-- filter by them. Ids are never reused: a chunk's id is derived from its series' id.
-- chunks, samples and bytes (of chunk data) are the series' totals, kept as appends and
-- prunes change them, so a cluster's size is read from this table, not its chunks.
CREATE TABLE series (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    cluster   TEXT    NOT NULL,
    labels    TEXT    NOT NULL,
    metric    TEXT    NOT NULL,
    namespace TEXT    NOT NULL,
    pod       TEXT    NOT NULL,
    first_ms  INTEGER NOT NULL,
    last_ms   INTEGER NOT NULL,
    chunks    INTEGER NOT NULL,
    samples   INTEGER NOT NULL,
    bytes     INTEGER NOT NULL,
    UNIQUE (cluster, labels)
);
CREATE INDEX series_by_metric ON series (cluster, metric, namespace, pod);

-- One Prometheus XOR chunk per series and 2-hour slot aligned to the Unix epoch. The id
-- is series_id * 2^24 + slot number (slot start / 7,200,000 ms), so the table's own
-- b-tree orders chunks by series, then time, and no second index is paid for: a
-- series' chunks in a window, its latest chunk and prune's sweep are rowid ranges.
-- Only a series' latest slot is ever appended to.
CREATE TABLE chunks (
    id        INTEGER PRIMARY KEY,
    series_id INTEGER GENERATED ALWAYS AS (id >> 24) VIRTUAL,
    slot      INTEGER GENERATED ALWAYS AS ((id & 16777215) * 7200000) VIRTUAL,
    min_ms    INTEGER NOT NULL,
    max_ms    INTEGER NOT NULL,
    samples   INTEGER NOT NULL,
    data      BLOB    NOT NULL
);

-- Series refused whole (bad labels, past the cluster's series limit), a bounded list
-- per cluster, so a cluster's readiness can name them.
CREATE TABLE refused_series (
    cluster  TEXT    NOT NULL,
    labels   TEXT    NOT NULL,
    reason   TEXT    NOT NULL,
    samples  INTEGER NOT NULL,
    first_ms INTEGER NOT NULL,
    last_ms  INTEGER NOT NULL,
    PRIMARY KEY (cluster, labels)
) WITHOUT ROWID;
