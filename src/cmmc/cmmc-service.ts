// CMMC Level 1: the tenant's compliance profile (Scope), device-check tokens and signed scripts,
// and the public verify route that receives script results. Members read; owners and admins
// write. The verify route has no user session: it runs as the service role and finds the profile
// by the SHA-256 of the bearer token.
// Over 500 lines on purpose: the profile, the device token and its scripts, and the device-check
// runs (listed, attested, retired, received) are one factory because they share the profile row,
// its lock for read-modify-writes (lockedProfile) and the device list's shape; the program's other
// parts (attestations, policies, SPRS, exports, renewals, hand-off) have their own modules beside it.
import { sha256Hex } from '../lib/crypto.ts';
import type { Kysely } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB, DeviceAttestation, DeviceScriptInfo } from '../db/schema.ts';
import { type Caller, type Tx, withService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError } from '../lib/errors.ts';
import { randomToken } from '../lib/ids.ts';
import { DEVICE_CHECKS, reasonInfo, type DeviceCheckId, type DeviceOs } from './cmmc-checks.ts';
import { CMMC_ADMIN_ROLES, createCmmcAccess } from './cmmc-access.ts';
import { cmmcErrors } from './cmmc-errors.ts';
import { asOf, dayOf } from './cmmc-program-state.ts';
import { cmmcRepo, parseJson, type ProfileRow, type RunRow } from './cmmc-repo.ts';
import {
  attestationCurrent,
  DEVICE_STALE_DAYS,
  VERIFY_RUNS_PER_HOUR,
  type AttestDeviceBody,
  type DeviceDto,
  type DeviceListDto,
  type IssuedTokenDto,
  type ProfileBody,
  type ProfileDto,
  type ProfileResponse,
  type SigningKeyDto,
  type VerifyBody,
  verifyBodySchema,
} from './cmmc-schemas.ts';
import {
  baseUrlWarning,
  generateMacScript,
  generateWindowsScript,
  SCRIPT_FILE_NAMES,
  SCRIPT_VERSION,
} from './cmmc-scripts.ts';
import type { ScriptSigner } from './cmmc-signing.ts';

/** The signed-in user (the one tenant-wide Caller type). */
export type { Caller };

const HOUR_MS = 3_600_000;
const MAX_ATTESTED_COMPUTERS = 1000;
const TOKEN_PREFIX = 'rcd_';
const TOKEN_RE = /^rcd_[A-Za-z0-9_-]{43}$/;
const iso = (d: Date | string) => new Date(d).toISOString();
const day = (d: Date | string | null) =>
  d === null ? null : typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10);

export const hashDeviceToken = (token: string): string => sha256Hex(token);

function toProfileDto(r: ProfileRow): ProfileDto {
  return {
    id: r.id,
    cageCode: r.cage_code,
    additionalCageCodes: r.additional_cage_codes,
    companyName: r.company_name,
    companyAddress: r.company_address,
    companyPhone: r.company_phone,
    companyWebsite: r.company_website,
    uei: r.uei,
    scopeDescription: r.scope_description,
    deviceCount: r.declared_device_count,
    biddingUsers: parseJson(r.bidding_users, []),
    mailPlatform: r.mail_platform,
    affirmingOfficial: {
      name: r.affirming_official_name,
      title: r.affirming_official_title,
      email: r.affirming_official_email,
    },
    status: r.status,
    statusDate: day(r.status_date),
    deviceToken: {
      issued: r.device_token_hash !== null,
      issuedAt: r.device_token_issued_at ? iso(r.device_token_issued_at) : null,
      scripts: parseJson<DeviceScriptInfo[] | null>(r.device_scripts, null) ?? [],
    },
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

function summarise(results: Record<string, string>) {
  const s = { pass: 0, fail: 0, unknown: 0 };
  for (const v of Object.values(results)) if (v === 'pass' || v === 'fail' || v === 'unknown') s[v] += 1;
  return s;
}

/** The run a script sent, or validation_failed naming each bad field (`body.results.win.rdp_disabled`). */
export function parseVerifyBody(raw: unknown): VerifyBody {
  const r = verifyBodySchema.safeParse(raw);
  if (r.success) return r.data;
  throw new AppError('validation_failed', 'The device-check results are not valid.', {
    details: r.error.issues.flatMap((i) => {
      const base = ['body', ...i.path.map(String)];
      // Unknown keys (e.g. a check id not in the catalogue for this OS) name each key.
      const keys = (i as { keys?: string[] }).keys;
      return keys?.length
        ? keys.map((k) => ({ path: [...base, k].join('.'), message: `not a known field for this OS: ${k}` }))
        : [{ path: base.join('.'), message: i.message }];
    }),
  });
}

/** The bearer token from an Authorization header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1]! : null;
}

export function createCmmcService(deps: {
  db: Kysely<DB>;
  audit: AuditService;
  clock: Clock;
  signer: () => ScriptSigner;
  publicBaseUrl: string;
  /** After a committed change scoring reads (Scope, a run, a retired computer): the live status recheck. */
  afterChange?: (tenantId: string) => Promise<void>;
}) {
  const { db, audit, clock, publicBaseUrl } = deps;
  const changed = async <T>(tenantId: string, result: Promise<T>): Promise<T> => {
    const r = await result;
    await deps.afterChange?.(tenantId);
    return r;
  };

  const { asMember, asManager, requireProfile } = createCmmcAccess(db);

  function toDevice(r: RunRow, now: Date): DeviceDto {
    const results = parseJson<Record<string, 'pass' | 'fail' | 'unknown'>>(r.results, {});
    const reasons: DeviceDto['reasons'] = {};
    for (const [id, code] of Object.entries(parseJson<Record<string, string>>(r.reasons, {}))) {
      const info = reasonInfo(id, code);
      if (info) reasons[id] = info;
    }
    return {
      hostname: r.hostname,
      os: r.os,
      osVersion: r.os_version,
      scriptVersion: r.script_version,
      runId: r.id,
      receivedAt: iso(r.received_at),
      pending: now.getTime() - new Date(r.received_at).getTime() > DEVICE_STALE_DAYS * 86_400_000,
      summary: summarise(results),
      results,
      details: parseJson(r.details, {}),
      reasons,
      retired: r.retired_at ? { at: iso(r.retired_at), byEmail: r.retired_by_email, note: r.retired_note } : null,
    };
  }

  const storedAttestations = (p: ProfileRow) => parseJson<DeviceAttestation[]>(p.device_attestations, []);
  function deviceAttestations(p: ProfileRow, now: Date): DeviceListDto['attestations'] {
    return storedAttestations(p)
      .map((a) => ({
        hostname: a.hostname,
        statement: a.statement,
        at: a.at,
        byEmail: a.byEmail,
        current: attestationCurrent(a, now),
      }))
      .sort((a, b) => a.hostname.localeCompare(b.hostname));
  }
  /** The profile row locked for a read-modify-write of its attestations. */
  async function lockedProfile(tx: Tx, tenantId: string): Promise<ProfileRow> {
    await requireProfile(tx, tenantId);
    return tx
      .selectFrom('compliance_profiles')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .forUpdate()
      .executeTakeFirstOrThrow();
  }

  return {
    signingKey(): SigningKeyDto {
      return deps.signer().keyInfo();
    },

    getProfile(tenantId: string, caller: Caller): Promise<ProfileResponse> {
      return asMember(tenantId, caller, async (tx, role) => {
        const p = await cmmcRepo.profileByTenant(tx, tenantId);
        return {
          profile: p ? toProfileDto(asOf(p, dayOf(clock.now()))) : null,
          canManage: CMMC_ADMIN_ROLES.includes(role),
        };
      });
    },

    /** Creates or updates the profile (Scope). A new profile starts in_progress. */
    saveProfile(tenantId: string, caller: Caller, body: ProfileBody): Promise<ProfileResponse> {
      const now = clock.now();
      return changed(
        tenantId,
        asManager(tenantId, caller, async (tx) => {
          const extra = [...new Set(body.additionalCageCodes.filter((c) => c !== body.cageCode))];
          const { created } = await cmmcRepo.upsertProfile(
            tx,
            tenantId,
            {
              cage_code: body.cageCode,
              additional_cage_codes: extra,
              company_name: body.companyName,
              company_address: body.companyAddress,
              company_phone: body.companyPhone,
              company_website: body.companyWebsite,
              uei: body.uei,
              scope_description: body.scopeDescription,
              declared_device_count: body.deviceCount,
              bidding_users: JSON.stringify(
                body.biddingUsers.map((u) => ({ name: u.name, email: u.email, role: u.role ?? null })),
              ),
              mail_platform: body.mailPlatform,
              affirming_official_name: body.affirmingOfficial.name,
              affirming_official_title: body.affirmingOfficial.title,
              affirming_official_email: body.affirmingOfficial.email,
              created_by: caller.userId,
            },
            now,
          );
          const p = await requireProfile(tx, tenantId);
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: created ? 'cmmc.profile_created' : 'cmmc.profile_updated',
              targetType: 'compliance_profile',
              targetId: p.id,
              details: {
                cageCode: body.cageCode,
                mailPlatform: body.mailPlatform,
                biddingUsers: body.biddingUsers.length,
                ...(body.deviceCount !== undefined ? { deviceCount: body.deviceCount } : {}),
              },
            },
            tx,
          );
          return { profile: toProfileDto(asOf(p, dayOf(now))), canManage: true };
        }),
      );
    },

    /**
     * issueCmmcDeviceToken: a new device token (shown once, only its hash kept; the previous one
     * stops working) and the Windows and macOS scripts that carry it, signed.
     */
    issueDeviceToken(tenantId: string, caller: Caller): Promise<IssuedTokenDto> {
      const signer = deps.signer();
      const now = clock.now();
      return asManager(tenantId, caller, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const token = `${TOKEN_PREFIX}${randomToken(32)}`;
        const warning = baseUrlWarning(publicBaseUrl);
        const input = { token, baseUrl: publicBaseUrl, generatedAt: now, cageCode: p.cage_code, warning };
        const scripts = (
          [
            ['windows', generateWindowsScript(input)],
            ['macos', generateMacScript(input)],
          ] as const
        ).map(([os, body]) => {
          const content = signer.signScript(body);
          return { os, fileName: SCRIPT_FILE_NAMES[os], sha256: sha256Hex(content), version: SCRIPT_VERSION, content };
        });
        const infos: DeviceScriptInfo[] = scripts.map(({ os, fileName, sha256, version }) => ({
          os,
          fileName,
          sha256,
          version,
        }));
        await cmmcRepo.setDeviceToken(tx, p.id, {
          hash: hashDeviceToken(token),
          issuedAt: now,
          issuedBy: caller.userId,
          scripts: infos,
        });
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'cmmc.device_token_issued',
            targetType: 'compliance_profile',
            targetId: p.id,
            details: { replaced: p.device_token_hash !== null, scripts: infos },
          },
          tx,
        );
        const key = signer.keyInfo();
        return {
          token,
          issuedAt: iso(now),
          scripts,
          signingKey: { algorithm: key.algorithm, fingerprint: key.fingerprint },
          verifyUrl: `${publicBaseUrl}/verify-script`,
          baseUrlWarning: warning,
        };
      });
    },

    /** The latest run per hostname (retired computers included, marked); a run older than DEVICE_STALE_DAYS is pending. */
    listDevices(tenantId: string, caller: Caller): Promise<DeviceListDto> {
      const now = clock.now();
      return asMember(tenantId, caller, async (tx) => {
        const p = await requireProfile(tx, tenantId);
        const runs = await cmmcRepo.latestRunsPerHost(tx, p.id, { includeRetired: true });
        return {
          devices: runs.map((r) => toDevice(r, now)),
          attestations: deviceAttestations(p, now),
          declaredDevices: p.declared_device_count,
          checks: Object.values(DEVICE_CHECKS).map((c) => ({
            id: c.id,
            os: c.os,
            title: c.title,
            requirementIds: [...c.requirementIds],
            supporting: c.supporting,
          })),
          staleDays: DEVICE_STALE_DAYS,
        };
      });
    },

    /**
     * Records (or renews) an owner's or admin's attestation of a computer that cannot send a run:
     * it covers that computer for DEVICE_STALE_DAYS days unless a current run decides (see
     * cmmc-scoring.ts). One per computer, case-insensitive; the profile row is locked. Audited.
     */
    attestDevice(
      tenantId: string,
      caller: Caller,
      body: AttestDeviceBody,
    ): Promise<DeviceListDto['attestations'][number]> {
      const now = clock.now();
      return changed(
        tenantId,
        asManager(tenantId, caller, async (tx) => {
          const p = await lockedProfile(tx, tenantId);
          const entry: DeviceAttestation = {
            hostname: body.hostname,
            statement: body.statement,
            at: now.toISOString(),
            by: caller.userId,
            byEmail: caller.email,
          };
          const key = body.hostname.toLowerCase();
          const prior = storedAttestations(p).filter((a) => a.hostname.toLowerCase() !== key);
          // The list lives on the profile row: bounded like the Scope's number of computers.
          if (prior.length >= MAX_ATTESTED_COMPUTERS)
            throw new AppError('validation_failed', 'Too many attested computers.', {
              details: [
                {
                  path: 'body.hostname',
                  message: `At most ${MAX_ATTESTED_COMPUTERS} computers can be attested; withdraw those no longer in scope.`,
                },
              ],
            });
          await cmmcRepo.setDeviceAttestations(tx, p.id, [...prior, entry], now);
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'cmmc.device_attested',
              targetType: 'compliance_profile',
              targetId: p.id,
              details: { hostname: body.hostname, statement: body.statement },
            },
            tx,
          );
          return {
            hostname: entry.hostname,
            statement: entry.statement,
            at: entry.at,
            byEmail: entry.byEmail,
            current: true,
          };
        }),
      );
    },

    /** Withdraws a computer's attestation (owner or admin; 404 when there is none). Audited. */
    withdrawDeviceAttestation(tenantId: string, caller: Caller, hostname: string): Promise<{ withdrawn: true }> {
      const now = clock.now();
      return changed(
        tenantId,
        asManager(tenantId, caller, async (tx) => {
          const p = await lockedProfile(tx, tenantId);
          const all = storedAttestations(p);
          const rest = all.filter((a) => a.hostname.toLowerCase() !== hostname.toLowerCase());
          if (rest.length === all.length) throw cmmcErrors.attestationNotFound(hostname);
          await cmmcRepo.setDeviceAttestations(tx, p.id, rest, now);
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'cmmc.device_attestation_withdrawn',
              targetType: 'compliance_profile',
              targetId: p.id,
              details: { hostname },
            },
            tx,
          );
          return { withdrawn: true as const };
        }),
      );
    },

    /**
     * Retires a computer (owner or admin) for a stated reason (400 cmmc_retire_reason_required
     * without one): its latest run is marked, and scoring, exports and the staff dashboard leave it
     * out; the SPRS snapshot lists it with the reason. A later run from the same hostname counts again (it is a new,
     * unmarked row); unretire clears the mark. Audited.
     */
    setDeviceRetired(
      tenantId: string,
      caller: Caller,
      hostname: string,
      retire: boolean,
      note: string | null,
    ): Promise<DeviceDto> {
      const now = clock.now();
      return changed(
        tenantId,
        asManager(tenantId, caller, async (tx) => {
          if (retire && !note?.trim()) throw cmmcErrors.retireReasonRequired();
          const p = await requireProfile(tx, tenantId);
          const latest = (await cmmcRepo.latestRunsPerHost(tx, p.id, { includeRetired: true })).find(
            (r) => r.hostname.toLowerCase() === hostname.toLowerCase(),
          );
          if (!latest) throw cmmcErrors.deviceNotFound(hostname);
          if (retire && latest.retired_at) throw cmmcErrors.deviceRetireConflict('This computer is already retired.');
          if (!retire && !latest.retired_at) throw cmmcErrors.deviceRetireConflict('This computer is not retired.');
          const row = await cmmcRepo.setRunRetired(
            tx,
            latest.id,
            retire ? { at: now, by: caller.userId, byEmail: caller.email, note } : null,
          );
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: retire ? 'cmmc.device_retired' : 'cmmc.device_unretired',
              targetType: 'endpoint_audit_run',
              targetId: latest.id,
              details: {
                hostname: latest.hostname,
                os: latest.os,
                lastRunAt: iso(latest.received_at),
                ...(retire ? { reason: note } : {}),
              },
            },
            tx,
          );
          return toDevice(row, now);
        }),
      );
    },

    /**
     * POST /api/public/compliance/verify: one script run. At most VERIFY_RUNS_PER_HOUR per profile
     * in any rolling hour, counted in the database under a per-profile lock, so it holds across
     * replicas.
     */
    async verify(authorization: string | undefined, rawBody: unknown, clientAddress: string | null) {
      const token = bearerToken(authorization);
      if (!token || !TOKEN_RE.test(token)) throw cmmcErrors.deviceTokenInvalid();
      const hash = hashDeviceToken(token);
      let tenantId = '';
      const out = await withService(db, async (tx) => {
        const profile = await cmmcRepo.profileByTokenHash(tx, hash);
        if (!profile) throw cmmcErrors.deviceTokenInvalid();
        // The body is checked only for a known token: strangers learn nothing about the format.
        const body = parseVerifyBody(rawBody);
        await cmmcRepo.lockProfileRuns(tx, profile.id);
        const now = clock.now();
        const window = await cmmcRepo.runsSince(tx, profile.id, new Date(now.getTime() - HOUR_MS));
        if (window.count >= VERIFY_RUNS_PER_HOUR) {
          const oldest = window.oldest ?? now;
          throw cmmcErrors.verifyRateLimited(
            VERIFY_RUNS_PER_HOUR,
            Math.max(1, Math.ceil((oldest.getTime() + HOUR_MS - now.getTime()) / 1000)),
          );
        }
        const results: Record<string, 'pass' | 'fail' | 'unknown'> = {};
        for (const [id, v] of Object.entries(body.results)) if (v) results[id] = v;
        const details: Record<string, string> = {};
        for (const [id, v] of Object.entries(body.details ?? {}))
          if (typeof v === 'string' && v.length) details[id] = v;
        const reasons: Record<string, string> = {};
        for (const [id, v] of Object.entries(body.reasons ?? {})) if (typeof v === 'string') reasons[id] = v;
        tenantId = profile.tenant_id;
        const row = await cmmcRepo.insertRun(tx, {
          tenant_id: profile.tenant_id,
          profile_id: profile.id,
          hostname: body.hostname,
          os: body.os as DeviceOs,
          os_version: body.osVersion ?? null,
          results: JSON.stringify(results),
          details: JSON.stringify(details),
          reasons: JSON.stringify(reasons),
          script_version: body.scriptVersion,
          client_address: clientAddress,
          received_at: now,
        });
        return {
          ok: true as const,
          runId: row.id,
          hostname: body.hostname,
          receivedAt: iso(row.received_at),
          summary: summarise(results),
          runsLeftThisHour: VERIFY_RUNS_PER_HOUR - window.count - 1,
        };
      });
      await deps.afterChange?.(tenantId);
      return out;
    },
  };
}

export type CmmcService = ReturnType<typeof createCmmcService>;
export type { DeviceCheckId };
