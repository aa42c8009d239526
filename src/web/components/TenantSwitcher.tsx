// Header menu listing the user's tenants; switching sets the session's active organization.
import { Button, Menu, Modal, Text, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { authCall, authClient } from '../lib/auth-client.ts';
import { notifyError, notifySuccess } from '../lib/errors.ts';
import { tenantRoleLabel } from '../lib/format.ts';
import { useRefreshMe } from '../lib/me.ts';
import type { Me, MeTenant } from '../lib/types.ts';
import { CreateTenantForm } from '../pages/tenants/CreateTenantForm.tsx';
import { IconCheck, IconPlus, IconSelector } from './icons.tsx';

export function TenantSwitcher({ me, tenant }: { me: Me; tenant: MeTenant }) {
  const queryClient = useQueryClient();
  const refreshMe = useRefreshMe();
  const navigate = useNavigate();
  const [createOpen, createModal] = useDisclosure(false);

  const switchTenant = useMutation({
    mutationFn: (organizationId: string) => authCall(authClient.organization.setActive({ organizationId })),
    onSuccess: async (_data, organizationId) => {
      // Tenant-scoped data is keyed by tenant id; drop it all so nothing of the old tenant lingers.
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] === 'tenant' });
      const next = await refreshMe();
      const name = next?.tenants.find((t) => t.id === organizationId)?.name;
      if (name) notifySuccess(`Now working in ${name}`);
    },
    onError: (error) => notifyError(error, 'Could not switch tenant'),
  });

  return (
    <>
      <Menu position="bottom-start" width={280} withinPortal shadow="md">
        <Menu.Target>
          <Button
            variant="default"
            rightSection={<IconSelector size={16} />}
            loading={switchTenant.isPending}
            maw={{ base: 170, xs: 260, sm: 320 }}
            styles={{ label: { minWidth: 0 } }}
          >
            <VisuallyHidden>Switch tenant, current: </VisuallyHidden>
            <span style={{ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>{tenant.name}</span>
          </Button>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Label>Your tenants</Menu.Label>
          {me.tenants.map((t) => (
            <Menu.Item
              key={t.id}
              leftSection={
                t.id === tenant.id ? <IconCheck size={16} /> : <span style={{ width: 16, display: 'inline-block' }} />
              }
              rightSection={
                <Text size="xs" c="dimmed">
                  {tenantRoleLabel(t.role)}
                </Text>
              }
              aria-current={t.id === tenant.id ? 'true' : undefined}
              onClick={() => t.id !== tenant.id && switchTenant.mutate(t.id)}
            >
              {t.name}
            </Menu.Item>
          ))}
          <Menu.Divider />
          <Menu.Item leftSection={<IconPlus size={16} />} onClick={createModal.open}>
            Create tenant
          </Menu.Item>
        </Menu.Dropdown>
      </Menu>
      <Modal opened={createOpen} onClose={createModal.close} title="Create a tenant" centered>
        <CreateTenantForm
          autoFocus
          onCreated={(t) => {
            createModal.close();
            queryClient.removeQueries({ predicate: (q) => q.queryKey[0] === 'tenant' });
            notifySuccess(`Tenant ${t.name} created. You are its owner.`);
            void navigate({ to: '/settings/members' });
          }}
        />
      </Modal>
    </>
  );
}
