-- Reports kept in replica-local built-in storage (DATA_DIR) are claimed only by a replica that
-- sees that directory (host:path); null = shared object storage, any replica may claim.
alter table report_ingestions add column storage_node text;
