// CMMC program, attestations: answers with who and when, the note a not-applicable answer needs,
// evidence files in the tenant's store, and the roles that may change them. Runs on PGlite and,
// with DATABASE_URL, on PostgreSQL.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { ATTESTATION_ITEMS } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { PNG, multipartFile, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { t, clock, tenantWithProfile, addUser } = setupCmmcProgramApp();

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

  it('saves a section or all answers in one request, all or nothing, naming each refused item', async () => {
    clock.reset();
    const { owner, tenant, base } = await tenantWithProfile('attest-bulk');
    const answers = async () =>
      new Map(
        (
          (await owner.get(`${base}/attestations`)).json() as {
            requirements: {
              items: { id: string; answer: string | null; note: string | null; answeredAt: string | null }[];
            }[];
          }
        ).requirements
          .flatMap((r) => r.items)
          .map((i) => [i.id, i]),
      );
    const section = ATTESTATION_ITEMS.filter((i) => i.requirementId === 'AC.L1-b.1.i');
    expect(section.length).toBeGreaterThan(1);

    // One bad item refuses the whole request; each is named by its index and item id.
    const bad = await owner.put(`${base}/attestations`, {
      answers: [
        { itemId: section[0]!.id, answer: 'yes' },
        { itemId: section[1]!.id, answer: 'not_applicable' },
        { itemId: 'zz9.nope', answer: 'yes' },
        { itemId: section[0]!.id, answer: 'no' },
      ],
    });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json()).toMatchObject({
      error: 'validation_failed',
      details: [
        { path: 'body.answers.1.note', itemId: section[1]!.id },
        { path: 'body.answers.2.itemId', itemId: 'zz9.nope' },
        { path: 'body.answers.3.itemId', itemId: section[0]!.id },
      ],
    });
    expect([...(await answers()).values()].every((i) => i.answer === null)).toBe(true);
    const shape = await owner.put(`${base}/attestations`, { answers: [{ itemId: section[0]!.id, answer: 'maybe' }] });
    expect(shape.statusCode).toBe(400);
    expect(shape.json().details[0].path).toBe('body.answers.0.answer');
    expect((await owner.put(`${base}/attestations`, { answers: [] })).statusCode).toBe(400);

    // A section in one request.
    const saved = await owner.put(`${base}/attestations`, {
      answers: section.map((i, n) =>
        n === 1
          ? { itemId: i.id, answer: 'not_applicable', note: 'No shared accounts' }
          : { itemId: i.id, answer: 'yes' },
      ),
    });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({ saved: section.length, unchanged: 0 });
    const first = await answers();
    expect(first.get(section[1]!.id)).toMatchObject({ answer: 'not_applicable', note: 'No shared accounts' });

    // Save all: every item; those sent unchanged keep who answered them and when.
    clock.set(new Date(Date.now() + 60_000));
    const all = await owner.put(`${base}/attestations`, {
      answers: ATTESTATION_ITEMS.map((i, n) =>
        n === 1
          ? { itemId: i.id, answer: 'not_applicable', note: 'No shared accounts' }
          : { itemId: i.id, answer: 'yes' },
      ),
    });
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toMatchObject({ saved: ATTESTATION_ITEMS.length - section.length, unchanged: section.length });
    const after = await answers();
    expect(after.get(section[0]!.id)!.answeredAt).toBe(first.get(section[0]!.id)!.answeredAt);
    expect([...after.values()].every((i) => i.answer !== null)).toBe(true);
    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select('id')
        .where('tenant_id', '=', tenant)
        .where('action', '=', 'cmmc.attestation_answered')
        .execute(),
    );
    expect(audit).toHaveLength(ATTESTATION_ITEMS.length);

    // Members read, never write.
    const member = await addUser(tenant, 'attest-bulk-member', 'member');
    expect(
      (await member.c.put(`${base}/attestations`, { answers: [{ itemId: section[0]!.id, answer: 'no' }] })).statusCode,
    ).toBe(403);
    clock.reset();
  });
});
