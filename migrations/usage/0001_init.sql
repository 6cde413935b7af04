-- kerf usage store v1 (usage.db): series, their XOR chunks, and the series refused.
-- Timestamps are INTEGER Unix milliseconds. The file is made with auto_vacuum =
-- INCREMENTAL before this runs (it must precede every table): prune gives pages back.

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

-- One Prometheus XOR chunk per series and 2-hour slot aligned to the Unix epoch, in one
-- of two tables. The id is slot number (slot start / 7,200,000 ms) * 2^32 + series id
-- (series ids stay below 2^32): time first, so chunks closed slot by slot are written
-- at the end of `chunks`, whose pages fill up and are never written again; a series'
-- chunk of a slot is found by its id. No other column: times and counts are in the
-- chunk (its header counts the samples, its first sample starts it).
-- `chunks` holds the closed chunks and `open_chunks` the open ones, rewritten as they
-- grow; every id in `chunks` is below every id in `open_chunks`, so the border between
-- them is MAX(chunks.id) + 1 and a chunk has one place (`store::usage::chunks`).
CREATE TABLE chunks (
    id   INTEGER PRIMARY KEY,
    data BLOB    NOT NULL
);
CREATE TABLE open_chunks (
    id   INTEGER PRIMARY KEY,
    data BLOB    NOT NULL
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
