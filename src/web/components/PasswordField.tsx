// Mantine's PasswordInput with a visibility toggle whose name does not contain "password", so
// `getByLabel('Password')` finds only the field.
import { PasswordInput, type PasswordInputProps } from '@mantine/core';

export function PasswordField(props: PasswordInputProps) {
  return <PasswordInput visibilityToggleButtonProps={{ 'aria-label': 'Show characters' }} {...props} />;
}
