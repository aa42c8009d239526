// Account: name, password and two-factor settings of the signed-in user.
import { Badge, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { PageHeader } from '../../components/PageHeader.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { errorMessage, notifySuccess } from '../../lib/errors.ts';
import { useMe, useRefreshMe } from '../../lib/me.ts';
import type { Me } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';
import { requireText, validateNewPassword } from '../../lib/validate.ts';
import { TwoFactorCard } from './TwoFactorCard.tsx';
import { NewPasswordFields, PasswordField } from '../../components/PasswordField.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { USER_NAME_MAX } from '../../../auth/auth-schemas.ts';

export function AccountPage() {
  const me = useMe();
  return (
    <>
      <PageHeader title="Account" description="Your sign-in details. They apply to every tenant you belong to." />
      <Stack gap="lg" maw={720}>
        <ProfileCard me={me} />
        <PasswordCard />
        <TwoFactorCard me={me} />
      </Stack>
    </>
  );
}

function ProfileCard({ me }: { me: Me }) {
  const refreshMe = useRefreshMe();
  const form = useForm({ name: me.user.name }, (v) => ({
    name:
      requireText(v.name, 'Name') ??
      (v.name.trim().length > USER_NAME_MAX ? `Use at most ${USER_NAME_MAX} characters` : null),
  }));
  const save = useMutation({
    mutationFn: (v: { name: string }) => authCall(authClient.updateUser({ name: v.name.trim() })),
    onSuccess: async () => {
      await refreshMe();
      notifySuccess('Name saved.');
    },
    onError: (error) => form.setErrors({ name: errorMessage(error) }),
  });

  return (
    <SectionCard headingId="profile-heading" title="Profile">
      <Group gap="xs">
        <Text size="sm">
          Email: <strong>{me.user.email}</strong>
        </Text>
        <Badge color={me.user.emailVerified ? 'green' : 'yellow'} variant={me.user.emailVerified ? 'light' : 'filled'}>
          {me.user.emailVerified ? 'Verified' : 'Not verified'}
        </Badge>
      </Group>
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => save.mutate(v))} noValidate>
        <Group align="flex-start" gap="sm" wrap="wrap">
          <TextInput
            label="Name"
            autoComplete="name"
            required
            maxLength={USER_NAME_MAX}
            style={{ flex: '1 1 16rem' }}
            {...form.field('name')}
          />
          <Button
            type="submit"
            loading={save.isPending}
            mt={{ base: 0, xs: 25 }}
            disabled={form.values.name.trim() === me.user.name}
          >
            Save name
          </Button>
        </Group>
      </form>
    </SectionCard>
  );
}

function PasswordCard() {
  const form = useForm({ current: '', password: '', confirm: '' }, (v) => ({
    current: v.current ? null : 'Current password is required',
    password:
      validateNewPassword(v.password) ??
      (v.password === v.current ? 'Choose a password different from the current one' : null),
    confirm: v.confirm === v.password ? null : 'The passwords do not match',
  }));
  const change = useMutation({
    mutationFn: (v: { current: string; password: string }) =>
      authCall(
        authClient.changePassword({ currentPassword: v.current, newPassword: v.password, revokeOtherSessions: true }),
      ),
    onSuccess: () => {
      form.reset();
      notifySuccess('Password changed. Your other sessions were signed out.');
    },
    onError: (error) => {
      const message = errorMessage(error);
      if (/password/i.test(message) && /invalid|incorrect|wrong/i.test(message)) form.setErrors({ current: message });
      else form.setErrors({ password: message });
    },
  });

  return (
    <SectionCard headingId="password-heading" title="Password">
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => change.mutate(v))} noValidate>
        <Stack gap="sm" maw={400}>
          <PasswordField label="Current password" autoComplete="current-password" required {...form.field('current')} />
          <NewPasswordFields form={form} />
          <Text size="xs" c="dimmed">
            Changing the password signs out your other sessions.
          </Text>
          <Button type="submit" loading={change.isPending} style={{ alignSelf: 'flex-start' }}>
            Change password
          </Button>
        </Stack>
      </form>
    </SectionCard>
  );
}
