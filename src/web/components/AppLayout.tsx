// The signed-in shell: header (burger, tenant switcher, user menu), navbar, verification banner,
// and the first-run "create your first tenant" screen for users without a tenant.
import { AppShell, Box, Burger, Container, Group, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { Outlet, useMatches, useRouter } from '@tanstack/react-router';
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

export function AppLayout() {
  const meQuery = useMeQuery();
  if (meQuery.data === undefined) {
    if (meQuery.isError)
      return (
        <Container size="sm" py="xl">
          <ErrorState
            error={meQuery.error}
            title="Could not load your account"
            onRetry={() => void meQuery.refetch()}
          />
        </Container>
      );
    return <FullPageLoader />;
  }
  if (meQuery.data === null) return <RedirectToSignIn />;
  return <Shell me={meQuery.data} />;
}

/** The session ended (sign-out, expiry): go to sign-in once, remembering where the user was. */
function RedirectToSignIn() {
  const router = useRouter();
  useEffect(() => {
    const { pathname, href } = router.state.location;
    if (pathname === '/sign-in') return;
    void router.navigate({ to: '/sign-in', search: { redirect: href }, replace: true });
  }, [router]);
  return <FullPageLoader label="Your session has ended. Opening the sign-in page…" />;
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
  // Decided from the rendered matches, not the location: while a navigation is pending the
  // location is already the new one but the outlet still shows the old page.
  const tenantOptional = useMatches({
    select: (matches) => matches.some((m) => m.staticData?.tenantOptional === true),
  });
  const tenant = activeTenantOf(me);
  const { activating, error } = useEnsureActiveTenant(me);
  const config = useQuery(publicConfigQueryOptions);
  const hasNavbar = tenant !== null || me.staff;

  let content;
  if (tenant || tenantOptional) content = <Outlet />;
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
