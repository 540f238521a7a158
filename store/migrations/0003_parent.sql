-- 0003: a session can name the session it was made from (the workbench's
-- edit-and-resend, a fork): the id of that parent, '' for none. An id, not
-- a foreign key: the parent may be deleted, or live in another database,
-- and the child stays readable.
ALTER TABLE sessions ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
