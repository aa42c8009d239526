// Create a tenant (a Better Auth organization); the new tenant becomes the active one.
import { Button, Stack, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { authCall, authClient } from '../../lib/auth-client.ts';
import { errorCode, errorMessage } from '../../lib/errors.ts';
import { slugify } from '../../lib/format.ts';
import { useRefreshMe } from '../../lib/me.ts';
import { useForm } from '../../lib/use-form.ts';
import { requireText, validateSlug } from '../../lib/validate.ts';
import { TENANT_NAME_MAX } from '../../../auth/auth-schemas.ts';

interface CreateTenantFormProps {
  onCreated?: (tenant: { id: string; name: string }) => void;
  autoFocus?: boolean;
}

export function CreateTenantForm({ onCreated, autoFocus }: CreateTenantFormProps) {
  const refreshMe = useRefreshMe();
  const [slugEdited, setSlugEdited] = useState(false);
  const form = useForm({ name: '', slug: '' }, (v) => ({
    name:
      requireText(v.name, 'Tenant name') ??
      (v.name.trim().length > TENANT_NAME_MAX ? `Use at most ${TENANT_NAME_MAX} characters` : null),
    slug: validateSlug(v.slug),
  }));

  const create = useMutation({
    mutationFn: async (v: { name: string; slug: string }) => {
      const org = await authCall(authClient.organization.create({ name: v.name.trim(), slug: v.slug }));
      if (org?.id) await authCall(authClient.organization.setActive({ organizationId: org.id }));
      return org;
    },
    onSuccess: async (org) => {
      await refreshMe();
      if (org) onCreated?.({ id: org.id, name: org.name });
    },
    onError: (error) => {
      const message = errorMessage(error);
      if (errorCode(error) === 'organization_already_exists' || /already exists|slug/i.test(message))
        form.setErrors({ slug: 'This slug is taken. Choose another one.' });
      else form.setErrors({ name: message });
    },
  });

  return (
    <form ref={form.formRef} onSubmit={form.onSubmit((v) => create.mutate(v))} noValidate>
      <Stack gap="md">
        <TextInput
          label="Tenant name"
          description="Usually your company or team, e.g. Acme Corp"
          required
          autoFocus={autoFocus}
          maxLength={TENANT_NAME_MAX}
          value={form.values.name}
          error={form.errors.name}
          onChange={(e) => {
            const name = e.currentTarget.value;
            form.setValue('name', name);
            if (!slugEdited) form.setValue('slug', slugify(name));
          }}
        />
        <TextInput
          label="Slug"
          description="Short identifier used in exports and links: lower-case letters, digits and dashes"
          required
          maxLength={48}
          value={form.values.slug}
          error={form.errors.slug}
          onChange={(e) => {
            setSlugEdited(true);
            form.setValue('slug', e.currentTarget.value.toLowerCase());
          }}
        />
        <Button type="submit" loading={create.isPending} style={{ alignSelf: 'flex-start' }}>
          Create tenant
        </Button>
      </Stack>
    </form>
  );
}
