// Staff → Platform roles (super-admins): who has staff or super-admin rights, grant and revoke.
import { Alert, Badge, Button, Group, NativeSelect, Paper, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { errorMessage, notifyError, notifySuccess } from '../../lib/errors.ts';
import { formatDate, platformRoleLabel } from '../../lib/format.ts';
import { useMe } from '../../lib/me.ts';
import { grantPlatformRole, platformRolesQuery, revokePlatformRole, staffKeys } from '../../lib/staff-api.ts';
import type { PlatformRole, PlatformRoleName } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';
import { validateEmail } from '../../lib/validate.ts';
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
  const queryClient = useQueryClient();
  const form = useForm({ email: '', role: 'staff' as PlatformRoleName }, (v) => ({ email: validateEmail(v.email) }));
  const grant = useMutation({
    mutationFn: (v: { email: string; role: PlatformRoleName }) => grantPlatformRole({ email: v.email.trim(), role: v.role }),
    onSuccess: async ({ role }) => {
      notifySuccess(`${role.email} is now ${platformRoleLabel(role.role).toLowerCase()}.`);
      form.reset();
      await queryClient.invalidateQueries({ queryKey: staffKeys.roles });
    },
    onError: (error) => form.setErrors({ email: errorMessage(error) }),
  });
  return (
    <Paper withBorder p="lg" radius="md" component="section" aria-labelledby="grant-heading">
      <Stack gap="md">
        <div>
          <Title order={2} size="h4" id="grant-heading">
            Grant a role
          </Title>
          <Text size="sm" c="dimmed">
            The person needs a Rampart account first. Granting again changes the role.
          </Text>
        </div>
        <form ref={form.formRef} onSubmit={form.onSubmit((v) => grant.mutate(v))} noValidate>
          <Group align="flex-start" gap="sm" wrap="wrap">
            <TextInput
              label="Email"
              type="email"
              autoComplete="off"
              required
              style={{ flex: '1 1 16rem' }}
              value={form.values.email}
              error={form.errors.email}
              onChange={(e) => form.setValue('email', e.currentTarget.value)}
            />
            <NativeSelect
              label="Role"
              style={{ flex: '0 1 11rem' }}
              data={[
                { value: 'staff', label: 'Staff' },
                { value: 'super_admin', label: 'Super-admin' },
              ]}
              value={form.values.role}
              onChange={(e) => form.setValue('role', e.currentTarget.value as PlatformRoleName)}
            />
            <Button type="submit" loading={grant.isPending} mt={{ base: 0, xs: 25 }}>
              Grant role
            </Button>
          </Group>
        </form>
      </Stack>
    </Paper>
  );
}

function RolesTable({ roles }: { roles: PlatformRole[] }) {
  const me = useMe();
  const queryClient = useQueryClient();
  const [revoking, setRevoking] = useState<PlatformRole | null>(null);
  const revoke = useMutation({
    mutationFn: (r: PlatformRole) => revokePlatformRole(r.userId),
    onSuccess: async (_d, r) => {
      notifySuccess(`${r.email} no longer has a platform role.`);
      setRevoking(null);
      await queryClient.invalidateQueries({ queryKey: staffKeys.roles });
    },
    onError: (error) => notifyError(error, 'Could not revoke the role'),
  });
  const inactive = roles.filter((r) => !r.domainApproved || !r.emailVerified).length;

  return (
    <Paper withBorder p="lg" radius="md" component="section" aria-labelledby="roles-heading">
      <Stack gap="md">
        <Title order={2} size="h4" id="roles-heading">
          People with platform roles ({roles.length})
        </Title>
        {inactive > 0 && (
          <Alert color="yellow" variant="light" role="note">
            {inactive === 1 ? 'One person holds' : `${inactive} people hold`} a role that is not in effect: staff rights need a verified e-mail on an
            approved staff domain.
          </Alert>
        )}
        <Table.ScrollContainer minWidth={720}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Person</Table.Th>
                <Table.Th scope="col">Role</Table.Th>
                <Table.Th scope="col">Status</Table.Th>
                <Table.Th scope="col">Granted</Table.Th>
                <Table.Th scope="col">
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {roles.length === 0 && (
                <Table.Tr>
                  <Table.Td colSpan={5}>
                    <Text size="sm" c="dimmed" ta="center" py="md">
                      Nobody holds a platform role.
                    </Text>
                  </Table.Td>
                </Table.Tr>
              )}
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
                    <Button size="xs" variant="default" aria-label={`Revoke role of ${r.email}`} onClick={() => setRevoking(r)}>
                      Revoke
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Stack>
      <ConfirmDialog
        opened={revoking !== null}
        title="Revoke platform role"
        confirmLabel="Revoke role"
        danger
        loading={revoke.isPending}
        onClose={() => setRevoking(null)}
        onConfirm={() => revoking && revoke.mutate(revoking)}
      >
        <strong>{revoking?.email}</strong> loses {revoking ? platformRoleLabel(revoking.role).toLowerCase() : ''} rights at once.
        {revoking?.userId === me.user.id && ' This is your own role: you will lose access to this page.'}
      </ConfirmDialog>
    </Paper>
  );
}
