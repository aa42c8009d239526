-- Encryption-key rotation (npm run admin -- reseal-secrets): the service role re-seals every
-- sealed column under the current APP_ENCRYPTION_KEY. It may rewrite the sealed columns and
-- nothing else of these rows.
grant update (access_key_id_sealed, secret_access_key_sealed) on tenant_storage_settings to rampart_service;
create policy tenant_storage_settings_service_reseal on tenant_storage_settings for update to rampart_service using (true) with check (true);

grant update (current_sealed, previous_sealed) on tenant_webhook_secrets to rampart_service;
create policy tenant_webhook_secrets_service_reseal on tenant_webhook_secrets for update to rampart_service using (true) with check (true);

-- hosted_worker_credentials_service already covers every command for the service role.
grant update (token_sealed) on hosted_worker_credentials to rampart_service;
