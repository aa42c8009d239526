// Staff → Platform roles (super-admins): who has staff or super-admin rights, grant and revoke.
import { Alert, Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { DataTable } from '../../components/DataTable.tsx';
import { EmailRoleForm } from '../../components/EmailRoleForm.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { formatDate, platformRoleLabel } from '../../lib/format.ts';
import { useMe } from '../../lib/me.ts';
import { grantPlatformRole, platformRolesQuery, revokePlatformRole, staffKeys } from '../../lib/staff-api.ts';
import type { PlatformRole } from '../../lib/types.ts';
import { useConfirmedAction } from '../../lib/use-confirmed-action.ts';
import { InstallationDomainsCard } from './InstallationDomainsCard.tsx';
import { SuperAdminGuard } from './StaffGuard.tsx';

export function PlatformRolesPage() {
  return (
    <SuperAdminGuard>
      <PlatformRoles />
    </SuperAdminGuard>
  );
}

function PlatformRoles() {
  const roles = useQuery(platformRolesQuery);
  return (
    <>
      <PageHeader
        title="Platform roles"
        titleContext="Staff"
        description="Staff can read every tenant's audit log and the staff tools; super-admins can also grant roles and bypass asset verification. Rights apply only while the person's e-mail is verified and its domain is an approved staff domain."
      />
      <Stack gap="lg">
        <InstallationDomainsCard />
        <GrantRoleForm />
        {roles.isPending ? (
          <LoadingState label="Loading platform roles…" />
        ) : roles.isError ? (
          <ErrorState error={roles.error} title="Could not load platform roles" onRetry={() => void roles.refetch()} />
        ) : (
          <RolesTable roles={roles.data.roles} />
        )}
      </Stack>
    </>
  );
}

function GrantRoleForm() {
  return (
    <SectionCard
      headingId="grant-heading"
      title="Grant a role"
      description="The person needs a Rampart account first. Granting again changes the role."
    >
      <EmailRoleForm
        emailLabel="Email"
        roles={[
          { value: 'staff', label: 'Staff' },
          { value: 'super_admin', label: 'Super-admin' },
        ]}
        roleWidth="11rem"
        submitLabel="Grant role"
        onSubmit={grantPlatformRole}
        successMessage={({ role }) => `${role.email} is now ${platformRoleLabel(role.role).toLowerCase()}.`}
        queryKey={staffKeys.roles}
      />
    </SectionCard>
  );
}

function RolesTable({ roles }: { roles: PlatformRole[] }) {
  const me = useMe();
  const revoke = useConfirmedAction({
    action: (r: PlatformRole) => revokePlatformRole(r.userId),
    successMessage: (r) => `${r.email} no longer has a platform role.`,
    errorTitle: 'Could not revoke the role',
    queryKey: staffKeys.roles,
  });
  const inactive = roles.filter((r) => !r.domainApproved || !r.emailVerified).length;

  return (
    <SectionCard headingId="roles-heading" title={<>People with platform roles ({roles.length})</>}>
      {inactive > 0 && (
        <Alert color="yellow" variant="light" role="note">
          {inactive === 1 ? 'One person holds' : `${inactive} people hold`} a role that is not in effect: staff rights
          need a verified e-mail on an approved staff domain.
        </Alert>
      )}
      <DataTable
        label="Platform roles"
        minWidth={720}
        columns={['Person', 'Role', 'Status', 'Granted', { label: 'Actions', visuallyHidden: true }]}
        empty={roles.length === 0 && 'Nobody holds a platform role.'}
      >
        {roles.map((r) => (
          <Table.Tr key={r.userId}>
            <Table.Td>
              <Text size="sm" fw={500}>
                {r.name || '—'}
              </Text>
              <Text size="xs" c="dimmed">
                {r.email}
              </Text>
            </Table.Td>
            <Table.Td>
              <Badge variant="light" color={r.role === 'super_admin' ? 'grape' : 'indigo'}>
                {platformRoleLabel(r.role)}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Group gap={6}>
                {r.domainApproved && r.emailVerified && (
                  <Badge variant="light" color="green">
                    Active
                  </Badge>
                )}
                {!r.domainApproved && (
                  <Badge variant="filled" color="yellow" title="The e-mail domain is not in STAFF_EMAIL_DOMAINS">
                    Domain not approved
                  </Badge>
                )}
                {!r.emailVerified && (
                  <Badge variant="filled" color="yellow" title="The person has not verified the e-mail address">
                    E-mail not verified
                  </Badge>
                )}
              </Group>
            </Table.Td>
            <Table.Td className="nowrap">{formatDate(r.grantedAt)}</Table.Td>
            <Table.Td ta="right">
              <Button
                size="xs"
                variant="default"
                aria-label={`Revoke role of ${r.email}`}
                onClick={() => revoke.ask(r)}
              >
                Revoke
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
      <ConfirmDialog {...revoke.dialogProps} title="Revoke platform role" confirmLabel="Revoke role" danger>
        <strong>{revoke.target?.email}</strong> loses{' '}
        {revoke.target ? platformRoleLabel(revoke.target.role).toLowerCase() : ''} rights at once.
        {revoke.target?.userId === me.user.id && ' This is your own role: you will lose access to this page.'}
      </ConfirmDialog>
    </SectionCard>
  );
}
