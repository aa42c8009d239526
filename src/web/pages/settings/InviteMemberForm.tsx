import { Button, Group, NativeSelect, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { errorMessage, notifySuccess } from '../../lib/errors.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { MeTenant } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';
import { validateEmail } from '../../lib/validate.ts';

type InviteRole = 'member' | 'admin';

export function InviteMemberForm({ tenant }: { tenant: MeTenant }) {
  const queryClient = useQueryClient();
  const form = useForm({ email: '', role: 'member' as InviteRole }, (v) => ({ email: validateEmail(v.email) }));
  const invite = useMutation({
    mutationFn: (v: { email: string; role: InviteRole }) =>
      authCall(authClient.organization.inviteMember({ email: v.email.trim(), role: v.role, organizationId: tenant.id })),
    onSuccess: async (_d, v) => {
      notifySuccess(`Invitation sent to ${v.email.trim()}.`);
      form.reset();
      await queryClient.invalidateQueries({ queryKey: tenantKeys.members(tenant.id) });
    },
    onError: (error) => form.setErrors({ email: errorMessage(error) }),
  });

  return (
    <Paper withBorder p="lg" radius="md" component="section" aria-labelledby="invite-heading">
      <Stack gap="md">
        <div>
          <Title order={2} size="h4" id="invite-heading">
            Invite a member
          </Title>
          <Text size="sm" c="dimmed">
            We e-mail a link that is valid for 7 days. Admins can invite and manage members and change tenant settings.
          </Text>
        </div>
        <form ref={form.formRef} onSubmit={form.onSubmit((v) => invite.mutate(v))} noValidate>
          <Group align="flex-start" gap="sm" wrap="wrap">
            <TextInput
              label="Invite email"
              type="email"
              autoComplete="off"
              placeholder="colleague@example.com"
              required
              style={{ flex: '1 1 16rem' }}
              value={form.values.email}
              error={form.errors.email}
              onChange={(e) => form.setValue('email', e.currentTarget.value)}
            />
            <NativeSelect
              label="Role"
              style={{ flex: '0 1 10rem' }}
              data={[
                { value: 'member', label: 'Member' },
                { value: 'admin', label: 'Admin' },
              ]}
              value={form.values.role}
              onChange={(e) => form.setValue('role', e.currentTarget.value as InviteRole)}
            />
            <Button type="submit" loading={invite.isPending} mt={{ base: 0, xs: 25 }}>
              Send invitation
            </Button>
          </Group>
        </form>
      </Stack>
    </Paper>
  );
}
