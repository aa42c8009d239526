// The signed-in shell: header (burger, tenant switcher, user menu), navbar, verification banner,
// and the first-run "create your first tenant" screen for users without a tenant.
import { AppShell, Box, Burger, Container, Group, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { authCall, authClient } from '../lib/auth-client.ts';
import { errorMessage } from '../lib/errors.ts';
import { activeTenantOf, publicConfigQueryOptions, useMeQuery, useRefreshMe } from '../lib/me.ts';
import type { Me } from '../lib/types.ts';
import { FirstTenantPage } from '../pages/tenants/FirstTenantPage.tsx';
import { Logo } from './Logo.tsx';
import { Navigation } from './Navigation.tsx';
import { ErrorState, FullPageLoader, LoadingState } from './QueryStates.tsx';
import { TenantSwitcher } from './TenantSwitcher.tsx';
import { UserMenu } from './UserMenu.tsx';
import { VerifyEmailBanner } from './VerifyEmailBanner.tsx';

/** Routes that work without an active tenant. */
function worksWithoutTenant(pathname: string): boolean {
  return pathname === '/account' || pathname.startsWith('/settings/staff');
}

export function AppLayout() {
  const meQuery = useMeQuery();
  const href = useRouterState({ select: (s) => s.location.href });
  if (meQuery.data === undefined) {
    if (meQuery.isError)
      return (
        <Container size="sm" py="xl">
          <ErrorState error={meQuery.error} title="Could not load your account" onRetry={() => void meQuery.refetch()} />
        </Container>
      );
    return <FullPageLoader />;
  }
  if (meQuery.data === null) return <Navigate to="/sign-in" search={{ redirect: href }} replace />;
  return <Shell me={meQuery.data} />;
}

/** Picks a tenant when the session has none active but the user belongs to some. */
function useEnsureActiveTenant(me: Me): { activating: boolean; error: string | null } {
  const refreshMe = useRefreshMe();
  const [error, setError] = useState<string | null>(null);
  const attempted = useRef<string | null>(null);
  const needs = activeTenantOf(me) === null && me.tenants.length > 0;
  const candidate = me.tenants[0]?.id ?? null;

  useEffect(() => {
    if (!needs || !candidate || attempted.current === candidate) return;
    attempted.current = candidate;
    authCall(authClient.organization.setActive({ organizationId: candidate }))
      .then(() => refreshMe())
      .catch((e: unknown) => setError(errorMessage(e)));
  }, [needs, candidate, refreshMe]);

  return { activating: needs && !error, error: needs ? error : null };
}

function Shell({ me }: { me: Me }) {
  const [navOpen, nav] = useDisclosure(false);
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const tenant = activeTenantOf(me);
  const { activating, error } = useEnsureActiveTenant(me);
  const config = useQuery(publicConfigQueryOptions);
  const hasNavbar = tenant !== null || me.staff;

  let content;
  if (tenant || worksWithoutTenant(pathname)) content = <Outlet />;
  else if (activating) content = <LoadingState label="Opening your tenant…" />;
  else if (error) content = <ErrorState error={new Error(error)} title="Could not open your tenant" />;
  else content = <FirstTenantPage />;

  return (
    <>
      <a
        href="#main"
        className="skip-link"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to main content
      </a>
      <AppShell
        header={{ height: 60 }}
        navbar={hasNavbar ? { width: 260, breakpoint: 'sm', collapsed: { mobile: !navOpen } } : undefined}
        padding={{ base: 'md', sm: 'lg' }}
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between" wrap="nowrap" gap="sm">
            <Group gap="sm" wrap="nowrap" style={{ minWidth: 0 }}>
              {hasNavbar && (
                <Burger
                  opened={navOpen}
                  onClick={nav.toggle}
                  hiddenFrom="sm"
                  size="sm"
                  aria-label={navOpen ? 'Close navigation' : 'Open navigation'}
                  aria-expanded={navOpen}
                  aria-controls="main-navbar"
                />
              )}
              <Box visibleFrom="xs">
                <Logo />
              </Box>
              <Box hiddenFrom="xs">
                <Logo withText={false} />
              </Box>
              {tenant && <TenantSwitcher me={me} tenant={tenant} />}
            </Group>
            <UserMenu me={me} />
          </Group>
        </AppShell.Header>
        {hasNavbar && (
          <AppShell.Navbar id="main-navbar" aria-label="Main">
            <Navigation me={me} tenant={tenant} onNavigate={nav.close} />
            {config.data && (
              <Text size="xs" c="dimmed" px="md" py="sm">
                Rampart {config.data.version}
              </Text>
            )}
          </AppShell.Navbar>
        )}
        <AppShell.Main id="main" tabIndex={-1} style={{ outline: 'none' }}>
          <Container size="lg" px={0}>
            {!me.user.emailVerified && <VerifyEmailBanner email={me.user.email} />}
            {content}
          </Container>
        </AppShell.Main>
      </AppShell>
    </>
  );
}
