// Composition root: builds the Fastify app from explicit dependencies, without listening.
// Tests call buildApp() and use app.inject(); main.ts listens.
// Over 500 lines on purpose: the composition root: every module is wired here, by design, so dependencies are read in
// one place.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import {
  createAssetsService,
  createDnsVerifier,
  registerAssetRoutes,
  type AssetsService,
  type DnsVerifier,
} from '../assets/index.ts';
import { createAuditService, type AuditService } from '../audit/index.ts';
import { createStorage, registerStorageRoutes, type AppStorage } from '../storage/index.ts';
import { createAuth, type Auth } from '../auth/auth.ts';
import { registerAuthRoutes } from '../auth/auth-routes.ts';
import type { Mailer } from '../auth/mailer.ts';
import { createMailbox, mailboxMailer } from '../auth/mailbox.ts';
import type { Database } from '../db/client.ts';
import type { Config } from '../lib/config.ts';
import { createConcurrencyLimiter, type ConcurrencyLimiter } from '../lib/concurrency.ts';
import { createSecretBox, type SecretBox } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { createMesh, DISPATCH_PATH, type FastPath, type InFlight, type Mesh, type Reporter } from '../mesh/index.ts';
import type { OutboxOptions } from '../mesh/mesh-outbox.ts';
import type { Logger } from 'pino';
import { runWithRequestInfo } from '../lib/request-context.ts';
import { registerHealthRoutes } from '../ops/health-routes.ts';
import { APP_VERSION } from '../ops/version.ts';
import {
  createMeshRecordsService,
  createSetupService,
  createStaffService,
  registerMailboxRoutes,
  registerMeshOutboxRoutes,
  registerMeshRecordsRoutes,
  registerSetupRoutes,
  registerStaffRoutes,
  type SetupService,
  type StaffService,
} from '../staff/index.ts';
import {
  createMeshAskService,
  createMeshConsoleService,
  createMeshHealthService,
  registerMeshAskRoutes,
  registerMeshConsoleRoutes,
  registerMeshHealthRoutes,
} from '../staff/index.ts';
import { createTenantsService, registerTenantRoutes, type TenantsService } from '../tenants/index.ts';
import { createOverviewService, registerOverviewRoutes } from '../overview/index.ts';
import {
  createScansService,
  createSchedulesService,
  registerScanRoutes,
  type ScansService,
  type SchedulesService,
} from '../scans/index.ts';
import {
  createOobService,
  type OobService,
  createTemplatesService,
  registerOobRoutes,
  registerTemplateRoutes,
  type TemplatesService,
} from '../templates/index.ts';
import {
  bulkWritesOf,
  createBatchedFindingsIngest,
  createFindingsService,
  registerFindingRoutes,
  type BatchedFindingsIngest,
  type FindingsService,
} from '../findings/index.ts';
import { createComplianceService, registerComplianceRoutes, type ComplianceService } from '../compliance/index.ts';
import {
  createCmmcProgram,
  createCmmcService,
  lazySigner,
  registerCmmcFlows,
  registerCmmcProgramRoutes,
  registerCmmcRoutes,
  type CmmcProgram,
  type CmmcService,
} from '../cmmc/index.ts';
import {
  createEnrollmentService,
  createHostedWorkers,
  createImportsService,
  createIngestionService,
  createLeaseService,
  createUploadService,
  createArchiveService,
  createWebhookService,
  createWorkerAuth,
  registerHostedWorkerRoutes,
  registerIngestionRoutes,
  registerLeaseRoutes,
  registerWorkersRoutes,
  type EnrollmentService,
  type HostedWorkers,
  type ImportsService,
  type IngestionService,
  type LeaseService,
  type UploadService,
  type WorkerAuth,
} from '../workers/index.ts';
import {
  createLlmGateway,
  createLlmService,
  registerLlmRoutes,
  type LlmGatewayOptions,
  type LlmService,
} from '../llm/index.ts';
import { createEgressPolicy, guardedFetch, type EgressResolver } from '../lib/egress.ts';
import { registerErrorHandling, sendError, type UnhandledErrorListener } from './plugins/errors.ts';
import { registerInputHygiene } from './plugins/input-hygiene.ts';
import { registerSession, type SessionGuards } from './plugins/session.ts';

export interface AppDeps {
  config: Config;
  database: Database;
  /** SMTP when SMTP_URL is set; without it, what a mail goes to after the mailbox keeps it (the log). */
  mailer: Mailer;
  /** Signs sessions and CSRF tokens (AUTH_SECRET or the generated one in DATA_DIR). */
  authSecret: string;
  /** 32-byte key for secrets stored at rest (APP_ENCRYPTION_KEY or the generated one). */
  encryptionKey: Buffer;
  /** Keys being rotated out (APP_ENCRYPTION_KEY_PREVIOUS): open stored secrets, never seal. */
  previousEncryptionKeys?: Buffer[];
  logger?: FastifyServerOptions['logger'];
  /** An existing pino logger (main.ts shares one with start-up code). */
  loggerInstance?: FastifyBaseLogger;
  /** Built SPA directory; null serves the API only. */
  webDir?: string | null;
  onUnhandledError?: UnhandledErrorListener;
  /** Sign-in attempts per client address per minute (login throttling). */
  signInPerMinute?: number;
  /** Sign-ups per client address per minute. */
  signUpPerMinute?: number;
  clock?: Clock;
  /** The outbound mesh client's fetch (defaults to the global one). */
  fetch?: typeof fetch;
  outboxOptions?: OutboxOptions;
  /** DNS ownership checks (defaults to DNS_RESOLVERS); tests point it at a loopback DNS server. */
  dnsVerifier?: DnsVerifier;
  /** How the egress policy resolves names (default: the system resolver); tests use their DNS server. */
  egressResolver?: EgressResolver;
  /** Language-model gateway timeouts and retries (LLM_* config gives the endpoint); tests shorten them. */
  llmOptions?: Omit<LlmGatewayOptions, 'baseUrl' | 'apiKey' | 'model'>;
}

export interface Services {
  auth: Auth;
  audit: AuditService;
  staff: StaffService;
  /** First-run setup link and the installation's settings. */
  setup: SetupService;
  /** Out-of-band callbacks of template scans (main starts their DNS listener). */
  oob: OobService;
  tenants: TenantsService;
  guards: SessionGuards;
  /** Seals tenant secrets (S3 keys, webhook secrets) before they are stored. */
  secretBox: SecretBox;
  mesh: Mesh;
  reporter: Reporter;
  assets: AssetsService;
  scans: ScansService;
  /** Recurring scans; tick() is what the cron hook runs. */
  schedules: SchedulesService;
  /** Tenants' own scan templates (template leases carry them). */
  templates: TemplatesService;
  /** Built-in storage and tenants' own S3 buckets (storage.forTenant). */
  storage: AppStorage;
  findings: FindingsService;
  /** Turns a scan's parsed report into findings: the ingestion runner's begin → batch → finish. */
  findingsIngest: BatchedFindingsIngest;
  /** Framework catalogues, control status and per-control evidence. */
  compliance: ComplianceService;
  /** Worker enrollment codes, enrolled workers, revocation. */
  workerEnrollments: EnrollmentService;
  /** Authenticates signed worker requests (bearer, X-Rampart-Signature, sentAt, nonce). */
  workerAuth: WorkerAuth;
  /** Scan leases for workers (lease, heartbeat, progress, release, fail, reaper). */
  leases: LeaseService;
  /** Report uploads (init, PUT, finalize, legacy, orphan reaper). */
  uploads: UploadService;
  /** Report ingestion jobs: the queue (enqueue) and this replica's runner (start/stop, drain). */
  ingestion: IngestionService;
  /** "Import results": a member's report upload for an asset, and the import history. */
  imports: ImportsService;
  /** Rampart-hosted workers: created by super-admins, run in-process by main.ts when EMBEDDED_WORKER is on. */
  hostedWorkers: HostedWorkers;
  /** Language-model helpers: result-file explainer (with private history) and evidence review. */
  llm: LlmService;
  /** Concurrency limits of uploaded-file analysis in this process (per user and in all); shared by every route that parses an uploaded file. */
  fileAnalysis: ConcurrencyLimiter;
  /** CMMC Level 1: profile, device-check tokens and signed scripts, the verify route. */
  cmmc: CmmcService;
  /** CMMC Level 1 program: attestations, policies, score, SPRS, exports, renewals, handoff, staff list. */
  cmmcProgram: CmmcProgram;
}

export type App = FastifyInstance & { services: Services };

/** Key names whose values never reach a log line. */
export const LOG_REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'req.headers["x-svc-signature"]',
  'req.headers["x-rampart-signature"]',
  'req.headers["x-cron-secret"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.newPassword',
  '*.currentPassword',
  '*.token',
  '*.secret',
  '*.secretAccessKey',
  '*.apiKey',
];

/** A URL fit for logs: no query string (tokens ride there), no token or invitation id in the path. */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return (
    path.replace(/(\/(?:reset-password|accept-invitation)\/)[^/?]+/g, '$1[redacted]') + (q < 0 ? '' : '?[redacted]')
  );
}

/** Shared by Fastify's logger and main.ts's pino instance. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: LOG_REDACT, censor: '[redacted]' },
    serializers: {
      req: (req: {
        method?: string;
        url?: string;
        hostname?: string;
        ip?: string;
        socket?: { remotePort?: number };
      }) => ({
        method: req.method,
        url: loggableUrl(req.url ?? ''),
        host: req.hostname,
        remoteAddress: req.ip,
      }),
    },
  };
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
/** The caller's x-request-id when well formed, else a new one. */
const requestIdFor = (incoming: string | string[] | undefined): string =>
  typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) ? incoming : newId();
/** Fastify's default, which it applies only to servers it creates itself. */
const FASTIFY_KEEP_ALIVE_MS = 72_000;

export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  upgradeInsecureRequests: null,
};

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  let fastPath: FastPath | null = null;
  const app = Fastify({
    ...(deps.loggerInstance
      ? { loggerInstance: deps.loggerInstance }
      : { logger: deps.logger ?? loggerOptions(config.LOG_LEVEL) }),
    trustProxy: config.TRUST_PROXY,
    bodyLimit: 1024 * 1024,
    requestIdHeader: false,
    genReqId: (req) => requestIdFor(req.headers['x-request-id']),
    return503OnClosing: false,
    // The mesh dispatch URL is answered before Fastify's router (mesh-fast-path.ts); the rest as
    // Fastify would. app.inject() bypasses this and reaches the same protocol through the route.
    serverFactory: (handler) => {
      const server = createServer((req, res) => {
        if (!fastPath?.(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = FASTIFY_KEEP_ALIVE_MS;
      return server;
    },
    routerOptions: { ignoreTrailingSlash: true },
  }) as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const audit = createAuditService({ db: database.db });
  const staff = createStaffService({ db: database.db, staffDomains: config.STAFF_EMAIL_DOMAINS, audit });
  const tenants = createTenantsService({ db: database.db, audit });
  const clock = deps.clock ?? systemClock;
  // Without SMTP every mail is also kept for the super-admins (Staff → Mailbox).
  const mailbox = createMailbox({ db: database.db, clock });
  const mailer = config.SMTP_URL ? deps.mailer : mailboxMailer(mailbox, deps.mailer, app.log);
  const auth = createAuth({
    db: database.db,
    baseUrl: config.PUBLIC_BASE_URL,
    secret: deps.authSecret,
    mailer,
    audit,
    signupEnabled: config.SIGNUP_ENABLED,
    ...(deps.signInPerMinute ? { signInPerMinute: deps.signInPerMinute } : {}),
    ...(deps.signUpPerMinute ? { signUpPerMinute: deps.signUpPerMinute } : {}),
    onTenantCreated: (tenantId, user) => tenantCreated(tenantId, user),
  });
  // Bound below, once the workers module exists: a new tenant's worker and signing secret.
  let tenantCreated: (tenantId: string, user: { id: string; email: string }) => Promise<void> = async () => undefined;

  // Server-side connections a tenant or a peer can point somewhere go through this (docs/security.md).
  const egress = createEgressPolicy({
    allow: config.EGRESS_ALLOW,
    ...(deps.egressResolver ? { resolver: deps.egressResolver } : {}),
  });
  const egressFetch = guardedFetch(egress);
  const spaIndexPath = deps.webDir ? join(deps.webDir, 'index.html') : null;
  const spaIndex = spaIndexPath && existsSync(spaIndexPath) ? readFileSync(spaIndexPath) : null;
  let mesh: Mesh | null = null;
  const reportUnhandled = (error: unknown, method: string, route: string, requestId: string) => {
    const e = error instanceof Error ? error : new Error(String(error));
    // The fingerprint leaves the message out: it often repeats caller input, and every variant
    // would then slip past the 5-minute de-duplication.
    void mesh?.reporter
      .report({
        kind: 'system.error',
        severity: 'error',
        title: `Unhandled error on ${method} ${route}`,
        detail: `${e.name}: ${e.message}`.slice(0, 2000),
        fingerprint: `${method} ${route}:${e.name}:${(e as { code?: unknown }).code ?? ''}`,
        data: { route, method, requestId },
      })
      .catch((err: unknown) => app.log.error({ err, requestId }, 'could not report system.error'));
  };
  registerErrorHandling(
    app,
    (error, request) => {
      deps.onUnhandledError?.(error, request);
      reportUnhandled(error, request.method, request.routeOptions.url ?? 'unmatched', String(request.id));
    },
    spaIndex,
  );
  const inFlight = trackInFlight(app);
  registerInputHygiene(app);
  await app.register(helmet, {
    contentSecurityPolicy: { directives: CONTENT_SECURITY_POLICY },
    crossOriginEmbedderPolicy: false,
  });
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Rampart API',
        version: APP_VERSION,
        description: 'Multi-tenant security scanning and compliance platform.',
      },
      components: { securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'rampart.session_token' } } },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  const guards = registerSession(app, { auth, secret: deps.authSecret, staff });
  registerHealthRoutes(app, {
    db: database.db,
    dbKind: database.kind,
    metricsToken: config.METRICS_TOKEN,
    signupEnabled: config.SIGNUP_ENABLED,
    mailDelivery: config.SMTP_URL ? 'smtp' : 'mailbox',
  });
  registerAuthRoutes(app, auth, config.PUBLIC_BASE_URL);
  registerTenantRoutes(app, { guards, tenants, staff });
  registerOverviewRoutes(app, { guards, overview: createOverviewService({ db: database.db, clock }) });
  registerStaffRoutes(app, { guards, staff, audit });
  const setup = createSetupService({
    db: database.db,
    audit,
    configuredDomains: config.STAFF_EMAIL_DOMAINS,
    publicBaseUrl: config.PUBLIC_BASE_URL,
  });
  registerSetupRoutes(app, { guards, setup });
  const meshRecords = createMeshRecordsService({ db: database.db });
  registerMeshRecordsRoutes(app, { guards, records: meshRecords });
  mesh = createMesh(app, {
    config,
    db: database.db,
    dbKind: database.kind,
    ...(database.copyRows ? { copyRows: database.copyRows } : {}),
    clock,
    log: app.log as unknown as Logger,
    fetch: deps.fetch ?? egressFetch,
    ...(deps.outboxOptions ? { outboxOptions: deps.outboxOptions } : {}),
  });
  {
    // Staff mesh tools: health rollup and sweep, client console (super-admin); failed outbox deliveries (staff).
    const records = meshRecords;
    registerMeshOutboxRoutes(app, { guards, audit, records, db: database.db, clock, outbox: mesh.outbox });
    registerMailboxRoutes(app, { guards, mailbox, smtpConfigured: Boolean(config.SMTP_URL) });
    registerMeshHealthRoutes(app, {
      guards,
      audit,
      selfName: config.SVC_SELF_NAME,
      health: createMeshHealthService({
        db: database.db,
        peers: mesh.peers,
        client: mesh.client,
        clock,
        selfName: config.SVC_SELF_NAME,
      }),
    });
    registerMeshConsoleRoutes(app, {
      guards,
      audit,
      console: createMeshConsoleService({
        peers: mesh.peers,
        client: mesh.client,
        records,
        selfName: config.SVC_SELF_NAME,
        managementPeer: config.SVC_MANAGEMENT_PEER,
        bidPeer: config.SVC_BID_PEER,
      }),
    });
  }
  fastPath = mesh.dispatchFastPath({
    inFlight,
    requestId: requestIdFor,
    onUnexpected(error, requestId) {
      app.log.error({ err: error, requestId }, 'unhandled error in mesh dispatch');
      reportUnhandled(error, 'POST', DISPATCH_PATH, requestId);
    },
  });

  if (deps.webDir && spaIndex) await registerWebApp(app, deps.webDir);

  const secretBox = createSecretBox(deps.encryptionKey, deps.previousEncryptionKeys);
  // One budget for every analysis of an uploaded file (explainer, imports): it bounds their memory.
  const fileAnalysis = createConcurrencyLimiter({
    perKey: config.FILE_ANALYSIS_MAX_PER_USER,
    total: config.FILE_ANALYSIS_MAX_CONCURRENT,
    what: 'file analyses',
  });
  const { storage, settings: storageSettings } = createStorage({
    db: database.db,
    dataDir: config.DATA_DIR,
    secretBox,
    audit,
    clock,
    egress,
    ...(config.STORAGE_S3_ENDPOINT &&
    config.STORAGE_S3_BUCKET &&
    config.STORAGE_S3_ACCESS_KEY_ID &&
    config.STORAGE_S3_SECRET_ACCESS_KEY
      ? {
          platformS3: {
            endpoint: config.STORAGE_S3_ENDPOINT,
            bucket: config.STORAGE_S3_BUCKET,
            region: config.STORAGE_S3_REGION,
            pathStyle: config.STORAGE_S3_PATH_STYLE,
            prefix: config.STORAGE_S3_PREFIX ?? '',
            accessKeyId: config.STORAGE_S3_ACCESS_KEY_ID,
            secretAccessKey: config.STORAGE_S3_SECRET_ACCESS_KEY,
          },
        }
      : {}),
  });
  app.addHook('onClose', async () => storage.close());
  registerStorageRoutes(app, { guards, settings: storageSettings });

  const assets = createAssetsService({
    db: database.db,
    storage,
    imageArchiveMaxBytes: config.IMAGE_ARCHIVE_MAX_BYTES,
    verifier:
      deps.dnsVerifier ?? createDnsVerifier({ resolvers: config.DNS_RESOLVERS, timeoutMs: config.DNS_TIMEOUT_MS }),
    reporter: mesh.reporter,
    audit,
    clock,
  });
  registerAssetRoutes(app, { guards, assets });
  const scans = createScansService({ db: database.db, audit, clock });
  const schedules = createSchedulesService({ db: database.db, audit, clock, log: app.log });
  registerScanRoutes(app, { guards, scans, schedules, cronSecret: config.CRON_SECRET });
  const oob = createOobService({
    db: database.db,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    enabled: config.oobCallbacks,
    dnsDomain: config.OOB_DNS_DOMAIN,
  });
  const templates = createTemplatesService({ db: database.db, audit, clock, oob: oob.support });
  registerTemplateRoutes(app, { guards, templates });

  const findings = createFindingsService({ db: database.db, audit, clock });
  registerFindingRoutes(app, { guards, findings, baseUrl: config.PUBLIC_BASE_URL });
  const findingsIngest = createBatchedFindingsIngest({
    db: database.db,
    reporter: mesh.reporter,
    clock,
    ...bulkWritesOf(database),
  });
  const compliance = createComplianceService({
    db: database.db,
    storage,
    audit,
    clock,
    evidenceMaxBytes: config.EVIDENCE_MAX_BYTES,
  });
  await registerComplianceRoutes(app, { guards, compliance, evidenceMaxBytes: config.EVIDENCE_MAX_BYTES });
  const cmmc = createCmmcService({
    db: database.db,
    audit,
    clock,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    // The program is made below; a change is only ever made once both exist.
    afterChange: (tenantId) => cmmcProgram.recheckStatus(tenantId),
    signer: lazySigner({
      seed: config.CMMC_SCRIPT_SIGNING_SEED,
      embedded: config.embedded,
      dataDir: config.DATA_DIR,
      warn: (msg) => app.log.warn(msg),
    }),
  });
  registerCmmcRoutes(app, { guards, cmmc });
  const cmmcProgram = createCmmcProgram({
    db: database.db,
    audit,
    clock,
    storage,
    outbox: mesh.outbox,
    mailer,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    bidPeer: config.SVC_BID_PEER,
    managementPeer: config.SVC_MANAGEMENT_PEER,
    evidenceMaxBytes: config.EVIDENCE_MAX_BYTES,
    log: app.log,
  });
  await registerCmmcProgramRoutes(app, {
    guards,
    program: cmmcProgram,
    cronSecret: config.CRON_SECRET,
    evidenceMaxBytes: config.EVIDENCE_MAX_BYTES,
  });
  registerCmmcFlows(mesh, cmmcProgram);
  const workerEnrollments = createEnrollmentService({ db: database.db, audit, clock });
  const workerAuth = createWorkerAuth({ db: database.db, secretBox, clock });
  const webhooks = createWebhookService({ db: database.db, secretBox, audit, clock });
  registerWorkersRoutes(app, { guards, enrollments: workerEnrollments, webhooks, workerAuth, clock });
  const leases = createLeaseService({
    db: database.db,
    clock,
    recheckForLease: (assetId) => assets.recheckForLease(assetId),
    maxAttempts: config.WORKER_MAX_ATTEMPTS,
    leaseSeconds: config.WORKER_LEASE_SECONDS,
    oobLeaseOptions: async (q, scanId) => {
      const o = await oob.leaseOptions(q, scanId);
      return o ? { ...o } : undefined;
    },
  });
  registerOobRoutes(app, { oob, workerAuth });
  const ingestion = createIngestionService({
    db: database.db,
    storage,
    findings: findingsIngest,
    clock,
    log: app.log,
    writers: database.kind === 'postgres' ? 2 : 1,
    lockSeconds: config.INGEST_LOCK_SECONDS,
    parseHeapMb: config.IMPORT_PARSE_HEAP_MB,
    builtinNode: config.STORAGE_S3_ENDPOINT ? null : `${hostname()}:${resolve(config.DATA_DIR)}`,
  });
  // Stop the runner before the database closes: a running job is given back at its next batch.
  app.addHook('onClose', async () => ingestion.stop());
  const imports = createImportsService({
    db: database.db,
    storage,
    ingestion,
    audit,
    clock,
    reportMaxBytes: config.REPORT_MAX_BYTES,
  });
  await registerIngestionRoutes(app, { guards, imports, reportMaxBytes: config.REPORT_MAX_BYTES, fileAnalysis });
  const uploads = createUploadService({
    db: database.db,
    clock,
    storage,
    leases,
    ingestion,
    encryptionKey: deps.encryptionKey,
    ...(deps.previousEncryptionKeys ? { previousEncryptionKeys: deps.previousEncryptionKeys } : {}),
    publicBaseUrl: config.PUBLIC_BASE_URL,
    reportMaxBytes: config.REPORT_MAX_BYTES,
  });
  const archives = createArchiveService({ db: database.db, storage, leases });
  registerLeaseRoutes(app, {
    workerAuth,
    leases,
    uploads,
    archives,
    enrollments: workerEnrollments,
    clock,
    legacyReportMaxBytes: config.WORKER_LEGACY_REPORT_MAX_BYTES,
  });
  const hostedWorkers = createHostedWorkers({
    db: database.db,
    secretBox,
    enrollments: workerEnrollments,
    audit,
    clock,
    log: app.log,
    concurrency: config.EMBEDDED_WORKER_CONCURRENCY,
    egress,
    ...(config.OSV_DB_PATH ? { osvDbPath: config.OSV_DB_PATH } : {}),
  });
  registerHostedWorkerRoutes(app, { guards, hostedWorkers });
  if (config.TENANT_HOSTED_WORKER)
    tenantCreated = async (tenantId, user) => {
      try {
        const caller = { userId: user.id, email: user.email };
        await webhooks.ensure(tenantId, caller);
        await hostedWorkers.create(tenantId, caller);
      } catch (err) {
        app.log.error({ err, tenantId }, "the new tenant's hosted worker could not be set up");
      }
    };
  const llmGatewayOptions = {
    fetch: egressFetch,
    ...deps.llmOptions,
    baseUrl: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL,
    structuredOutputs: config.LLM_STRUCTURED_OUTPUT,
  };
  const llm = createLlmService({
    db: database.db,
    clock,
    gateway: createLlmGateway(llmGatewayOptions),
    parseHeapMb: config.IMPORT_PARSE_HEAP_MB,
  });
  await registerLlmRoutes(app, { guards, llm, fileAnalysis });
  // Staff "ask operations" over the mesh records: its own gateway on the same LLM_* settings.
  registerMeshAskRoutes(app, {
    guards,
    audit,
    ask: createMeshAskService({
      db: database.db,
      clock,
      health: createMeshHealthService({
        db: database.db,
        peers: mesh.peers,
        client: mesh.client,
        clock,
        selfName: config.SVC_SELF_NAME,
      }),
      gateway: createLlmGateway(llmGatewayOptions),
    }),
  });

  app.decorate('services', {
    auth,
    audit,
    staff,
    setup,
    oob,
    tenants,
    guards,
    secretBox,
    mesh,
    reporter: mesh.reporter,
    assets,
    scans,
    schedules,
    templates,
    storage,
    findings,
    findingsIngest,
    compliance,
    workerEnrollments,
    workerAuth,
    leases,
    uploads,
    ingestion,
    imports,
    hostedWorkers,
    llm,
    fileAnalysis,
    cmmc,
    cmmcProgram,
  });
  return app;
}

/**
 * Per-request bookkeeping and graceful shutdown: the x-request-id header, request info for deep
 * code, and in-flight counting. New requests get 503 with our error shape (Fastify's own body has no stable
 * code). close() waits for handlers still running, including those whose client already hung up
 * (Fastify stops waiting for those), so the database is never closed under a running handler.
 */
function trackInFlight(app: FastifyInstance, drainTimeoutMs = 10_000): InFlight {
  let closing = false;
  let inFlight = 0;
  let onDrained: (() => void) | null = null;
  const leave = () => {
    inFlight -= 1;
    if (inFlight === 0) onDrained?.();
  };
  const kCounted = Symbol('inFlight');
  type Counted = { [kCounted]?: boolean };
  // Callback-style hooks: they run on every request, and promise-returning hooks cost more.
  app.addHook('onRequest', (req, reply, done) => {
    (req as Counted)[kCounted] = true;
    inFlight += 1;
    if (closing) {
      sendError(reply.header('connection', 'close'), {
        status: 503,
        code: 'service_unavailable',
        message: 'The server is shutting down; retry shortly.',
      });
      return;
    }
    // Request info for code deep inside libraries (audit entries written from Better Auth hooks).
    runWithRequestInfo({ requestId: String(req.id), ip: req.ip, userAgent: req.headers['user-agent'] ?? null }, done);
  });
  // onSend runs once per request, after the handler (or error handler) has produced its answer,
  // whether or not the client is still there to receive it.
  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    // Answers given while closing end their connection, so keep-alive clients (peers, proxies)
    // do not hold the server open until their idle timeout.
    if (closing) reply.header('connection', 'close');
    if ((req as Counted)[kCounted]) {
      (req as Counted)[kCounted] = false;
      leave();
    }
    done(null, payload);
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onClose', async () => {
    if (inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainTimeoutMs);
      timer.unref();
      onDrained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  });
  return {
    get closing() {
      return closing;
    },
    enter() {
      if (closing) return false;
      inFlight += 1;
      return true;
    },
    leave,
  };
}

/** The SPA's files: hashed assets cached for a year; navigations fall back to index.html (errors.ts). */
async function registerWebApp(app: FastifyInstance, webDir: string): Promise<void> {
  await app.register(fastifyStatic, {
    root: webDir,
    wildcard: false,
    index: false,
    setHeaders(res, path) {
      res.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
