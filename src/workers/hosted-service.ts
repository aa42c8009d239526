// The embedded hosted worker (docs/operations.md): a super-admin starts a Rampart-hosted worker
// for a tenant, and the server runs it in-process with the same agent code as `rampart-worker run`.
// The worker is enrolled like any other (a hosted enrollment code redeemed at once) and talks to
// this server over HTTP on loopback, so it goes through the same authentication, leasing, fencing
// and upload paths as a remote worker. Its bearer token is kept sealed with the secret box,
// because the server must present it again after every restart.
//
// Each replica with EMBEDDED_WORKER on runs one agent per unrevoked hosted worker it holds
// credentials for. Leases are fenced per scan, so several replicas running the same worker is
// safe. A periodic sync starts agents for workers created elsewhere and stops those a tenant
// revoked; a 401 from the server triggers the same check at once for that worker.
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB } from '../db/schema.ts';
import { asService, type Caller, withService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import type { SecretBox } from '../lib/crypto.ts';
import { createEgressPolicy, literalAddressOf, type EgressPolicy } from '../lib/egress.ts';
import { appError } from '../lib/errors.ts';
import type { Lease } from '../lib/worker-wire.ts';
import {
  createHostedAgent,
  pinoAgentLogger,
  WORKER_VERSION,
  type Agent,
  type PortScannerSettings,
} from '../agent/index.ts';
import type { EnrollmentService } from './enrollment-service.ts';
import type { HostedWorkerDto, HostedWorkerListDto } from './hosted-schemas.ts';

/** The client address recorded for in-process enrollments (audit log, throttle key). */
export const EMBEDDED_ADDRESS = 'embedded';
export const EMBEDDED_PLATFORM = 'embedded';
const DEFAULT_SYNC_MS = 30_000;
const DEFAULT_GRACE_MS = 30_000;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * The URL this process reaches itself at: loopback on the bound port when listening on every
 * address or on loopback, else the one address it listens on.
 */
export function selfUrl(host: string, port: number): string {
  const h = host.trim().toLowerCase();
  if (h === '' || h === '0.0.0.0' || h === '::' || h === 'localhost' || h.startsWith('127.'))
    return `http://127.0.0.1:${port}`;
  if (h === '::1' || h === '[::1]') return `http://[::1]:${port}`;
  return h.includes(':') && !h.startsWith('[') ? `http://[${h}]:${port}` : `http://${h}:${port}`;
}

export interface RunOptions {
  /** This process's own listen address (http://127.0.0.1:<port>). */
  serverUrl: string;
  /** Scans at once per hosted worker (default: the service's concurrency). */
  concurrency?: number;
  /** How often to look for new and revoked hosted workers (default 30 s). */
  syncEveryMs?: number;
  /** How long running scans may finish when an agent stops gracefully (default 30 s). */
  graceMs?: number;
  port?: PortScannerSettings;
}

interface Running {
  agent: Agent;
  tenantId: string;
  done: Promise<void>;
}

interface CredentialRow {
  worker_id: string;
  tenant_id: string;
  token_sealed: string;
  revoked_at: Date | string | null;
}

export function createHostedWorkers(deps: {
  db: Kysely<DB>;
  secretBox: SecretBox;
  enrollments: EnrollmentService;
  audit: AuditService;
  clock: Clock;
  log: FastifyBaseLogger;
  concurrency?: number;
  osvDbPath?: string;
  /** EGRESS_ALLOW's policy; the hosted worker's scans are held to it (default: no internal range). */
  egress?: EgressPolicy;
}) {
  const { db, secretBox, enrollments, audit, clock, log } = deps;
  const egress = deps.egress ?? createEgressPolicy();

  /**
   * A lease's egress policy. A tenant's names may resolve anywhere, so every address is checked;
   * a super-admin's bypass of an asset whose target is an IP address (the first run's 127.0.0.1)
   * is the operator's decision about that one address, which this scan may then reach.
   */
  async function egressFor(lease: Lease): Promise<EgressPolicy> {
    const row = await asService(db, (q) =>
      q
        .selectFrom('assets')
        .select(['verification_status', 'target'])
        .where('id', '=', lease.asset.id)
        .executeTakeFirst(),
    );
    const literal = row?.verification_status === 'bypassed' ? literalAddressOf(row.target) : null;
    return literal ? egress.withAllowed([literal]) : egress;
  }
  const agents = new Map<string, Running>();
  /** Agents being stopped; stop() waits for them too. */
  const stopping = new Set<Promise<void>>();
  /** Workers whose revocation check a 401 already started. */
  const checking = new Set<string>();
  let run:
    (Required<Pick<RunOptions, 'serverUrl' | 'concurrency' | 'graceMs'>> & { port?: PortScannerSettings }) | null =
    null;
  let timer: NodeJS.Timeout | null = null;
  let syncing: Promise<void> = Promise.resolve();

  /** The tenant's current signing secret, read afresh for every request so rotations need no restart. */
  async function signingSecretOf(tenantId: string): Promise<string> {
    const row = await asService(db, (q) =>
      q
        .selectFrom('tenant_webhook_secrets')
        .select('current_sealed')
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst(),
    );
    if (!row)
      throw new Error(
        'The tenant has no webhook signing secret yet; a tenant admin generates one under Workers → Webhook signing secret',
      );
    return secretBox.open(row.current_sealed);
  }

  function stopAgent(workerId: string, graceMs: number, why: string): void {
    const r = agents.get(workerId);
    if (!r) return;
    agents.delete(workerId);
    log.info({ hostedWorkerId: workerId, tenantId: r.tenantId, reason: why }, 'stopping embedded hosted worker');
    const p = r.agent
      .stop(graceMs)
      .then(() => r.done)
      .finally(() => stopping.delete(p));
    stopping.add(p);
  }

  /** After a 401: stop the agent at once if its worker was revoked (or deleted). */
  function onUnauthorized(workerId: string): void {
    if (checking.has(workerId) || !agents.has(workerId)) return;
    checking.add(workerId);
    void asService(db, (q) =>
      q.selectFrom('workers').select('revoked_at').where('id', '=', workerId).executeTakeFirst(),
    )
      .then((w) => {
        if (!w || w.revoked_at) stopAgent(workerId, 0, 'revoked');
      })
      .catch((err: unknown) => log.error({ err, hostedWorkerId: workerId }, 'hosted worker revocation check failed'))
      .finally(() => checking.delete(workerId));
  }

  function startAgent(row: CredentialRow): void {
    if (!run || agents.has(row.worker_id)) return;
    let token: string;
    try {
      token = secretBox.open(row.token_sealed);
    } catch (err) {
      // Sealed under another APP_ENCRYPTION_KEY: nothing this process can do but say so.
      log.error(
        { err, hostedWorkerId: row.worker_id },
        'cannot open the credentials of a hosted worker; was APP_ENCRYPTION_KEY changed?',
      );
      return;
    }
    const workerId = row.worker_id;
    // Connection: close: an agent's keep-alive connections to this very server would otherwise
    // outlive the agent and hold the server's close() until the keep-alive timeout.
    const watched: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('connection', 'close');
      const res = await fetch(input, { ...init, headers });
      if (res.status === 401) onUnauthorized(workerId);
      return res;
    };
    const agent = createHostedAgent({
      client: { serverUrl: run.serverUrl, token, signingSecret: () => signingSecretOf(row.tenant_id), fetch: watched },
      concurrency: run.concurrency,
      log: pinoAgentLogger(log.child({ hostedWorkerId: workerId, tenantId: row.tenant_id })),
      graceMs: run.graceMs,
      egressFor,
      scannerSettings: {
        ...(run.port ? { port: run.port } : {}),
        ...(deps.osvDbPath ? { container: { osvDbPath: deps.osvDbPath } } : {}),
      },
    });
    const entry: Running = { agent, tenantId: row.tenant_id, done: Promise.resolve() };
    entry.done = agent
      .start()
      .catch((err: unknown) =>
        log.error({ err, hostedWorkerId: workerId }, 'embedded hosted worker stopped with an error'),
      )
      .finally(() => {
        // An agent that ended on its own is started again by the next sync.
        if (agents.get(workerId) === entry) agents.delete(workerId);
      });
    agents.set(workerId, entry);
    log.info(
      { hostedWorkerId: workerId, tenantId: row.tenant_id, concurrency: run.concurrency },
      'embedded hosted worker started',
    );
  }

  async function syncOnce(): Promise<void> {
    if (!run) return;
    const rows = await asService(db, (q) =>
      q
        .selectFrom('hosted_worker_credentials as c')
        .innerJoin('workers as w', 'w.id', 'c.worker_id')
        .select(['c.worker_id', 'c.tenant_id', 'c.token_sealed', 'w.revoked_at'])
        .execute(),
    );
    const live = new Set<string>();
    for (const row of rows) {
      if (row.revoked_at) continue;
      live.add(row.worker_id);
      startAgent(row);
    }
    for (const id of [...agents.keys()]) if (!live.has(id)) stopAgent(id, 0, 'revoked');
  }

  /** One sync at a time: the timer, create() and run() may overlap. */
  function sync(): Promise<void> {
    syncing = syncing.then(syncOnce, syncOnce).catch((err: unknown) => log.error({ err }, 'hosted worker sync failed'));
    return syncing;
  }

  /** Staff: every hosted worker on the platform, with its tenant and whether it runs in this process. */
  async function list(): Promise<HostedWorkerListDto> {
    const rows = await withService(db, (tx) =>
      tx
        .selectFrom('workers as w')
        .innerJoin('organization as o', 'o.id', 'w.tenant_id')
        .leftJoin('hosted_worker_credentials as c', 'c.worker_id', 'w.id')
        .select([
          'w.id',
          'w.tenant_id',
          'o.name as tenant_name',
          'w.name',
          'w.platform',
          'w.version',
          'w.enrolled_at',
          'w.last_seen_at',
          'w.revoked_at',
          'c.worker_id as embedded_id',
        ])
        .where('w.hosted', '=', true)
        .orderBy(sql`w.revoked_at is null`, 'desc')
        .orderBy('o.name')
        .orderBy('w.enrolled_at', 'desc')
        .execute(),
    );
    return {
      runnerActive: run !== null,
      workers: rows.map((r) => ({
        id: r.id,
        tenantId: r.tenant_id,
        tenantName: r.tenant_name,
        name: r.name,
        platform: r.platform,
        version: r.version,
        status: r.revoked_at ? 'revoked' : 'active',
        enrolledAt: iso(r.enrolled_at)!,
        lastSeenAt: iso(r.last_seen_at),
        revokedAt: iso(r.revoked_at),
        embedded: r.embedded_id !== null,
        running: agents.has(r.id),
      })),
    };
  }

  return {
    /**
     * Super-admin: a new hosted worker for the tenant. Enrolls it with a hosted code redeemed at
     * once, keeps its token sealed, and starts it here when this process runs hosted workers.
     */
    async create(tenantId: string, caller: Caller): Promise<HostedWorkerDto> {
      const count = await withService(db, async (tx) => {
        const org = await tx.selectFrom('organization').select('id').where('id', '=', tenantId).executeTakeFirst();
        if (!org) throw appError('tenant_not_found', 'No tenant with this id.');
        const r = await tx
          .selectFrom('workers')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('tenant_id', '=', tenantId)
          .where('hosted', '=', true)
          .executeTakeFirstOrThrow();
        return Number(r.n);
      });
      const enrollment = await enrollments.createHostedEnrollment(tenantId, caller);
      const { workerId, token } = await enrollments.enroll(EMBEDDED_ADDRESS, {
        code: enrollment.code,
        name: `hosted-${count + 1}`,
        platform: EMBEDDED_PLATFORM,
        version: WORKER_VERSION,
      });
      try {
        await withService(db, async (tx) => {
          await tx
            .insertInto('hosted_worker_credentials')
            .values({
              worker_id: workerId,
              tenant_id: tenantId,
              token_sealed: secretBox.seal(token),
              created_at: clock.now(),
            })
            .execute();
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'workers.hosted_worker_created',
              targetType: 'worker',
              targetId: workerId,
              details: { name: `hosted-${count + 1}`, embedded: true },
            },
            tx,
          );
        });
      } catch (err) {
        // A worker whose token nobody holds can never run: revoke it rather than leave it listed as active.
        await withService(db, (tx) =>
          tx.updateTable('workers').set({ revoked_at: clock.now() }).where('id', '=', workerId).execute(),
        ).catch(() => undefined);
        throw err;
      }
      if (run) await sync();
      const dto = (await list()).workers.find((w) => w.id === workerId);
      if (!dto) throw new Error('The hosted worker just created is not listed');
      return dto;
    },

    list,

    /** Starts an agent per unrevoked hosted worker with stored credentials, and keeps the set in step. */
    async run(opts: RunOptions): Promise<void> {
      if (run) return;
      run = {
        serverUrl: opts.serverUrl,
        concurrency: opts.concurrency ?? deps.concurrency ?? 2,
        graceMs: opts.graceMs ?? DEFAULT_GRACE_MS,
        ...(opts.port ? { port: opts.port } : {}),
      };
      timer = setInterval(() => void sync(), opts.syncEveryMs ?? DEFAULT_SYNC_MS);
      timer.unref();
      await sync();
    },

    /** Runs a sync now (start new, stop revoked); resolves when it is done. */
    sync,

    /** Whether this process runs hosted workers (run() was called and stop() was not). */
    get running(): boolean {
      return run !== null;
    },

    /** Stops every agent: leasing ends, running scans get `graceMs` to finish, the rest are released. */
    async stop(graceMs?: number): Promise<void> {
      if (!run) return;
      const grace = graceMs ?? run.graceMs;
      run = null;
      if (timer) clearInterval(timer);
      timer = null;
      await syncing;
      for (const id of [...agents.keys()]) stopAgent(id, grace, 'shutdown');
      await Promise.all([...stopping]);
    },
  };
}

export type HostedWorkers = ReturnType<typeof createHostedWorkers>;
