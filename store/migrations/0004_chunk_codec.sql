-- 0004: compressed chunk rows. Appending is bound by the bytes SQLite
-- writes (each page to the WAL, then again by the checkpoint), and a
-- chunk's steps and raw events are repetitive: the same keys, event names
-- and ids in every step. codec 0 is the form 0001 describes; codec 1 is
-- the same steps text and raws bytes, each compressed as one S2 block
-- (github.com/klauspost/compress/s2, the Snappy block format extended),
-- about a ninth of the bytes. Rows written before keep codec 0 and read as
-- they are. The content search decompresses steps through the SQL function
-- modelwire_chunk_steps(steps, codec), registered by the store package.
ALTER TABLE chunks ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;
