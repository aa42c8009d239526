// CMMC program, attestations: answers with who and when, the note a not-applicable answer needs,
// evidence files in the tenant's store, and the roles that may change them. Runs on PGlite and,
// with DATABASE_URL, on PostgreSQL.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { PNG, multipartFile, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { t, clock, tenantWithProfile } = setupCmmcProgramApp();

describe('attestations and evidence', () => {
  it('records who answered when, needs a note for not applicable, stores evidence files in the tenant store and refuses members', async () => {
    clock.reset();
    const { owner, tenant, base } = await tenantWithProfile('attest');
    const na = await owner.put(`${base}/attestations/ac1.roster`, { answer: 'not_applicable' });
    expect(na.statusCode).toBe(400);
    expect((na.json() as { details: { path: string }[] }).details[0]!.path).toBe('body.note');
    expect((await owner.put(`${base}/attestations/zz9.nope`, { answer: 'yes' })).json()).toMatchObject({
      error: 'cmmc_item_not_found',
    });
    const ok = await owner.put(`${base}/attestations/ac1.roster`, { answer: 'yes', note: 'Roster in SharePoint' });
    expect(ok.json()).toMatchObject({ answer: 'yes', note: 'Roster in SharePoint' });

    const boundary = `----h7${randomBytes(6).toString('hex')}`;
    const content = Buffer.from('Name,Email\nAlice,alice@acme.test\n');
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="roster.csv"\r\nContent-Type: text/csv\r\n\r\n`,
      ),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const up = await owner.request('POST', `${base}/attestations/ac1.roster/evidence`, payload, {
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect(up.statusCode, up.body).toBe(201);
    const ev = (up.json() as { evidence: { id: string; fileName: string; sha256: string } }).evidence;
    expect(ev.fileName).toBe('roster.csv');
    const list = (await owner.get(`${base}/attestations`)).json() as {
      requirements: {
        items: { id: string; answeredByEmail: string; answeredAt: string; evidence: { id: string }[] }[];
      }[];
    };
    const item = list.requirements[0]!.items.find((i) => i.id === 'ac1.roster')!;
    expect(item.answeredByEmail).toMatch(/attest-owner/);
    expect(item.answeredAt).toBeTruthy();
    expect(item.evidence.map((e) => e.id)).toEqual([ev.id]);
    const dl = await owner.get(`${base}/evidence/${ev.id}`);
    expect(dl.statusCode).toBe(200);
    expect(dl.rawPayload.equals(content)).toBe(true);

    const member = new Client(t.app);
    const m = await member.signUp(uniqueEmail('attest-member'));
    await t.database.db
      .insertInto('member')
      .values({ organizationId: tenant, userId: m.user.id, role: 'member', createdAt: new Date() })
      .execute();
    await member.me();
    expect((await member.put(`${base}/attestations/ac1.roster`, { answer: 'no' })).statusCode).toBe(403);
    expect((await member.get(`${base}/attestations`)).statusCode).toBe(200);
    const outsider = new Client(t.app);
    await outsider.signUp(uniqueEmail('attest-outsider'));
    expect((await outsider.get(`${base}/evidence/${ev.id}`)).statusCode).toBe(403);

    // No confirmation yet: nothing to attach a proof to.
    const png = multipartFile('sprs.png', PNG, 'image/png');
    expect(
      (await owner.request('POST', `${base}/sprs-confirmation/proof`, png.payload, png.headers)).json(),
    ).toMatchObject({ error: 'cmmc_confirmation_not_found' });
    expect((await owner.delete(`${base}/evidence/${ev.id}`)).statusCode).toBe(204);
    expect((await owner.get(`${base}/evidence/${ev.id}`)).json()).toMatchObject({ error: 'cmmc_evidence_not_found' });
  });
});
