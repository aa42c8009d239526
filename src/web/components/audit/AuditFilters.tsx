// Filters for an audit log: action prefix, actor, date range (local days), and for staff a tenant.
import { Button, Group, NativeSelect, Paper, SimpleGrid, TextInput } from '@mantine/core';
import { localDateToIso } from '../../lib/format.ts';
import type { AuditFilters, StaffTenant } from '../../lib/types.ts';
import { useForm } from '../../lib/use-form.ts';

export type AuditFilterInputs = {
  action: string;
  actor: string;
  fromDate: string;
  toDate: string;
  tenantId: string;
};

export const EMPTY_AUDIT_INPUTS: AuditFilterInputs = { action: '', actor: '', fromDate: '', toDate: '', tenantId: '' };

export function toAuditFilters(inputs: AuditFilterInputs): AuditFilters {
  const filters: AuditFilters = {};
  if (inputs.action.trim()) filters.action = inputs.action.trim();
  if (inputs.actor.trim()) filters.actor = inputs.actor.trim();
  const from = inputs.fromDate ? localDateToIso(inputs.fromDate, 'start') : undefined;
  const to = inputs.toDate ? localDateToIso(inputs.toDate, 'end') : undefined;
  if (from) filters.from = from;
  if (to) filters.to = to;
  if (inputs.tenantId) filters.tenantId = inputs.tenantId;
  return filters;
}

interface AuditFiltersFormProps {
  initial: AuditFilterInputs;
  onApply: (inputs: AuditFilterInputs) => void;
  /** Staff view: offer a tenant filter. */
  tenants?: StaffTenant[];
  tenantsLoading?: boolean;
}

export function AuditFiltersForm({ initial, onApply, tenants, tenantsLoading }: AuditFiltersFormProps) {
  const form = useForm<AuditFilterInputs>(initial, (v) => ({
    toDate: v.fromDate && v.toDate && v.toDate < v.fromDate ? 'The end date is before the start date' : null,
  }));
  const staff = tenants !== undefined || tenantsLoading;

  return (
    <Paper withBorder p="md" radius="md" mb="lg" component="section" aria-label="Filters">
      <form ref={form.formRef} onSubmit={form.onSubmit(onApply)} noValidate>
        <SimpleGrid cols={{ base: 1, xs: 2, md: staff ? 5 : 4 }} spacing="sm" verticalSpacing="sm">
          {staff && (
            <NativeSelect
              label="Tenant"
              disabled={tenantsLoading}
              data={[
                { value: '', label: tenantsLoading ? 'Loading tenants…' : 'All tenants' },
                ...(tenants ?? []).map((t) => ({ value: t.id, label: t.name })),
              ]}
              {...form.field('tenantId')}
            />
          )}
          <TextInput
            label="Action prefix"
            placeholder="e.g. member."
            spellCheck={false}
            autoCapitalize="off"
            {...form.field('action')}
          />
          <TextInput
            label="Actor"
            placeholder="E-mail or user id"
            spellCheck={false}
            autoCapitalize="off"
            {...form.field('actor')}
          />
          <TextInput type="date" label="From date" {...form.field('fromDate')} />
          <TextInput type="date" label="To date" {...form.field('toDate')} />
        </SimpleGrid>
        <Group gap="sm" mt="md">
          <Button type="submit">Apply filters</Button>
          <Button
            variant="default"
            onClick={() => {
              form.reset(EMPTY_AUDIT_INPUTS);
              onApply(EMPTY_AUDIT_INPUTS);
            }}
          >
            Clear filters
          </Button>
        </Group>
      </form>
    </Paper>
  );
}
