// CMMC program, handoff and status: the bid peer's cmmc_status and cmmc_handoff flows, the
// one-time handoff link (preview, claim, expiry, removal by the daily sweep). Runs on PGlite and,
// with DATABASE_URL, on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { withService } from '../../src/db/tenant.ts';
import { uniqueEmail } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { BID_SECRET, MGMT_SECRET, CRON, DAY, cage, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';
import { dispatch } from '../helpers/mesh.ts';

const { t, clock, tenantWithProfile, run: RUN, bid: BID, mgmt: MGMT } = setupCmmcProgramApp();

describe('mesh flows of the bid peer', () => {
  const call = (payload: unknown, flow: string, requestId?: string, caller = BID, secret = BID_SECRET) =>
    dispatch(t.app, { caller, secret, body: { flow, payload }, at: clock.now(), ...(requestId ? { requestId } : {}) });

  it('cmmc_status finds a profile by primary or additional CAGE code, found: false otherwise, and only for the bid peer', async () => {
    clock.reset();
    const extra = cage();
    const { cageCode } = await tenantWithProfile('status', { additionalCageCodes: [extra] });
    const a = await call({ cageCode }, 'cmmc_status');
    expect(a.statusCode, a.body).toBe(200);
    expect(a.json()).toMatchObject({
      flow: 'cmmc_status',
      found: true,
      cageCode,
      status: 'in_progress',
      sprsStatus: 'not_filed',
      companyName: 'status Machining LLC',
    });
    expect((await call({ cageCode: extra.toLowerCase() }, 'cmmc_status')).json()).toMatchObject({
      found: true,
      primaryCageCode: cageCode,
    });
    expect((await call({ cageCode: '00000' }, 'cmmc_status')).json()).toMatchObject({ found: false });
    expect((await call({ cageCode: 'bad' }, 'cmmc_status')).json()).toMatchObject({ error: 'invalid_payload' });
    expect((await call({ cageCode: '1ABO2' }, 'cmmc_status')).json()).toMatchObject({ error: 'invalid_payload' });
    expect(
      (
        await call({ cageCode: '1ABI2', companyName: 'X', contactEmail: 'x@y.test' }, 'cmmc_handoff', `io-${RUN}`)
      ).json(),
    ).toMatchObject({ error: 'invalid_payload' });
    expect((await call({ cageCode }, 'cmmc_status', undefined, MGMT, MGMT_SECRET)).statusCode).toBe(403);
  });

  it('cmmc_status says when a CAGE code matches several tenants instead of picking one', async () => {
    clock.reset();
    const first = await tenantWithProfile('dup-a', { companyName: 'Dup First LLC' });
    clock.set(new Date(clock.at.getTime() + 1000));
    const second = await tenantWithProfile('dup-b', {
      cageCode: cage(),
      additionalCageCodes: [first.cageCode],
      companyName: 'Dup Parent Inc',
    });
    clock.set(new Date(clock.at.getTime() + 1000));
    const third = await tenantWithProfile('dup-c', { cageCode: first.cageCode, companyName: 'Dup Copy LLC' });
    clock.reset();
    await withService(t.database.db, (tx) =>
      sql`update compliance_profiles set status = 'compliant', status_date = current_date where tenant_id = ${third.tenant}::uuid`.execute(
        tx,
      ),
    );
    const res = (await call({ cageCode: first.cageCode }, 'cmmc_status')).json() as Record<string, unknown> & {
      matches: { primaryCageCode: string; companyName: string; status: string }[];
    };
    expect(res).toMatchObject({
      flow: 'cmmc_status',
      found: true,
      ambiguous: true,
      matchCount: 3,
      cageCode: first.cageCode,
    });
    // No single status at the top level: a caller cannot read one company's compliance as another's.
    expect(res).not.toHaveProperty('status');
    expect(res).not.toHaveProperty('sprsStatus');
    // Primary-code matches first (oldest profile first), then the profile holding it as an additional code.
    expect(res.matches.map((m) => [m.companyName, m.status])).toEqual([
      ['Dup First LLC', 'in_progress'],
      ['Dup Copy LLC', 'compliant'],
      ['Dup Parent Inc', 'in_progress'],
    ]);
    expect(res.matches[2]!.primaryCageCode).toBe(second.cageCode);
    // The same question gets the same answer.
    expect(((await call({ cageCode: first.cageCode }, 'cmmc_status')).json() as typeof res).matches).toEqual(
      res.matches,
    );
    // A code of only one profile answers as before.
    expect((await call({ cageCode: second.cageCode }, 'cmmc_status')).json()).toMatchObject({
      found: true,
      ambiguous: false,
      companyName: 'Dup Parent Inc',
      status: 'in_progress',
    });
  });

  it('cmmc_handoff returns a one-time 30-minute link; GET does not use it, a signed-in claim does, once; a retried request id gets the same link', async () => {
    clock.reset();
    const payload = { cageCode: '7HX12', companyName: 'Handoff Corp', contactEmail: 'Buyer@Handoff.test' };
    const rid = `handoff-${RUN}`;
    const a = await call(payload, 'cmmc_handoff', rid);
    expect(a.statusCode, a.body).toBe(200);
    const link = a.json() as { url: string; expiresAt: string; requestId: string };
    expect(link.url).toMatch(/\/cmmc\/start\?token=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(link.expiresAt) - clock.at.getTime()).toBe(30 * 60_000);
    const replay = await call(payload, 'cmmc_handoff', rid);
    expect(replay.json()).toMatchObject({ url: link.url, replayed: true });
    const token = new URL(link.url).searchParams.get('token')!;

    // A link previewer's GET of the page and of the preview API leaves the link usable.
    const page = await t.app.inject({ method: 'GET', url: `/cmmc/start?token=${token}` });
    expect(page.statusCode).toBeLessThan(500);
    const owner = new Client(t.app);
    await owner.signUp(uniqueEmail('handoff-owner'));
    const tenant = await owner.createTenant('Handoff tenant');
    await owner.me();
    expect((await owner.get(`/api/v1/cmmc/handoff?token=${token}`)).json()).toMatchObject({
      prefill: { cageCode: '7HX12', companyName: 'Handoff Corp', contactEmail: 'buyer@handoff.test' },
    });
    expect((await new Client(t.app).get(`/api/v1/cmmc/handoff?token=${token}`)).statusCode).toBe(401);

    const claim = await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token });
    expect(claim.statusCode, claim.body).toBe(200);
    expect(claim.json()).toMatchObject({ prefill: { cageCode: '7HX12' }, profileExists: false });
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token })).json()).toMatchObject({
      error: 'cmmc_handoff_used',
    });
    expect((await owner.get(`/api/v1/cmmc/handoff?token=${token}`)).json()).toMatchObject({
      error: 'cmmc_handoff_used',
    });

    // Expiry: 30 minutes later an unused link is refused.
    const b = (await call(payload, 'cmmc_handoff', `${rid}-2`)).json() as { url: string };
    const token2 = new URL(b.url).searchParams.get('token')!;
    clock.set(new Date(clock.at.getTime() + 30 * 60_000 + 1000));
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token: token2 })).json()).toMatchObject({
      error: 'cmmc_handoff_expired',
    });
    expect(
      (await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token: 'x'.repeat(43) })).json(),
    ).toMatchObject({ error: 'cmmc_handoff_invalid' });
    // The daily sweep removes links a day past their expiry and keeps the others. (The old link is
    // made in the past rather than the clock moved ahead: suites share the PostgreSQL database.)
    clock.set(new Date(Date.now() - 3 * DAY));
    expect((await call(payload, 'cmmc_handoff', `${rid}-old`)).statusCode).toBe(200);
    clock.reset();
    const links = async () =>
      (
        await withService(t.database.db, (tx) =>
          sql<{
            request_id: string;
          }>`select request_id from cmmc_handoff_links where caller = ${BID} and request_id like ${`${rid}%`} order by request_id`.execute(
            tx,
          ),
        )
      ).rows.map((r) => r.request_id);
    expect(await links()).toEqual([rid, `${rid}-2`, `${rid}-old`]);
    await t.app.inject({
      method: 'POST',
      url: '/api/public/hooks/cmmc-renewals',
      headers: { authorization: `Bearer ${CRON}` },
    });
    expect(await links()).toEqual([rid, `${rid}-2`]);
  });

  it('a link claimed by a tenant that already has a profile is used up, changes nothing and says so', async () => {
    clock.reset();
    const { owner, tenant, base, cageCode } = await tenantWithProfile('handoff-existing', {
      companyName: 'Existing Works',
    });
    const link = (
      await call(
        { cageCode: '7HX34', companyName: 'Bid Portal Name', contactEmail: 'buyer@portal.test' },
        'cmmc_handoff',
        `existing-${RUN}`,
      )
    ).json() as { url: string };
    const token = new URL(link.url).searchParams.get('token')!;
    const claim = await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token });
    expect(claim.statusCode, claim.body).toBe(200);
    expect(claim.json()).toMatchObject({
      profileExists: true,
      prefill: { cageCode: '7HX34', companyName: 'Bid Portal Name' },
    });
    expect(
      ((await owner.get(`${base}/profile`)).json() as { profile: { cageCode: string; companyName: string } }).profile,
    ).toMatchObject({ cageCode, companyName: 'Existing Works' });
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token })).json()).toMatchObject({
      error: 'cmmc_handoff_used',
    });
  });
});
