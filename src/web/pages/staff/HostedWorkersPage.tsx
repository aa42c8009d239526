// Staff → Hosted workers (super-admins): Rampart-hosted workers of every tenant, starting a new
// one that this server runs in-process, and hosted enrollment codes for a hosted worker run
// elsewhere with the CLI. A code is shown once, here, with its expiry.
import { Alert, Badge, Button, Code, CopyButton, Group, Select, Stack, Table, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { DataTable } from '../../components/DataTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDateTime } from '../../lib/format.ts';
import {
  createHostedEnrollment,
  createHostedWorker,
  hostedWorkersKeys,
  hostedWorkersQuery,
  type HostedEnrollment,
  type HostedWorkerList,
} from '../../lib/hosted-workers-api.ts';
import { useMe } from '../../lib/me.ts';
import { staffTenantsQuery } from '../../lib/staff-api.ts';

export function HostedWorkersPage() {
  const me = useMe();
  if (!me.superAdmin)
    return (
      <ForbiddenPage
        title="Super-admins only"
        message="Only Rampart super-admins can see and start hosted workers, since a hosted worker scans a tenant's assets."
      />
    );
  return <HostedWorkers />;
}

function HostedWorkers() {
  const list = useQuery(hostedWorkersQuery);
  return (
    <>
      <PageHeader
        title="Hosted workers"
        titleContext="Staff"
        description="Workers Rampart runs for a tenant. Each belongs to its tenant like any other worker: it signs with the tenant's webhook signing secret, and the tenant's admins can see and revoke it."
      />
      <Stack gap="lg">
        {list.data && !list.data.runnerActive && (
          <Alert color="yellow" variant="light" role="note" title="This server does not run hosted workers">
            EMBEDDED_WORKER is off on the server that answered. Hosted workers started here are created and listed, but
            they run only on servers where EMBEDDED_WORKER is on. For a hosted worker on another machine, create a
            hosted enrollment code below and use the CLI.
          </Alert>
        )}
        <StartHostedWorker />
        <HostedEnrollmentCode />
        {list.isPending ? (
          <LoadingState label="Loading hosted workers…" />
        ) : list.isError ? (
          <ErrorState error={list.error} title="Could not load hosted workers" onRetry={() => void list.refetch()} />
        ) : (
          <HostedWorkersTable data={list.data} />
        )}
      </Stack>
    </>
  );
}

/** The tenants to pick from (the staff tenants list), sorted by name. */
function TenantSelect({
  label,
  value,
  onChange,
  error,
}: {
  label: string;
  value: string | null;
  onChange: (v: string | null) => void;
  error?: string | null;
}) {
  const tenants = useQuery(staffTenantsQuery);
  const options = useMemo(
    () =>
      [...(tenants.data?.tenants ?? [])]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((t) => ({ value: t.id, label: `${t.name} (${t.slug})` })),
    [tenants.data],
  );
  return (
    <Select
      label={label}
      placeholder={tenants.isPending ? 'Loading tenants…' : 'Pick a tenant'}
      data={options}
      value={value}
      onChange={onChange}
      searchable
      nothingFoundMessage="No tenant matches"
      maw={420}
      error={tenants.isError ? 'Could not load the tenants; reload the page.' : error}
      disabled={tenants.isPending}
    />
  );
}

function StartHostedWorker() {
  const queryClient = useQueryClient();
  const [tenantId, setTenantId] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const create = useMutation({
    mutationFn: createHostedWorker,
    onSuccess: (w) => {
      notifySuccess(
        w.running
          ? `${w.name} is running for ${w.tenantName}.`
          : `${w.name} was created for ${w.tenantName}; it runs where EMBEDDED_WORKER is on.`,
        'Hosted worker started',
      );
      setTenantId(null);
      void queryClient.invalidateQueries({ queryKey: hostedWorkersKeys.list });
    },
  });
  return (
    <SectionCard
      headingId="start-hosted-heading"
      title="Start a hosted worker"
      description="Enrolls a new hosted worker for the tenant and runs it inside this server. It leases the tenant's queued scans once the tenant has a webhook signing secret."
    >
      <form
        aria-labelledby="start-hosted-heading"
        onSubmit={(e) => {
          e.preventDefault();
          if (!tenantId) return setMissing(true);
          create.mutate(tenantId);
        }}
      >
        <Stack gap="sm">
          <TenantSelect
            label="Tenant for the new hosted worker"
            value={tenantId}
            onChange={(v) => {
              setTenantId(v);
              setMissing(false);
            }}
            error={missing ? 'Pick a tenant.' : null}
          />
          <ErrorAlert error={create.error} title="Could not start a hosted worker" />
          <Group>
            <Button type="submit" loading={create.isPending}>
              Start hosted worker
            </Button>
          </Group>
        </Stack>
      </form>
    </SectionCard>
  );
}

function Copyable({ value, label }: { value: string; label: string }) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button size="compact-sm" variant="default" onClick={copy} aria-label={label}>
          {copied ? 'Copied' : 'Copy'}
        </Button>
      )}
    </CopyButton>
  );
}

function HostedEnrollmentCode() {
  const [tenantId, setTenantId] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [created, setCreated] = useState<HostedEnrollment | null>(null);
  const create = useMutation({ mutationFn: createHostedEnrollment, onSuccess: setCreated });
  const command = created ? `rampart-worker enroll --server ${window.location.origin} --code ${created.code}` : '';
  return (
    <SectionCard
      headingId="hosted-code-heading"
      title="Create a hosted enrollment code"
      description="For a hosted worker that runs on another machine: a one-time code, valid for 15 minutes, that enrolls a worker marked hosted in the tenant. It is shown only once."
    >
      <form
        aria-labelledby="hosted-code-heading"
        onSubmit={(e) => {
          e.preventDefault();
          if (!tenantId) return setMissing(true);
          setCreated(null);
          create.mutate(tenantId);
        }}
      >
        <Stack gap="sm">
          <TenantSelect
            label="Tenant for the enrollment code"
            value={tenantId}
            onChange={(v) => {
              setTenantId(v);
              setMissing(false);
            }}
            error={missing ? 'Pick a tenant.' : null}
          />
          <ErrorAlert error={create.error} title="Could not create a code" />
          <Group>
            <Button type="submit" variant="default" loading={create.isPending}>
              Create code
            </Button>
          </Group>
        </Stack>
      </form>
      {created && (
        <Stack gap="sm" aria-live="polite">
          <Stack gap={4}>
            <Text size="sm" fw={600} id="hosted-code-label">
              Hosted enrollment code
            </Text>
            <Group gap="sm">
              <Code
                fz="xl"
                fw={700}
                aria-labelledby="hosted-code-label"
                data-testid="hosted-enrollment-code"
                style={{ letterSpacing: '0.15em' }}
              >
                {created.code}
              </Code>
              <Copyable value={created.code} label="Copy hosted enrollment code" />
            </Group>
            <Text size="sm" c="dimmed">
              Single use; expires {formatDateTime(created.expiresAt)}.
            </Text>
          </Stack>
          <Stack gap={4}>
            <Text size="sm" fw={600}>
              On the worker machine, run
            </Text>
            <Group gap="sm" wrap="nowrap" align="flex-start">
              <Code block className="mono-break" style={{ flex: 1 }}>
                {command}
              </Code>
              <Copyable value={command} label="Copy enroll command" />
            </Group>
          </Stack>
          <Alert variant="light" color="yellow">
            This code is not shown again. The worker also needs the tenant&apos;s webhook signing secret, which only the
            tenant&apos;s admins can see.
          </Alert>
        </Stack>
      )}
    </SectionCard>
  );
}

function HostedWorkersTable({ data }: { data: HostedWorkerList }) {
  return (
    <SectionCard headingId="hosted-list-heading" title={<>Hosted workers ({data.workers.length})</>}>
      <DataTable
        label="Hosted workers"
        minWidth={760}
        columns={['Tenant', 'Worker', 'Status', 'Last seen', 'Running here']}
        empty={data.workers.length === 0 && 'No hosted workers yet.'}
      >
        {data.workers.map((w) => (
          <Table.Tr key={w.id}>
            <Table.Td>
              <Text size="sm" fw={500}>
                {w.tenantName}
              </Text>
            </Table.Td>
            <Table.Td>
              <Text size="sm" fw={600}>
                {w.name}
              </Text>
              <Text size="xs" c="dimmed">
                {w.embedded ? 'Runs inside Rampart' : `Runs elsewhere (${w.platform})`}, version {w.version}
              </Text>
            </Table.Td>
            <Table.Td>
              <Badge color={w.status === 'active' ? 'green' : 'gray'} variant="light">
                {w.status === 'active' ? 'Active' : 'Revoked'}
              </Badge>
            </Table.Td>
            <Table.Td className="nowrap">
              {w.lastSeenAt ? (
                <Text size="sm">{formatDateTime(w.lastSeenAt)}</Text>
              ) : (
                <Text size="sm" c="dimmed">
                  Never
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              {w.running ? (
                <Badge color="green" variant="light">
                  Running
                </Badge>
              ) : (
                <Text size="sm" c="dimmed">
                  {w.status === 'revoked'
                    ? 'No (revoked)'
                    : !w.embedded
                      ? 'No (runs elsewhere)'
                      : data.runnerActive
                        ? 'Starting…'
                        : 'No (EMBEDDED_WORKER is off)'}
                </Text>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </SectionCard>
  );
}
