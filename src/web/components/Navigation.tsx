// Navbar entries: the tenant's areas, tenant settings, and (for staff) the staff area.
import { NavLink, ScrollArea, Stack, Text } from '@mantine/core';
import { useRouterState } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { isTenantAdmin } from '../lib/me.ts';
import type { Me, MeTenant } from '../lib/types.ts';
import {
  IconAssets,
  IconBuilding,
  IconCmmc,
  IconCompliance,
  IconFindings,
  IconHome,
  IconKey,
  IconLog,
  IconMail,
  IconScans,
  IconSettings,
  IconShield,
  IconUsers,
  IconWorkers,
} from './icons.tsx';
import { NavItem } from './links.tsx';
import { IconCalendar, IconExplain, IconImport, IconTemplate } from './icons.tsx';

const AREAS = [
  { to: '/home', label: 'Home', icon: <IconHome /> },
  { to: '/assets', label: 'Assets', icon: <IconAssets /> },
  { to: '/scans', label: 'Scans', icon: <IconScans /> },
  { to: '/schedules', label: 'Schedules', icon: <IconCalendar /> },
  { to: '/scan-templates', label: 'Scan templates', icon: <IconTemplate /> },
  { to: '/findings', label: 'Findings', icon: <IconFindings /> },
  { to: '/imports', label: 'Import results', icon: <IconImport /> },
  { to: '/explain-results', label: 'Explain a result file', icon: <IconExplain /> },
  { to: '/compliance', label: 'Compliance', icon: <IconCompliance /> },
  { to: '/cmmc', label: 'CMMC', icon: <IconCmmc /> },
  { to: '/workers', label: 'Workers', icon: <IconWorkers /> },
] as const;

function Group({
  label,
  icon,
  open,
  children,
}: {
  label: string;
  icon: ReactNode;
  open: boolean;
  children: ReactNode;
}) {
  return (
    <NavLink component="button" type="button" label={label} leftSection={icon} defaultOpened={open} childrenOffset={28}>
      {children}
    </NavLink>
  );
}

interface NavigationProps {
  me: Me;
  tenant: MeTenant | null;
  onNavigate: () => void;
}

export function Navigation({ me, tenant, onNavigate }: NavigationProps) {
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const inStaff = pathname.startsWith('/settings/staff') || pathname.startsWith('/settings/mesh');
  const inSettings = pathname.startsWith('/settings') && !inStaff;

  return (
    <ScrollArea type="auto" style={{ flex: 1 }}>
      <Stack gap={2} p="sm" onClick={(e) => (e.target as HTMLElement).closest('a') && onNavigate()}>
        {tenant && (
          <>
            {AREAS.map((area) => (
              <NavItem key={area.to} to={area.to} label={area.label} leftSection={area.icon} />
            ))}
            <Group label="Settings" icon={<IconSettings />} open={inSettings || !inStaff}>
              <NavItem to="/settings/members" label="Members" leftSection={<IconUsers size={16} />} />
              <NavItem to="/settings/tenant" label="Tenant settings" leftSection={<IconSettings size={16} />} />
              <NavItem to="/settings/storage" label="Storage" leftSection={<IconAssets size={16} />} />
              {isTenantAdmin(tenant) && (
                <NavItem to="/settings/audit-log" label="Audit log" leftSection={<IconLog size={16} />} />
              )}
            </Group>
          </>
        )}
        {me.staff && (
          <>
            <Text size="xs" fw={700} c="dimmed" tt="uppercase" px="sm" pt="md" pb={4} aria-hidden="true">
              Platform
            </Text>
            <Group label="Staff" icon={<IconShield />} open>
              <NavItem
                to="/settings/staff/audit-log"
                label="Audit log (all tenants)"
                leftSection={<IconLog size={16} />}
              />
              <NavItem to="/settings/staff/tenants" label="Tenants" leftSection={<IconBuilding size={16} />} />
              <NavItem to="/settings/staff/mesh" label="Mesh records" leftSection={<IconWorkers size={16} />} />
              <NavItem to="/settings/staff/mesh-outbox" label="Mesh outbox" leftSection={<IconWorkers size={16} />} />
              <NavItem to="/settings/cmmc" label="CMMC dashboard" leftSection={<IconCmmc size={16} />} />
              {me.superAdmin && (
                <NavItem to="/settings/staff/roles" label="Platform roles" leftSection={<IconKey size={16} />} />
              )}
              {me.superAdmin && (
                <NavItem to="/settings/staff/workers" label="Hosted workers" leftSection={<IconWorkers size={16} />} />
              )}
              {me.superAdmin && (
                <NavItem to="/settings/staff/mailbox" label="Mailbox" leftSection={<IconMail size={16} />} />
              )}
              {me.superAdmin && (
                <NavItem to="/settings/mesh-health" label="Mesh health" leftSection={<IconShield size={16} />} />
              )}
              {me.superAdmin && (
                <NavItem to="/settings/mesh" label="Mesh console" leftSection={<IconKey size={16} />} />
              )}
              <NavItem to="/settings/mesh-ask" label="Ask operations" leftSection={<IconShield size={16} />} />
              <NavItem
                to="/settings/staff/language-model"
                label="Language model"
                leftSection={<IconExplain size={16} />}
              />
            </Group>
          </>
        )}
      </Stack>
    </ScrollArea>
  );
}
