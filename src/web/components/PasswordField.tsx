// Mantine's PasswordInput with a visibility toggle whose name does not contain "password", so
// `getByLabel('Password')` finds only the field.
import { PasswordInput, type PasswordInputProps } from '@mantine/core';
import type { FormState } from '../lib/use-form.ts';
import { MIN_PASSWORD_LENGTH } from '../lib/validate.ts';

export function PasswordField(props: PasswordInputProps) {
  return <PasswordInput visibilityToggleButtonProps={{ 'aria-label': 'Show characters' }} {...props} />;
}

/** "New password" and "Confirm password", bound to the form's `password` and `confirm` fields. */
export function NewPasswordFields<V extends { password: string; confirm: string }>({
  form,
  autoFocus,
}: {
  form: FormState<V>;
  autoFocus?: boolean;
}) {
  return (
    <>
      <PasswordField
        label="New password"
        description={`At least ${MIN_PASSWORD_LENGTH} characters`}
        autoComplete="new-password"
        required
        autoFocus={autoFocus}
        {...form.field('password')}
      />
      <PasswordField label="Confirm password" autoComplete="new-password" required {...form.field('confirm')} />
    </>
  );
}
