// Staff → Audit log across all tenants, with a tenant filter.
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import {
  AuditFiltersForm,
  EMPTY_AUDIT_INPUTS,
  toAuditFilters,
  type AuditFilterInputs,
} from '../../components/audit/AuditFilters.tsx';
import { AuditTable } from '../../components/audit/AuditTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { staffAuditQuery, staffTenantsQuery } from '../../lib/staff-api.ts';

export function StaffAuditLogPage() {
  const [inputs, setInputs] = useState<AuditFilterInputs>(EMPTY_AUDIT_INPUTS);
  const filters = useMemo(() => toAuditFilters(inputs), [inputs]);
  const tenants = useQuery(staffTenantsQuery);
  const query = useInfiniteQuery(staffAuditQuery(filters));
  const sortedTenants = useMemo(
    () => [...(tenants.data?.tenants ?? [])].sort((a, b) => a.name.localeCompare(b.name)),
    [tenants.data],
  );
  return (
    <>
      <PageHeader
        title="Audit log (all tenants)"
        titleContext="Staff"
        description="Every tenant's audit entries and platform events (staff sign-ins, role grants). Staff reads are themselves audited."
      />
      <AuditFiltersForm
        initial={inputs}
        onApply={setInputs}
        tenants={sortedTenants}
        tenantsLoading={tenants.isPending}
      />
      <AuditTable query={query} showTenant filtered={Object.keys(filters).length > 0} />
    </>
  );
}
