-- upgrade: rolling
-- Payload files uploaded with a scan template (`payloads: name: path/to/file.txt`): path as the
-- template names it → text. Stored with the template so a lease carries them; the empty object
-- for templates without files (older servers ignore the column).
alter table scan_templates add column payload_files jsonb not null default '{}'::jsonb;
