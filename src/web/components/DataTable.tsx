// A horizontally scrolling table with column headers and an optional "nothing here" row.
import { Table, Text, VisuallyHidden } from '@mantine/core';
import type { ReactNode } from 'react';

export interface Column {
  label: string;
  /** Read by screen readers only, e.g. the column of row buttons. */
  visuallyHidden?: boolean;
  align?: 'right';
}

interface DataTableProps {
  /** Names the table's scroll region for assistive technology, e.g. "Members". */
  label: string;
  /** Below this width the table scrolls sideways instead of squeezing. */
  minWidth: number;
  /** A string is a plain header; false or undefined leaves a column out. */
  columns: (Column | string | false | undefined)[];
  striped?: boolean;
  /** When set (the table has no rows), a dimmed message across all columns. */
  empty?: ReactNode;
  children: ReactNode;
}

export function DataTable({ label, minWidth, columns, striped, empty, children }: DataTableProps) {
  const shown = columns
    .filter((c) => c !== false && c !== undefined)
    .map((c) => (typeof c === 'string' ? { label: c } : c));
  return (
    // A native scroll box that keyboard users can focus and scroll (WCAG: scrollable regions must
    // be reachable without a mouse), named so screen readers announce what it holds. Positioned,
    // so visually hidden header text (absolutely placed) stays inside it instead of widening the page.
    <Table.ScrollContainer
      minWidth={minWidth}
      type="native"
      tabIndex={0}
      role="region"
      aria-label={label}
      style={{ position: 'relative' }}
    >
      <Table striped={striped}>
        <Table.Thead>
          <Table.Tr>
            {shown.map((c) => (
              <Table.Th key={c.label} scope="col" ta={c.align}>
                {c.visuallyHidden ? <VisuallyHidden>{c.label}</VisuallyHidden> : c.label}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {empty && (
            <Table.Tr>
              <Table.Td colSpan={shown.length}>
                <Text size="sm" c="dimmed" ta="center" py="md">
                  {empty}
                </Text>
              </Table.Td>
            </Table.Tr>
          )}
          {children}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
