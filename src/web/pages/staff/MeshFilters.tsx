// The filter form of one tab of the mesh records: labelled text inputs, selects and local dates,
// applied together ("Apply filters") or cleared ("Clear filters"), like the audit log's filters.
import { Button, Group, NativeSelect, Paper, SimpleGrid, TextInput } from '@mantine/core';
import { localDateToIso } from '../../lib/format.ts';
import { useForm, type FormErrors } from '../../lib/use-form.ts';

export type FilterInputs = Record<string, string>;

export type FilterField =
  | { name: string; label: string; type: 'text'; placeholder?: string; inputMode?: 'numeric' }
  | { name: string; label: string; type: 'select'; options: { value: string; label: string }[] }
  | { name: 'fromDate' | 'toDate'; label: string; type: 'date' };

interface MeshFiltersProps {
  /** Names the filter region, e.g. "Filters for received events". */
  label: string;
  fields: FilterField[];
  initial: FilterInputs;
  onApply: (inputs: FilterInputs) => void;
  /** Per-field checks beyond the date range, e.g. an HTTP status. */
  validate?: (values: FilterInputs) => FormErrors<FilterInputs>;
}

/** Blank inputs for these fields. */
export function emptyInputs(fields: FilterField[]): FilterInputs {
  return Object.fromEntries(fields.map((f) => [f.name, '']));
}

/** The trimmed value of a text input, or undefined when it is blank. */
export function textValue(inputs: FilterInputs, name: string): string | undefined {
  const v = (inputs[name] ?? '').trim();
  return v === '' ? undefined : v;
}

/** `from`/`to` of the query: the start of the "from" day and the end of the "to" day, local time. */
export function dateRange(inputs: FilterInputs): { from?: string; to?: string } {
  const from = inputs['fromDate'] ? localDateToIso(inputs['fromDate'], 'start') : undefined;
  const to = inputs['toDate'] ? localDateToIso(inputs['toDate'], 'end') : undefined;
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

/** Drops undefined values, so an unfiltered query has an empty key. */
export function compact<T extends object>(filters: T): T {
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)) as T;
}

export function MeshFilters({ label, fields, initial, onApply, validate }: MeshFiltersProps) {
  const empty = emptyInputs(fields);
  const form = useForm<FilterInputs>(initial, (v) => ({
    ...validate?.(v),
    ...(v['fromDate'] && v['toDate'] && v['toDate'] < v['fromDate']
      ? { toDate: 'The end date is before the start date' }
      : {}),
  }));

  return (
    <Paper withBorder p="md" radius="md" mb="lg" component="section" aria-label={label}>
      <form ref={form.formRef} onSubmit={form.onSubmit(onApply)} noValidate>
        <SimpleGrid
          cols={{ base: 1, xs: 2, md: Math.min(fields.length, 3), lg: Math.min(fields.length, 6) }}
          spacing="sm"
          verticalSpacing="sm"
        >
          {fields.map((f) =>
            f.type === 'select' ? (
              <NativeSelect key={f.name} label={f.label} data={f.options} {...form.field(f.name)} />
            ) : f.type === 'date' ? (
              <TextInput key={f.name} type="date" label={f.label} {...form.field(f.name)} />
            ) : (
              <TextInput
                key={f.name}
                label={f.label}
                placeholder={f.placeholder}
                inputMode={f.inputMode}
                spellCheck={false}
                autoCapitalize="off"
                autoComplete="off"
                {...form.field(f.name)}
              />
            ),
          )}
        </SimpleGrid>
        <Group gap="sm" mt="md">
          <Button type="submit">Apply filters</Button>
          <Button
            variant="default"
            onClick={() => {
              form.reset(empty);
              onApply(empty);
            }}
          >
            Clear filters
          </Button>
        </Group>
      </form>
    </Paper>
  );
}
