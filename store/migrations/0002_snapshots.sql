-- 0002: reducer snapshots. Rebuilding the state at an entry in the middle
-- of a long response replays its canonical events through the reducer;
-- without snapshots that starts at the response's start. Every few
-- hundred entries of a response (at the end of a step) the writer keeps
-- the reducer's state, so that a replay starts a bounded number of
-- entries before any entry. See store/snapshot.go.
--
-- A row holds what changed since the previous row of its level: state is
-- JSON (the reducer's scalars, the items whose fields changed, the
-- diagnostics added), text the bytes the changed items' texts gained,
-- concatenated. Each byte of text is therefore kept once per level, not
-- once per snapshot. Level 0 has a row at every snapshot, each higher
-- level at every n-th row of the level below, so that restoring folds a
-- few rows per level instead of every row since the response's start.
CREATE TABLE snapshots (
    aid   INTEGER NOT NULL REFERENCES attempts (aid) ON DELETE CASCADE,
    level INTEGER NOT NULL,
    seq   INTEGER NOT NULL,                 -- the timeline entry it is the state after
    state TEXT    NOT NULL,
    text  BLOB,
    UNIQUE (aid, level, seq)
);

-- 1: the attempt's snapshots were kept while it was written (every
-- attempt written from schema 2 on). 0: written before, without
-- snapshots; a writable handle adds them the first time it needs them.
ALTER TABLE attempts ADD COLUMN snapshots INTEGER NOT NULL DEFAULT 0;
