-- Service mesh: idempotency claims, inbound and outbound records, events reported to us, the
-- transactional outbox, and the issue reporter's de-duplication window. Platform tables (no
-- tenant): staff read them through the service role; the app role has no grant at all, so no
-- client path can write them.

create table svc_idempotency (
  caller text not null,
  request_id text not null,
  fingerprint text not null,
  flow text not null,
  status text not null check (status in ('in_flight', 'completed')),
  claimed_at timestamptz not null,
  completed_at timestamptz,
  response jsonb,
  expires_at timestamptz not null,
  primary key (caller, request_id)
);
create index svc_idempotency_expires_idx on svc_idempotency (expires_at);

create table svc_inbound_events (
  id bigint generated always as identity primary key,
  received_at timestamptz not null,
  caller text,
  flow text,
  status integer not null,
  error_code text,
  duration_ms real not null,
  request_id text,
  verified boolean not null,
  replayed boolean not null default false
);
-- Append-only and time-ordered: BRIN costs almost nothing per insert (this table takes one row per
-- inbound call) and still narrows time-window reads to the right blocks.
create index svc_inbound_events_received_idx on svc_inbound_events using brin (received_at);

create table svc_outbound_events (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  peer text not null,
  flow text not null,
  event_type text,
  severity text,
  ok boolean not null,
  http_status integer,
  request_id text not null,
  attempt integer not null,
  error text,
  response jsonb,
  duration_ms real not null,
  url text
);
create index svc_outbound_events_created_idx on svc_outbound_events using brin (created_at);
create index svc_outbound_events_peer_idx on svc_outbound_events (peer, created_at desc);
create index svc_outbound_events_request_idx on svc_outbound_events (request_id);

-- event_report calls received from peers, kept for staff.
create table svc_received_events (
  id uuid primary key default gen_random_uuid(),
  received_at timestamptz not null default now(),
  caller text not null,
  request_id text not null,
  kind text not null,
  severity text not null,
  title text not null,
  detail text,
  occurred_at timestamptz,
  brand text,
  data jsonb not null default '{}'::jsonb
);
create index svc_received_events_received_idx on svc_received_events (received_at desc);

-- Transactional outbox: rows commit with their cause; any replica delivers them, one at a time
-- per row (lease), reusing the row's request id on every attempt.
create table svc_outbox (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  peer text not null,
  flow text not null,
  payload jsonb not null,
  event_type text,
  severity text,
  request_id text not null unique,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  locked_until timestamptz,
  last_error text,
  delivered_at timestamptz
);
create index svc_outbox_due_idx on svc_outbox (next_attempt_at) where status = 'pending';

create table reporter_dedupe (
  kind text not null,
  fingerprint text not null,
  last_sent_at timestamptz not null,
  suppressed integer not null default 0,
  primary key (kind, fingerprint)
);

do $$
declare t text;
begin
  foreach t in array array['svc_idempotency', 'svc_inbound_events', 'svc_outbound_events', 'svc_received_events', 'svc_outbox', 'reporter_dedupe'] loop
    execute format('alter table %I enable row level security', t);
    execute format('alter table %I force row level security', t);
    execute format('create policy %I on %I for all to rampart_service using (true) with check (true)', t || '_service', t);
  end loop;
end $$;

-- The service role writes records and reads them for staff; it never rewrites history.
grant select, insert, update, delete on svc_idempotency, svc_outbox, reporter_dedupe to rampart_service;
grant select, insert on svc_inbound_events, svc_outbound_events, svc_received_events to rampart_service;
grant delete on svc_inbound_events, svc_outbound_events, svc_received_events to rampart_service; -- retention only
