// Code-based route tree. Guards run in beforeLoad against the cached /me query.
// Over 500 lines on purpose: the route table of the whole web app; one place to read what URL shows what and who may
// open it.
import type { QueryClient } from '@tanstack/react-query';
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  notFound,
  Outlet,
  redirect,
} from '@tanstack/react-router';
import { AppLayout } from './components/AppLayout.tsx';
import { RouteAnnouncer } from './components/RouteAnnouncer.tsx';
import { NotFoundPage, RouteErrorPage } from './components/StatusPages.tsx';
import { meQueryOptions } from './lib/me.ts';
import { safeRedirect } from './lib/validate.ts';
import { AccountPage } from './pages/account/AccountPage.tsx';
import { HomePage } from './pages/home/HomePage.tsx';
import { CmmcPage } from './pages/cmmc/CmmcPage.tsx';
import { VerifyScriptPage } from './pages/cmmc/VerifyScriptPage.tsx';
import { HandoffStartPage } from './pages/cmmc/HandoffStartPage.tsx';
import { CmmcStaffPage } from './pages/staff/CmmcStaffPage.tsx';
import { WorkersPage } from './pages/workers/WorkersPage.tsx';
import { SetupPage, type SetupSearch } from './pages/auth/SetupPage.tsx';
import { ImportDetailPage } from './pages/imports/ImportDetailPage.tsx';
import { ImportsPage } from './pages/imports/ImportsPage.tsx';
import { ExplainResultPage } from './pages/llm/ExplainResultPage.tsx';
import { LanguageModelStatusPage } from './pages/llm/LanguageModelStatusPage.tsx';
import { FindingDetailPage } from './pages/findings/FindingDetailPage.tsx';
import { FindingsListPage, type FindingsSearch } from './pages/findings/FindingsListPage.tsx';
import { isScanner, isSeverity, isSort, isStatus, parseList } from './pages/findings/finding-ui.tsx';
import { CompliancePage } from './pages/compliance/CompliancePage.tsx';
import { ControlPage } from './pages/compliance/ControlPage.tsx';
import { FrameworkPage, type FrameworkSearch } from './pages/compliance/FrameworkPage.tsx';
import { isControlStatus } from './pages/compliance/compliance-ui.tsx';
import { isFrameworkId } from './lib/compliance-api.ts';
import { AssetDetailPage } from './pages/assets/AssetDetailPage.tsx';
import { isScanKind, isScanStatus } from './pages/scans/scan-ui.tsx';
import { ScanDetailPage } from './pages/scans/ScanDetailPage.tsx';
import { ScansListPage, type ScansSearch } from './pages/scans/ScansListPage.tsx';
import { ScheduleDetailPage } from './pages/schedules/ScheduleDetailPage.tsx';
import { SchedulesListPage } from './pages/schedules/SchedulesListPage.tsx';
import { ScanTemplatesPage } from './pages/templates/ScanTemplatesPage.tsx';
import { AssetsListPage, type AssetsSearch } from './pages/assets/AssetsListPage.tsx';
import { isAssetKind, isVerificationStatus } from './pages/assets/asset-ui.tsx';
import { AcceptInvitationPage, type AcceptInvitationSearch } from './pages/auth/AcceptInvitationPage.tsx';
import { ForgotPasswordPage } from './pages/auth/ForgotPasswordPage.tsx';
import { ResetPasswordPage, type ResetPasswordSearch } from './pages/auth/ResetPasswordPage.tsx';
import { SignInPage, type SignInSearch } from './pages/auth/SignInPage.tsx';
import { SignUpPage, type SignUpSearch } from './pages/auth/SignUpPage.tsx';
import { AuditLogPage } from './pages/settings/AuditLogPage.tsx';
import { MembersPage } from './pages/settings/MembersPage.tsx';
import { StorageSettingsPage } from './pages/settings/StorageSettingsPage.tsx';
import { TenantSettingsPage } from './pages/settings/TenantSettingsPage.tsx';
import { PlatformRolesPage } from './pages/staff/PlatformRolesPage.tsx';
import { HostedWorkersPage } from './pages/staff/HostedWorkersPage.tsx';
import { StaffAuditLogPage } from './pages/staff/StaffAuditLogPage.tsx';
import { isMeshTab, MeshEventsPage, type MeshEventsSearch } from './pages/staff/MeshEventsPage.tsx';
import { StaffGuard } from './pages/staff/StaffGuard.tsx';
import { StaffTenantsPage } from './pages/staff/StaffTenantsPage.tsx';
import { isHealthWindow, MeshHealthPage, type MeshHealthSearch } from './pages/staff/MeshHealthPage.tsx';
import { MeshConsolePage } from './pages/staff/MeshConsolePage.tsx';
import { MeshAskPage } from './pages/staff/MeshAskPage.tsx';
import { MeshOutboxPage } from './pages/staff/MeshOutboxPage.tsx';
import { MailboxPage, type MailboxSearch } from './pages/staff/MailboxPage.tsx';

export interface RouterContext {
  queryClient: QueryClient;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: () => (
    <>
      <RouteAnnouncer />
      <Outlet />
    </>
  ),
  notFoundComponent: NotFoundPage,
  errorComponent: RouteErrorPage,
});

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: async ({ context }) => {
    const me = await context.queryClient.ensureQueryData(meQueryOptions);
    throw redirect({ to: me ? '/home' : '/sign-in', replace: true });
  },
});

/** Sign-in and sign-up: a signed-in visitor goes straight on to where they were headed. */
async function redirectIfSignedIn(context: RouterContext, target: string | undefined) {
  const me = await context.queryClient.ensureQueryData(meQueryOptions);
  if (me) throw redirect({ href: safeRedirect(target), replace: true });
}

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in',
  validateSearch: (search: Record<string, unknown>): SignInSearch => {
    const notice = search['notice'];
    return {
      redirect: str(search['redirect']),
      notice: notice === 'password-reset' || notice === 'verified' ? notice : undefined,
    };
  },
  beforeLoad: ({ context, search }) => redirectIfSignedIn(context, search.redirect),
  component: function SignInRoute() {
    return <SignInPage search={signInRoute.useSearch()} />;
  },
});

const signUpRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-up',
  validateSearch: (search: Record<string, unknown>): SignUpSearch => ({
    redirect: str(search['redirect']),
    email: str(search['email']),
  }),
  beforeLoad: ({ context, search }) => redirectIfSignedIn(context, search.redirect),
  component: function SignUpRoute() {
    return <SignUpPage search={signUpRoute.useSearch()} />;
  },
});

const forgotPasswordRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/forgot-password',
  component: ForgotPasswordPage,
});

const resetPasswordRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/reset-password',
  validateSearch: (search: Record<string, unknown>): ResetPasswordSearch => ({
    token: str(search['token']),
    error: str(search['error']),
  }),
  component: function ResetPasswordRoute() {
    return <ResetPasswordPage search={resetPasswordRoute.useSearch()} />;
  },
});

const acceptInvitationRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/accept-invitation/$invitationId',
  validateSearch: (search: Record<string, unknown>): AcceptInvitationSearch => ({ email: str(search['email']) }),
  component: function AcceptInvitationRoute() {
    const { invitationId } = acceptInvitationRoute.useParams();
    return <AcceptInvitationPage invitationId={invitationId} search={acceptInvitationRoute.useSearch()} />;
  },
});

const setupRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/setup',
  validateSearch: (search: Record<string, unknown>): SetupSearch => ({ token: str(search['token']) }),
  component: function SetupRoute() {
    return <SetupPage search={setupRoute.useSearch()} />;
  },
});

// Public: checks a device-check script's signature in the browser (no session needed).
const verifyScriptRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/verify-script',
  component: VerifyScriptPage,
});

// Everything below needs a session; the layout supplies the shell and the active tenant.
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: async ({ context, location }) => {
    const me = await context.queryClient.ensureQueryData(meQueryOptions);
    if (!me) throw redirect({ to: '/sign-in', search: { redirect: location.href }, replace: true });
  },
  component: AppLayout,
});

const accountRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/account',
  component: AccountPage,
  staticData: { tenantOptional: true },
});
// Where sign-in lands: the tenant's overview.
const homeRoute = createRoute({ getParentRoute: () => appRoute, path: '/home', component: HomePage });
const assetsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/assets',
  validateSearch: (search: Record<string, unknown>): AssetsSearch => ({
    q: str(search['q']),
    kind: isAssetKind(search['kind']) ? search['kind'] : undefined,
    status: isVerificationStatus(search['status']) ? search['status'] : undefined,
    tag: str(search['tag']),
    archived: search['archived'] === true || search['archived'] === 'true' ? true : undefined,
  }),
  component: function AssetsRoute() {
    return <AssetsListPage search={assetsRoute.useSearch()} />;
  },
});
const assetDetailRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/assets/$assetId',
  component: function AssetDetailRoute() {
    const { assetId } = assetDetailRoute.useParams();
    return <AssetDetailPage key={assetId} assetId={assetId} />;
  },
});
const scansRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/scans',
  validateSearch: (search: Record<string, unknown>): ScansSearch => ({
    status: isScanStatus(search['status']) ? search['status'] : undefined,
    kind: isScanKind(search['kind']) ? search['kind'] : undefined,
    active: search['active'] === true || search['active'] === 'true' ? true : undefined,
  }),
  component: function ScansRoute() {
    return <ScansListPage search={scansRoute.useSearch()} />;
  },
});
const scanDetailRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/scans/$scanId',
  component: function ScanDetailRoute() {
    const { scanId } = scanDetailRoute.useParams();
    return <ScanDetailPage key={scanId} scanId={scanId} />;
  },
});
const schedulesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/schedules',
  component: SchedulesListPage,
});
const scheduleDetailRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/schedules/$scheduleId',
  component: function ScheduleDetailRoute() {
    const { scheduleId } = scheduleDetailRoute.useParams();
    return <ScheduleDetailPage key={scheduleId} scheduleId={scheduleId} />;
  },
});
const scanTemplatesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/scan-templates',
  component: ScanTemplatesPage,
});
const findingsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/findings',
  validateSearch: (search: Record<string, unknown>): FindingsSearch => ({
    q: str(search['q']),
    severity: parseList(search['severity'], isSeverity)?.join(','),
    status: search['status'] === 'all' || isStatus(search['status']) ? search['status'] : undefined,
    assetId: str(search['assetId']),
    scanner: isScanner(search['scanner']) ? search['scanner'] : undefined,
    scanId: str(search['scanId']),
    overdue: search['overdue'] === true || search['overdue'] === 'true' ? true : undefined,
    sort: isSort(search['sort']) ? search['sort'] : undefined,
    dir: search['dir'] === 'asc' || search['dir'] === 'desc' ? search['dir'] : undefined,
  }),
  component: function FindingsRoute() {
    return <FindingsListPage search={findingsRoute.useSearch()} />;
  },
});
const findingDetailRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/findings/$findingId',
  component: function FindingDetailRoute() {
    const { findingId } = findingDetailRoute.useParams();
    return <FindingDetailPage key={findingId} findingId={findingId} />;
  },
});
const complianceRoute = createRoute({ getParentRoute: () => appRoute, path: '/compliance', component: CompliancePage });
const frameworkRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/compliance/$framework',
  validateSearch: (search: Record<string, unknown>): FrameworkSearch => ({
    q: str(search['q']),
    controlStatus: isControlStatus(search['controlStatus']) ? search['controlStatus'] : undefined,
    group: str(search['group']),
  }),
  beforeLoad: ({ params }) => {
    if (!isFrameworkId(params.framework)) throw notFound();
  },
  component: function FrameworkRoute() {
    const { framework } = frameworkRoute.useParams();
    return <FrameworkPage key={framework} framework={framework as never} search={frameworkRoute.useSearch()} />;
  },
});
const controlRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/compliance/$framework/$controlId',
  beforeLoad: ({ params }) => {
    if (!isFrameworkId(params.framework)) throw notFound();
  },
  component: function ControlRoute() {
    const { framework, controlId } = controlRoute.useParams();
    return <ControlPage key={`${framework}/${controlId}`} framework={framework as never} controlId={controlId} />;
  },
});
const cmmcRoute = createRoute({ getParentRoute: () => appRoute, path: '/cmmc', component: CmmcPage });
// The bid portal's one-time handoff link; the page only previews it, a button claims it.
const cmmcStartRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/cmmc/start',
  staticData: { tenantOptional: true },
  validateSearch: (search: Record<string, unknown>): { token?: string } => ({
    token: typeof search['token'] === 'string' ? search['token'] : undefined,
  }),
  component: function CmmcStartRoute() {
    return <HandoffStartPage token={cmmcStartRoute.useSearch().token ?? ''} />;
  },
});
const workersRoute = createRoute({ getParentRoute: () => appRoute, path: '/workers', component: WorkersPage });
const importsRoute = createRoute({ getParentRoute: () => appRoute, path: '/imports', component: ImportsPage });
const importDetailRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/imports/$importId',
  component: function ImportDetailRoute() {
    const { importId } = importDetailRoute.useParams();
    return <ImportDetailPage key={importId} importId={importId} />;
  },
});
const explainResultRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/explain-results',
  component: ExplainResultPage,
});

const settingsRoute = createRoute({ getParentRoute: () => appRoute, path: '/settings' });
const settingsIndexRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/settings/members', replace: true });
  },
});
const membersRoute = createRoute({ getParentRoute: () => settingsRoute, path: '/members', component: MembersPage });
const tenantSettingsRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/tenant',
  component: TenantSettingsPage,
});
const auditLogRoute = createRoute({ getParentRoute: () => settingsRoute, path: '/audit-log', component: AuditLogPage });
const storageSettingsRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/storage',
  component: StorageSettingsPage,
});

// Staff area: the guard renders a "Staff only" page for everyone else; later staff pages
// (/settings/cmmc, /settings/mesh, ...) get their own guarded routes.
const staffRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/staff',
  component: StaffGuard,
  staticData: { tenantOptional: true },
});
const staffIndexRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/settings/staff/audit-log', replace: true });
  },
});
const staffAuditRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/audit-log',
  component: StaffAuditLogPage,
});
const staffTenantsRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/tenants',
  component: StaffTenantsPage,
});
const staffRolesRoute = createRoute({ getParentRoute: () => staffRoute, path: '/roles', component: PlatformRolesPage });
const staffHostedWorkersRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/workers',
  component: HostedWorkersPage,
});
const staffLlmRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/language-model',
  component: LanguageModelStatusPage,
});
// Staff: failed outbox deliveries, sent again from here.
const staffMeshOutboxRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/mesh-outbox',
  component: MeshOutboxPage,
});
// Super-admins: the mails kept instead of sent when there is no SMTP; ?mail= opens one.
const staffMailboxRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/mailbox',
  validateSearch: (search: Record<string, unknown>): MailboxSearch => {
    const mail = Number(search['mail']);
    const to = str(search['to'])?.slice(0, 320);
    return { mail: Number.isSafeInteger(mail) && mail > 0 ? mail : undefined, to: to || undefined };
  },
  component: function StaffMailboxRoute() {
    return <MailboxPage search={staffMailboxRoute.useSearch()} />;
  },
});
const staffMeshRoute = createRoute({
  getParentRoute: () => staffRoute,
  path: '/mesh',
  validateSearch: (search: Record<string, unknown>): MeshEventsSearch => ({
    tab: isMeshTab(search['tab']) ? search['tab'] : undefined,
  }),
  component: function StaffMeshRoute() {
    return <MeshEventsPage search={staffMeshRoute.useSearch()} />;
  },
});

// Staff mesh tools at their documented paths (docs/mesh.md §11) (super-admins; the pages show "Super-admins only"
// to everyone else, and the server checks again on every call).
const meshHealthRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/mesh-health',
  staticData: { tenantOptional: true },
  validateSearch: (search: Record<string, unknown>): MeshHealthSearch => ({
    window: isHealthWindow(search['window']) ? search['window'] : undefined,
  }),
  component: function MeshHealthRoute() {
    return <MeshHealthPage search={meshHealthRoute.useSearch()} />;
  },
});
const meshConsoleRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/mesh',
  staticData: { tenantOptional: true },
  component: MeshConsolePage,
});
// Staff (not only super-admins): ask operations over the mesh records.
const meshAskRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/mesh-ask',
  staticData: { tenantOptional: true },
  component: MeshAskPage,
});
// Staff: the CMMC dashboard (listCmmcProfilesStaff).
const cmmcStaffRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/cmmc',
  staticData: { tenantOptional: true },
  component: CmmcStaffPage,
});

const routeTree = rootRoute.addChildren([
  indexRoute,
  signInRoute,
  signUpRoute,
  forgotPasswordRoute,
  resetPasswordRoute,
  acceptInvitationRoute,
  setupRoute,
  verifyScriptRoute,
  appRoute.addChildren([
    accountRoute,
    homeRoute,
    assetsRoute,
    assetDetailRoute,
    scansRoute,
    scanDetailRoute,
    schedulesRoute,
    scheduleDetailRoute,
    scanTemplatesRoute,
    findingsRoute,
    findingDetailRoute,
    complianceRoute,
    frameworkRoute,
    controlRoute,
    cmmcRoute,
    cmmcStartRoute,
    workersRoute,
    importsRoute,
    importDetailRoute,
    explainResultRoute,
    settingsRoute.addChildren([
      settingsIndexRoute,
      membersRoute,
      tenantSettingsRoute,
      auditLogRoute,
      storageSettingsRoute,
      staffRoute.addChildren([
        staffIndexRoute,
        staffAuditRoute,
        staffTenantsRoute,
        staffRolesRoute,
        staffMeshRoute,
        staffMeshOutboxRoute,
        staffMailboxRoute,
        staffHostedWorkersRoute,
        staffLlmRoute,
      ]),
      meshHealthRoute,
      meshConsoleRoute,
      meshAskRoute,
      cmmcStaffRoute,
    ]),
  ]),
]);

export function createAppRouter(queryClient: QueryClient) {
  return createRouter({
    routeTree,
    context: { queryClient },
    defaultPreload: 'intent',
    defaultPreloadStaleTime: 0,
    scrollRestoration: true,
    defaultNotFoundComponent: NotFoundPage,
  });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
  interface StaticDataRouteOption {
    /** The page works without an active tenant (account, staff area). */
    tenantOptional?: boolean;
  }
}
