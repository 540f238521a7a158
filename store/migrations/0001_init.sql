-- 0001: the first schema. Migrations are forward-only: a later change is a
-- new numbered file, never an edit of this one.

-- One row per session: what ran, against what, and how it ended.
CREATE TABLE sessions (
    sid               INTEGER PRIMARY KEY,
    id                TEXT    NOT NULL UNIQUE,          -- public, time-ordered
    created_at        INTEGER NOT NULL,                 -- unix ms
    finished_at       INTEGER,                          -- unix ms
    status            TEXT    NOT NULL DEFAULT 'running'
                      CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    title             TEXT    NOT NULL DEFAULT '',
    scenario          TEXT    NOT NULL DEFAULT '',
    variant           TEXT    NOT NULL DEFAULT '',
    protocol          TEXT    NOT NULL DEFAULT '',
    provider          TEXT    NOT NULL DEFAULT '',
    model             TEXT    NOT NULL DEFAULT '',      -- the model asked for
    model_reported    TEXT    NOT NULL DEFAULT '',      -- the model the provider named
    base_url          TEXT    NOT NULL DEFAULT '',
    source            TEXT    NOT NULL DEFAULT '',      -- run, tui, proxy, har, ...
    modelwire_version TEXT    NOT NULL DEFAULT '',
    manifest          TEXT    NOT NULL DEFAULT '{}',    -- JSON, see store.Manifest
    turns             INTEGER NOT NULL DEFAULT 0,
    events            INTEGER NOT NULL DEFAULT 0,       -- timeline entries
    writer_pid        INTEGER NOT NULL DEFAULT 0,       -- who writes it while running
    writer_token      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_time ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_running ON sessions (status) WHERE status = 'running';

-- One row per HTTP attempt. Offsets (*_us) are monotonic microseconds from
-- the attempt's start; start_us is the attempt's start from the session's.
CREATE TABLE attempts (
    aid                INTEGER PRIMARY KEY,
    sid                INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    turn               INTEGER NOT NULL,
    attempt            INTEGER NOT NULL,
    protocol           TEXT    NOT NULL DEFAULT '',
    started_at         INTEGER NOT NULL,                -- unix ms
    start_us           INTEGER NOT NULL DEFAULT 0,
    method             TEXT    NOT NULL DEFAULT '',
    url                TEXT    NOT NULL DEFAULT '',     -- redacted
    request_headers    TEXT    NOT NULL DEFAULT '{}',   -- JSON, redacted
    request_body       BLOB,
    stream             INTEGER NOT NULL DEFAULT 0,
    retry_reason       TEXT    NOT NULL DEFAULT '',
    status_code        INTEGER NOT NULL DEFAULT 0,
    response_headers   TEXT    NOT NULL DEFAULT '{}',   -- JSON, redacted
    error              TEXT    NOT NULL DEFAULT '',     -- redacted
    state              TEXT    NOT NULL DEFAULT 'running'
                       CHECK (state IN ('running', 'done', 'failed', 'interrupted')),
    terminal_status    TEXT    NOT NULL DEFAULT '',
    stop_reason        TEXT    NOT NULL DEFAULT '',
    response_id        TEXT    NOT NULL DEFAULT '',
    response_model     TEXT    NOT NULL DEFAULT '',
    sent_us            INTEGER,
    first_byte_us      INTEGER,
    first_event_us     INTEGER,
    first_text_us      INTEGER,
    terminal_us        INTEGER,
    finished_us        INTEGER,
    input_tokens       INTEGER,
    output_tokens      INTEGER,
    cache_read_tokens  INTEGER,
    cache_write_tokens INTEGER,
    reasoning_tokens   INTEGER,
    provider_usage     TEXT,
    raw_events         INTEGER NOT NULL DEFAULT 0,
    first_seq          INTEGER,                         -- its first timeline entry
    last_seq           INTEGER,
    UNIQUE (sid, turn, attempt)
);

CREATE INDEX attempts_by_first_seq ON attempts (sid, first_seq);

-- The timeline. A chunk is a run of consecutive steps of one session (and
-- one attempt, or none for session-level entries) written by one commit.
-- steps is a JSON array of the steps, each
--   {"seq","turn","attempt","offset_us"[,"raw_index"],"events":[…]}
-- with the canonical events as emitted; raws holds the steps' raw events,
-- in raw_index order, verbatim: per event three uvarint-length-prefixed
-- strings (SSE event name, data, id). Packing steps keeps appends far above
-- stream rates, and replay reads the events without the raw bytes. The
-- (sid, seq) index finds the chunk holding any entry.
CREATE TABLE chunks (
    cid       INTEGER PRIMARY KEY,
    sid       INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,                         -- first entry in the chunk
    last_seq  INTEGER NOT NULL,
    aid       INTEGER REFERENCES attempts (aid) ON DELETE CASCADE,
    first_raw INTEGER,                                  -- raw_index of raws' first event
    steps     TEXT    NOT NULL,
    raws      BLOB,
    UNIQUE (sid, seq)
);
CREATE INDEX chunks_by_attempt ON chunks (aid, seq);

-- Tool calls: the proposal, the decision on it and the result sent back.
CREATE TABLE tool_calls (
    sid              INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    turn             INTEGER NOT NULL,
    call_id          TEXT    NOT NULL,
    name             TEXT    NOT NULL DEFAULT '',
    arguments        TEXT,                              -- as the model proposed them
    proposed_seq     INTEGER,
    decision         TEXT    NOT NULL DEFAULT ''
                     CHECK (decision IN ('', 'approved', 'edited', 'rejected', 'auto')),
    edited_arguments TEXT,
    reason           TEXT    NOT NULL DEFAULT '',
    decided_at       INTEGER,                           -- unix ms
    decision_seq     INTEGER,
    result           TEXT,
    is_error         INTEGER,
    result_at        INTEGER,                           -- unix ms
    result_seq       INTEGER,
    PRIMARY KEY (sid, turn, call_id)
);

-- Validation results, one row per layer per validation.
CREATE TABLE validations (
    sid    INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    ord    INTEGER NOT NULL,
    turn   INTEGER NOT NULL,
    layer  TEXT    NOT NULL,
    status TEXT    NOT NULL CHECK (status IN ('pass', 'fail', 'skip')),
    detail TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (sid, seq, ord)
);
