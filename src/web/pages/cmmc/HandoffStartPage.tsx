// /cmmc/start?token=…: the compliance start page a bid-portal handoff link opens. Opening the page
// (or a link previewer fetching it) does not use the link; the signed-in owner or admin claims it
// for the active tenant with a button, and Scope opens prefilled from the bid portal's data.
import { Alert, Button, Group, Paper, Stack, Text } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { claimHandoff, previewHandoff, profileQuery, storeHandoffPrefill } from '../../lib/cmmc-api.ts';
import { activeTenantOf, isTenantAdmin, useMe } from '../../lib/me.ts';

export function HandoffStartPage({ token }: { token: string }) {
  const me = useMe();
  const tenant = activeTenantOf(me);
  const navigate = useNavigate();
  const preview = useQuery({
    queryKey: ['cmmc', 'handoff', token],
    queryFn: () => previewHandoff(token),
    retry: false,
    enabled: !!token,
  });
  const claim = useMutation({
    mutationFn: () => claimHandoff(tenant!.id, token),
    onSuccess: (r) => {
      storeHandoffPrefill(tenant!.id, r.prefill, r.profileExists);
      void navigate({ to: '/cmmc' });
    },
  });
  // Whether the active tenant already has a profile: then the link's details are shown, not filled in.
  const existing = useQuery({ ...profileQuery(tenant?.id ?? ''), enabled: !!tenant && isTenantAdmin(tenant) });
  const hasProfile = !!existing.data?.profile;
  const p = preview.data?.prefill as { cageCode?: string; companyName?: string; contactEmail?: string } | undefined;

  return (
    <>
      <PageHeader
        title="Start CMMC Level 1"
        description="You came from the bid portal. Use the link for your company to start the Level 1 self-assessment with the details it sent."
      />
      {!token ? (
        <Alert color="red" variant="light" title="No link">
          This page needs the link from the bid portal.
        </Alert>
      ) : preview.isPending ? (
        <LoadingState label="Checking the link…" />
      ) : preview.isError ? (
        <ErrorState error={preview.error} title="This link cannot be used" />
      ) : (
        <Paper withBorder p="lg" radius="md" maw={640}>
          <Stack gap="sm">
            <Text size="sm">
              Company: <strong>{p?.companyName}</strong> · CAGE code <strong>{p?.cageCode}</strong> · contact{' '}
              {p?.contactEmail}
            </Text>
            <Text size="sm" c="dimmed">
              The link works once and for 30 minutes. Using it starts the profile of{' '}
              {tenant ? <strong>{tenant.name}</strong> : 'your company'} with these details; you check and save them in
              Scope.
            </Text>
            {hasProfile && (
              <Alert color="yellow" variant="light" data-testid="handoff-has-profile">
                {tenant!.name} already has a CMMC profile ({existing.data!.profile!.companyName}, CAGE{' '}
                {existing.data!.profile!.cageCode}). Using the link does not change it: Scope shows the bid
                portal&apos;s details next to it so you can update what differs.
              </Alert>
            )}
            <ErrorAlert error={claim.error} title="Could not use the link" />
            {tenant && isTenantAdmin(tenant) ? (
              <Group>
                <Button onClick={() => claim.mutate()} loading={claim.isPending}>
                  Use this link for {tenant.name}
                </Button>
              </Group>
            ) : (
              <Alert color="yellow" variant="light">
                {tenant
                  ? `Only owners and admins of ${tenant.name} can start its CMMC profile.`
                  : 'Create or join your company’s tenant first, then open the link again.'}
              </Alert>
            )}
          </Stack>
        </Paper>
      )}
    </>
  );
}
