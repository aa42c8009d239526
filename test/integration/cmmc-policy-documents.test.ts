// CMMC program, policy documents: the generated set from company data, Markdown and PDF, and a
// draft approved once with its effective date. Runs on PGlite and, with DATABASE_URL, on
// PostgreSQL.
import { describe, expect, it } from 'vitest';
import { setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { clock, tenantWithProfile } = setupCmmcProgramApp();

describe('policies', () => {
  it('generates the set from company data, shows it, renders PDF, and approves a draft once', async () => {
    clock.reset();
    const { owner, base, cageCode } = await tenantWithProfile('policy', { companyName: 'Zeta Precision Inc' });
    expect((await owner.post(`${base}/policies/generate`, {})).json()).toEqual({ generated: 8 });
    const list = (await owner.get(`${base}/policies`)).json() as {
      documents: {
        kind: string;
        latest: { id: string; status: string; version: number; inForce: boolean };
        inForce: unknown;
      }[];
    };
    expect(list.documents).toHaveLength(8);
    const ac = list.documents.find((d) => d.kind === 'access_control')!;
    expect(ac.latest).toMatchObject({ status: 'draft', version: 1, inForce: false });
    const doc = (await owner.get(`${base}/policies/${ac.latest.id}`)).json() as { body: string };
    expect(doc.body).toContain('Zeta Precision Inc');
    expect(doc.body).toContain(cageCode);
    expect(doc.body).toContain('AC.L1-b.1.i');
    expect(doc.body).toContain('Microsoft 365');
    const pdf = await owner.get(`${base}/policies/${ac.latest.id}/pdf`);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.headers['content-disposition']).toContain('access-control-v1.pdf');

    expect(
      (
        await owner.post(`${base}/policies/${ac.latest.id}/approve`, {
          effectiveDate: 'tomorrow',
          forAffirmingOfficial: true,
        })
      ).statusCode,
    ).toBe(400);
    // Only as (or for) the Affirming Official.
    const unconfirmed = await owner.post(`${base}/policies/${ac.latest.id}/approve`, { effectiveDate: clock.today() });
    expect(unconfirmed.statusCode).toBe(400);
    expect(unconfirmed.json().details.map((d: { path: string }) => d.path)).toContain('body.forAffirmingOfficial');
    const approved = await owner.post(`${base}/policies/${ac.latest.id}/approve`, {
      effectiveDate: clock.today(),
      forAffirmingOfficial: true,
    });
    expect(approved.json()).toMatchObject({ status: 'approved', inForce: true, effectiveDate: clock.today() });
    expect(
      (
        await owner.post(`${base}/policies/${ac.latest.id}/approve`, {
          effectiveDate: clock.today(),
          forAffirmingOfficial: true,
        })
      ).json(),
    ).toMatchObject({ error: 'cmmc_policy_not_draft' });
    // Regenerating keeps the approved version in force and adds a draft v2.
    await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] });
    const after = (
      (await owner.get(`${base}/policies`)).json() as {
        documents: { kind: string; latest: { version: number; status: string }; inForce: { version: number } | null }[];
      }
    ).documents.find((d) => d.kind === 'access_control')!;
    expect(after.latest).toMatchObject({ version: 2, status: 'draft' });
    expect(after.inForce?.version).toBe(1);
  });
});
