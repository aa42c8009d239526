// Setup shared by the CMMC program test files (test/integration/cmmc-*.test.ts): an app on a
// controllable clock with a bid and a management peer (both pointing at a closed port, so events
// are enqueued and a delivery attempt fails at once), and the steps a supplier takes: a tenant
// with a profile, device-check runs, answers, approved policies, the SPRS confirmation.
import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import { ATTESTATION_ITEMS, checkIdsFor, type IssuedTokenDto } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { AppDeps } from '../../src/server/app.ts';
import { createTestApp, uniqueEmail, type TestApp } from './app.ts';
import { Client } from './client.ts';

export const DAY = 86_400_000;
export const BID_SECRET = 'bid-secret-0123456789abcdef0123456789';
export const MGMT_SECRET = 'mgmt-secret-0123456789abcdef012345678';
export const CRON = 'cron-secret-0123456789abcdef0123456789';
export const AFFIRMATION_VERSION = 'rampart-l1-affirmation-2025-01';
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');

// CAGE codes never use the letters I and O.
const CAGE_CHARS = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
export const cage = () => Array.from(randomBytes(5), (b) => CAGE_CHARS[b % CAGE_CHARS.length]).join('');

/** A clock the test sets; services read it through the injected Clock. */
export class TestClock implements Clock {
  at = new Date();
  now(): Date {
    return new Date(this.at);
  }
  set(d: Date): Date {
    this.at = new Date(d);
    return this.at;
  }
  /** Back to the real time. */
  reset(): Date {
    return this.set(new Date());
  }
  today(): string {
    return this.at.toISOString().slice(0, 10);
  }
}

export type ScoreDto = {
  met: number;
  allMet: boolean;
  profileStatus: string;
  affirmationTextVersion: string;
  requirements: {
    requirementId: string;
    status: string;
    missingItems: string[];
    failingChecks: unknown[];
    missingPolicy: string | null;
  }[];
};

export interface CmmcProgramSuite {
  /** The app; its members are there once beforeAll has started it. */
  readonly t: TestApp;
  readonly clock: TestClock;
  readonly run: string;
  readonly bid: string;
  readonly mgmt: string;
  tenantWithProfile(
    label: string,
    over?: Record<string, unknown>,
  ): Promise<{ owner: Client; tenant: string; base: string; cageCode: string; email: string }>;
  postRun(
    owner: Client,
    base: string,
    os: 'windows' | 'macos',
    hostname: string,
    results?: Record<string, string>,
  ): Promise<string>;
  answerAll(owner: Client, base: string, except?: Record<string, { answer: string; note?: string }>): Promise<void>;
  approveAll(owner: Client, base: string, effectiveDate?: string): Promise<void>;
  score(c: Client, base: string): Promise<ScoreDto>;
  confirmBody(cageCode: string, over?: Record<string, unknown>): Record<string, unknown>;
  outboxFor(cageCode: string): Promise<{ peer: string; event_type: string; payload: unknown }[]>;
  addUser(tenant: string, label: string, role: 'admin' | 'member'): Promise<{ c: Client; email: string }>;
}

/** Registers beforeAll / afterAll for one test file's app and returns the suite's steps. */
export function setupCmmcProgramApp(
  opts: { deps?: Partial<AppDeps>; env?: Record<string, string> } = {},
): CmmcProgramSuite {
  const run = Math.random().toString(36).slice(2, 8);
  const bid = `bid-${run}`;
  const mgmt = `mgmt-${run}`;
  const clock = new TestClock();
  let app: TestApp | undefined;

  beforeAll(async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    app = await createTestApp({
      env: {
        [`SVC_PEER_URL_${sfx(bid)}`]: dead,
        [`SVC_PEER_URL_${sfx(mgmt)}`]: dead,
        CMMC_SCRIPT_SIGNING_SEED: 'cmmc-program-test-seed-0123456789',
        CRON_SECRET: CRON,
        [`SVC_SECRET_FROM_${sfx(bid)}`]: BID_SECRET,
        [`SVC_SECRET_TO_${sfx(bid)}`]: BID_SECRET,
        [`SVC_PEER_FLOWS_${sfx(bid)}`]: 'ping,cmmc_status,cmmc_handoff',
        [`SVC_SECRET_FROM_${sfx(mgmt)}`]: MGMT_SECRET,
        [`SVC_SECRET_TO_${sfx(mgmt)}`]: MGMT_SECRET,
        [`SVC_PEER_FLOWS_${sfx(mgmt)}`]: 'ping,cmmc_status,cmmc_handoff',
        SVC_BID_PEER: bid,
        SVC_MANAGEMENT_PEER: mgmt,
        ...opts.env,
      },
      deps: { clock, outboxOptions: { maxAttempts: 1 }, ...opts.deps },
    });
  });
  afterAll(async () => app?.close());

  const t = () => {
    if (!app) throw new Error('the app starts in beforeAll');
    return app;
  };
  /** The app, usable as soon as beforeAll has started it (destructure it with the steps). */
  const appView = new Proxy({} as TestApp, { get: (_, key) => t()[key as keyof TestApp] });

  const suite: CmmcProgramSuite = {
    t: appView,
    clock,
    run,
    bid,
    mgmt,

    /** A tenant whose owner is the Affirming Official (the one who approves policies and confirms SPRS). */
    async tenantWithProfile(label, over = {}) {
      const owner = new Client(t().app);
      const email = uniqueEmail(`${label}-owner`);
      await owner.signUp(email);
      const tenant = await owner.createTenant(`${label} Co`);
      await owner.me();
      const base = `/api/v1/tenants/${tenant}/cmmc`;
      const cageCode = (over.cageCode as string | undefined) ?? cage();
      const put = await owner.put(`${base}/profile`, {
        cageCode,
        companyName: `${label} Machining LLC`,
        biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test' }],
        mailPlatform: 'm365',
        affirmingOfficial: { name: 'Alice Able', title: 'President', email },
        scopeDescription: 'Office network and 2 laptops',
        ...over,
      });
      expect(put.statusCode, put.body).toBe(200);
      return { owner, tenant, base, cageCode, email };
    },

    async postRun(owner, base, os, hostname, results = Object.fromEntries(checkIdsFor(os).map((id) => [id, 'pass']))) {
      const issued = await owner.post(`${base}/device-token`);
      expect(issued.statusCode, issued.body).toBe(201);
      const token = (issued.json() as IssuedTokenDto).token;
      const res = await t().app.inject({
        method: 'POST',
        url: '/api/public/compliance/verify',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ scriptVersion: '1.0.0', os, hostname, results }),
      });
      expect(res.statusCode, res.body).toBe(201);
      return token;
    },

    async answerAll(owner, base, except = {}) {
      for (const i of ATTESTATION_ITEMS) {
        const a = except[i.id] ?? { answer: 'yes' };
        const res = await owner.put(`${base}/attestations/${i.id}`, a);
        expect(res.statusCode, `${i.id}: ${res.body}`).toBe(200);
      }
    },

    async approveAll(owner, base, effectiveDate = clock.today()) {
      expect((await owner.post(`${base}/policies/generate`, {})).statusCode).toBe(200);
      const list = (await owner.get(`${base}/policies`)).json() as {
        documents: { kind: string; latest: { id: string; status: string } }[];
      };
      for (const d of list.documents)
        if (d.latest.status === 'draft')
          expect(
            (await owner.post(`${base}/policies/${d.latest.id}/approve`, { effectiveDate, forAffirmingOfficial: true }))
              .statusCode,
          ).toBe(200);
    },

    score: async (c, base) => (await c.get(`${base}/score`)).json() as ScoreDto,

    confirmBody: (cageCode, over = {}) => ({
      statusDate: clock.today(),
      affirmedInSprsOn: clock.today(),
      scopeDescription: 'Office network and 2 laptops',
      cageCodes: [cageCode],
      affirm: true,
      affirmationTextVersion: AFFIRMATION_VERSION,
      ...over,
    }),

    outboxFor: (cageCode) =>
      withService(t().database.db, async (tx) => {
        const { rows } = await sql<{ peer: string; event_type: string; payload: unknown }>`
          select peer, event_type, payload from svc_outbox
           where payload::jsonb -> 'data' ->> 'cageCode' = ${cageCode} order by created_at, peer`.execute(tx);
        return rows;
      }),

    /** Adds a user with this role to the tenant; returns the signed-in client and the e-mail. */
    async addUser(tenant, label, role) {
      const c = new Client(t().app);
      const email = uniqueEmail(label);
      const u = await c.signUp(email);
      await t()
        .database.db.insertInto('member')
        .values({ organizationId: tenant, userId: u.user.id, role, createdAt: new Date() })
        .execute();
      await c.me();
      return { c, email };
    },
  };
  return suite;
}

/** One file as a multipart body in the field "file". */
export function multipartFile(name: string, content: Buffer, type: string) {
  const boundary = `----h7${randomBytes(6).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`;
  const payload = Buffer.concat([Buffer.from(head), content, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), randomBytes(64)]);

/** Reads a zip (stored or deflated entries) through its central directory. */
export function unzip(buf: Buffer): Record<string, Buffer> {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) {
    const method = buf.readUInt16LE(p + 10);
    const size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extra = buf.readUInt16LE(p + 30);
    const comment = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataAt, dataAt + size);
    out[name] = method === 8 ? inflateRawSync(raw) : raw;
    p += 46 + nameLen + extra + comment;
  }
  return out;
}
