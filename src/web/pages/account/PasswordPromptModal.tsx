// Asks for the account password before a sensitive two-factor change.
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useEffect } from 'react';
import { ErrorAlert } from '../../components/QueryStates.tsx';
import { useForm } from '../../lib/use-form.ts';
import { PasswordField } from '../../components/PasswordField.tsx';

interface PasswordPromptModalProps {
  opened: boolean;
  title: string;
  description: string;
  confirmLabel: string;
  danger?: boolean;
  onClose: () => void;
  onConfirm: (password: string) => Promise<unknown>;
}

export function PasswordPromptModal({
  opened,
  title,
  description,
  confirmLabel,
  danger,
  onClose,
  onConfirm,
}: PasswordPromptModalProps) {
  const form = useForm({ password: '' }, (v) => ({ password: v.password ? null : 'Password is required' }));
  const action = useMutation({ mutationFn: (password: string) => onConfirm(password), onSuccess: onClose });
  const { reset } = form;
  const resetAction = action.reset;

  useEffect(() => {
    if (opened) {
      reset();
      resetAction();
    }
  }, [opened, reset, resetAction]);

  return (
    <Modal opened={opened} onClose={onClose} title={title} centered>
      <form ref={form.formRef} onSubmit={form.onSubmit((v) => action.mutate(v.password))} noValidate>
        <Stack gap="md">
          <Text size="sm">{description}</Text>
          <ErrorAlert error={action.error} withIcon={false} />
          <PasswordField
            label="Password"
            autoComplete="current-password"
            required
            data-autofocus
            {...form.field('password')}
          />
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" color={danger ? 'red' : undefined} loading={action.isPending}>
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
