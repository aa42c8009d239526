// Settings → Audit log of the active tenant (admins and owners).
import { useInfiniteQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import {
  AuditFiltersForm,
  EMPTY_AUDIT_INPUTS,
  toAuditFilters,
  type AuditFilterInputs,
} from '../../components/audit/AuditFilters.tsx';
import { AuditTable } from '../../components/audit/AuditTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ForbiddenPage } from '../../components/StatusPages.tsx';
import { isTenantAdmin, useTenant } from '../../lib/me.ts';
import { tenantAuditQuery } from '../../lib/tenant-api.ts';

export function AuditLogPage() {
  const tenant = useTenant();
  if (!isTenantAdmin(tenant))
    return (
      <ForbiddenPage title="Admins only" message={`Only admins and owners of ${tenant.name} can read its audit log.`} />
    );
  return <TenantAuditLog tenantId={tenant.id} tenantName={tenant.name} />;
}

function TenantAuditLog({ tenantId, tenantName }: { tenantId: string; tenantName: string }) {
  const [inputs, setInputs] = useState<AuditFilterInputs>(EMPTY_AUDIT_INPUTS);
  const filters = useMemo(() => toAuditFilters(inputs), [inputs]);
  const query = useInfiniteQuery(tenantAuditQuery(tenantId, filters));
  return (
    <>
      <PageHeader
        title="Audit log"
        titleContext={tenantName}
        description={`Who did what in ${tenantName}: sign-ins, invitations, role changes and settings changes. Entries cannot be edited or deleted.`}
      />
      <AuditFiltersForm initial={inputs} onApply={setInputs} />
      <AuditTable query={query} filtered={Object.keys(filters).length > 0} />
    </>
  );
}
