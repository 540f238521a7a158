-- 0006: the request's reasoning setting, which the chapter groups
-- comparisons by (13.7.1), read from the request body by the protocol's
-- descriptor when the attempt is recorded ("effort=high",
-- "type=enabled budget_tokens=2048"); "" when the body sets none (the
-- provider's default). NULL: recorded before, or known without its body.
ALTER TABLE attempts ADD COLUMN reasoning_setting TEXT;
