// CMMC program, policy documents: the generated set from company data, Markdown and PDF, and a
// draft approved once with its effective date. Runs on PGlite and, with DATABASE_URL, on
// PostgreSQL.
import { describe, expect, it } from 'vitest';
import { setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { clock, tenantWithProfile, addUser } = setupCmmcProgramApp();

type Listed = { kind: string; latest: { id: string; status: string; nextReviewDate: string | null } | null }[];

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

  it('approves several drafts in one confirmation, all or none', async () => {
    clock.reset();
    const { owner, tenant, base } = await tenantWithProfile('policy-bulk');
    await owner.post(`${base}/policies/generate`, {});
    const listed = async () => ((await owner.get(`${base}/policies`)).json() as { documents: Listed }).documents;
    const docs = await listed();
    const ids = docs.map((d) => d.latest!.id);
    const today = clock.today();
    const body = (over: Record<string, unknown> = {}) => ({
      documentIds: ids,
      effectiveDate: today,
      forAffirmingOfficial: true,
      ...over,
    });

    // Only the Affirming Official, and only with the confirmation.
    const admin = await addUser(tenant, 'policy-bulk-admin', 'admin');
    expect((await admin.c.post(`${base}/policies/approve`, body())).json()).toMatchObject({
      error: 'cmmc_not_affirming_official',
    });
    expect((await owner.post(`${base}/policies/approve`, body({ forAffirmingOfficial: undefined }))).statusCode).toBe(
      400,
    );
    expect((await owner.post(`${base}/policies/approve`, body({ documentIds: [] }))).statusCode).toBe(400);
    const early = await owner.post(`${base}/policies/approve`, body({ reviewDate: today }));
    expect(early.statusCode).toBe(400);
    expect(early.json().details[0].path).toBe('body.reviewDate');

    // One approved already: nothing of the batch is approved, and the error names it.
    const first = await owner.post(`${base}/policies/${ids[2]}/approve`, {
      effectiveDate: today,
      forAffirmingOfficial: true,
    });
    expect(first.statusCode, first.body).toBe(200);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const refused = await owner.post(`${base}/policies/approve`, body({ documentIds: [...ids.slice(0, 7), unknown] }));
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({
      error: 'cmmc_policies_not_approvable',
      details: [
        { path: 'body.documentIds.2', code: 'cmmc_policy_not_draft' },
        { path: 'body.documentIds.7', code: 'cmmc_policy_not_found' },
      ],
    });
    expect((await listed()).filter((d) => d.latest!.status === 'approved')).toHaveLength(1);

    // The rest in one call, with one review date.
    const rest = ids.filter((_, i) => i !== 2);
    const review = new Date(Date.now() + 200 * 86_400_000).toISOString().slice(0, 10);
    const ok = await owner.post(`${base}/policies/approve`, body({ documentIds: rest, reviewDate: review }));
    expect(ok.statusCode, ok.body).toBe(200);
    const approved = (ok.json() as { documents: { id: string; status: string; nextReviewDate: string }[] }).documents;
    expect(approved.map((d) => d.id).sort()).toEqual([...rest].sort());
    expect(approved.every((d) => d.status === 'approved' && d.nextReviewDate === review)).toBe(true);
    expect((await listed()).every((d) => d.latest!.status === 'approved')).toBe(true);
  });
});
