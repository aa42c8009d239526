// Where a mail went when the server has no SMTP (public config `mailDelivery: 'mailbox'`): the
// pages that say a mail was sent say instead where an administrator finds it.
import { Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { publicConfigQueryOptions } from '../lib/me.ts';

export const MAILBOX_NOTICE =
  'This installation sends no e-mail: an administrator finds the message under Staff → Mailbox.';

/** True when mails are kept in the staff mailbox instead of sent. */
export function useMailKept(): boolean {
  const config = useQuery(publicConfigQueryOptions);
  return config.data?.mailDelivery === 'mailbox';
}

/** The notice as a paragraph, or nothing when the server sends mail. */
export function MailboxNotice() {
  if (!useMailKept()) return null;
  return (
    <Text size="sm" data-testid="mailbox-notice">
      {MAILBOX_NOTICE}
    </Text>
  );
}
