-- 0005: the chapter's six time points per attempt (13.7.1), a figure the
-- provider reports of its own time, and the billing buckets 0001 had no
-- column for (13.7.3). The points, as offsets from the attempt's start:
-- sent_us (the request's start), first_byte_us (the first response: the
-- status line and headers arrived, not the first body byte; the name is
-- 0001's), first_event_us, first_token_us (new: the first observable
-- output token, reasoning and tool arguments included), first_text_us
-- (the first visible text), terminal_us. server_us is the provider's own
-- figure and server_source the header it came from: another clock with
-- another starting point, never one of the client's points. A row
-- written before has NULL for each new column: not measured.
ALTER TABLE attempts ADD COLUMN first_token_us INTEGER;
ALTER TABLE attempts ADD COLUMN server_us INTEGER;
ALTER TABLE attempts ADD COLUMN server_source TEXT;
-- The part of cache_write_tokens written for an hour (Anthropic prices
-- it above the 5-minute writes), and server-side tool calls billed per
-- call (web searches).
ALTER TABLE attempts ADD COLUMN cache_write_1h_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN web_search_calls INTEGER;
