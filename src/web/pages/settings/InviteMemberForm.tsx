import { EmailRoleForm } from '../../components/EmailRoleForm.tsx';
import { TextLink } from '../../components/links.tsx';
import { MAILBOX_NOTICE, useMailKept } from '../../components/MailboxNotice.tsx';
import { useMe } from '../../lib/me.ts';
import { SectionCard } from '../../components/SectionCard.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { MeTenant } from '../../lib/types.ts';

export function InviteMemberForm({ tenant }: { tenant: MeTenant }) {
  const kept = useMailKept();
  const me = useMe();
  return (
    <SectionCard
      headingId="invite-heading"
      title="Invite a member"
      description={
        kept ? (
          <>
            The invitation link is valid for 7 days. {MAILBOX_NOTICE}{' '}
            {me.superAdmin && (
              <>
                <TextLink to="/settings/staff/mailbox" underline="always">
                  Open the mailbox
                </TextLink>
                .{' '}
              </>
            )}
            Admins can invite and manage members and change tenant settings.
          </>
        ) : (
          'We e-mail a link that is valid for 7 days. Admins can invite and manage members and change tenant settings.'
        )
      }
    >
      <EmailRoleForm
        emailLabel="Invite email"
        emailPlaceholder="colleague@example.com"
        roles={[
          { value: 'member', label: 'Member' },
          { value: 'admin', label: 'Admin' },
        ]}
        roleWidth="10rem"
        submitLabel="Send invitation"
        onSubmit={(v) =>
          authCall(authClient.organization.inviteMember({ email: v.email, role: v.role, organizationId: tenant.id }))
        }
        successMessage={(_d, v) =>
          kept ? `Invitation for ${v.email} made. ${MAILBOX_NOTICE}` : `Invitation sent to ${v.email}.`
        }
        queryKey={tenantKeys.members(tenant.id)}
      />
    </SectionCard>
  );
}
