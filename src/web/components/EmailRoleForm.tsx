// One row: an e-mail address, a role and a submit button (invite a member, grant a platform role).
// On success: a notification, an empty form and a refreshed list; a failure shows at the e-mail.
import { Button, Group, NativeSelect, TextInput } from '@mantine/core';
import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { errorMessage, notifySuccess } from '../lib/errors.ts';
import { useForm } from '../lib/use-form.ts';
import { validateEmail } from '../lib/validate.ts';

export type EmailRole<R extends string> = { email: string; role: R };

interface EmailRoleFormProps<R extends string, D> {
  emailLabel: string;
  emailPlaceholder?: string;
  /** The first one is preselected. */
  roles: [{ value: R; label: string }, ...{ value: R; label: string }[]];
  /** Flex basis of the role select, e.g. "10rem". */
  roleWidth: string;
  submitLabel: string;
  /** Gets the e-mail trimmed. */
  onSubmit: (v: EmailRole<R>) => Promise<D>;
  successMessage: (data: D, v: EmailRole<R>) => string;
  /** The list to refresh after success. */
  queryKey: QueryKey;
}

export function EmailRoleForm<R extends string, D>(props: EmailRoleFormProps<R, D>) {
  const { emailLabel, emailPlaceholder, roles, roleWidth, submitLabel, onSubmit, successMessage, queryKey } = props;
  const queryClient = useQueryClient();
  const form = useForm<EmailRole<R>>({ email: '', role: roles[0].value }, (v) => ({ email: validateEmail(v.email) }));
  const submit = useMutation({
    mutationFn: onSubmit,
    onSuccess: async (data, v) => {
      notifySuccess(successMessage(data, v));
      form.reset();
      await queryClient.invalidateQueries({ queryKey });
    },
    onError: (error) => form.setErrors({ email: errorMessage(error) }),
  });

  return (
    <form
      ref={form.formRef}
      onSubmit={form.onSubmit((v) => submit.mutate({ email: v.email.trim(), role: v.role }))}
      noValidate
    >
      <Group align="flex-start" gap="sm" wrap="wrap">
        <TextInput
          label={emailLabel}
          type="email"
          autoComplete="off"
          placeholder={emailPlaceholder}
          required
          style={{ flex: '1 1 16rem' }}
          {...form.field('email')}
        />
        <NativeSelect label="Role" style={{ flex: `0 1 ${roleWidth}` }} data={roles} {...form.field('role')} />
        <Button type="submit" loading={submit.isPending} mt={{ base: 0, xs: 25 }}>
          {submitLabel}
        </Button>
      </Group>
    </form>
  );
}
