import { EmailRoleForm } from '../../components/EmailRoleForm.tsx';
import { SectionCard } from '../../components/SectionCard.tsx';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { tenantKeys } from '../../lib/tenant-api.ts';
import type { MeTenant } from '../../lib/types.ts';

export function InviteMemberForm({ tenant }: { tenant: MeTenant }) {
  return (
    <SectionCard
      headingId="invite-heading"
      title="Invite a member"
      description="We e-mail a link that is valid for 7 days. Admins can invite and manage members and change tenant settings."
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
        successMessage={(_d, v) => `Invitation sent to ${v.email}.`}
        queryKey={tenantKeys.members(tenant.id)}
      />
    </SectionCard>
  );
}
