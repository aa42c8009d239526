// CMMC program, score and SPRS: scoring to 15/15 (no partial credit), the Affirming Official's
// SPRS confirmation with its outbox events and proof file, who may approve and confirm, and CAGE
// codes saved before I and O were refused. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { checkIdsFor } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { DAY, PNG, cage, multipartFile, unzip, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const {
  t,
  clock,
  tenantWithProfile,
  postRun,
  answerAll,
  approveAll,
  score,
  confirmBody,
  outboxFor,
  addUser,
  bid: BID,
  mgmt: MGMT,
} = setupCmmcProgramApp();

describe('from nothing to 15/15', () => {
  it('scores NOT MET until every device check, attestation and policy is there, then confirms SPRS and tells the bid and management peers', async () => {
    clock.reset();
    const { owner, base, cageCode } = await tenantWithProfile('full');
    let s = await score(owner, base);
    expect(s.met).toBe(0);
    // Without devices, items and policies every requirement is NOT MET, each saying why.
    expect(s.requirements.every((r) => r.status === 'NOT_MET' && r.missingItems.length > 0 && r.missingPolicy)).toBe(
      true,
    );

    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base, {
      'sc11.public_list': { answer: 'not_applicable', note: 'No public systems' },
      'sc11.separated': { answer: 'not_applicable', note: 'No website or guest Wi-Fi' },
    });
    s = await score(owner, base);
    expect(s.met).toBe(0);
    expect(s.requirements.every((r) => r.missingItems.length === 0 && r.failingChecks.length === 0)).toBe(true);

    // Confirming before 15/15 is refused.
    const early = await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(early.statusCode).toBe(409);
    expect(early.json()).toMatchObject({ error: 'cmmc_not_all_met' });

    // Drafts do not count; approved with a future effective date does not count yet either.
    await approveAll(owner, base, new Date(clock.at.getTime() + 3 * DAY).toISOString().slice(0, 10));
    expect((await score(owner, base)).met).toBe(0);
    // Regenerate → new draft versions; approve them effective today.
    await approveAll(owner, base);
    s = await score(owner, base);
    expect(s.met, JSON.stringify(s.requirements.filter((r) => r.status === 'NOT_MET'))).toBe(15);
    expect(s.requirements.find((r) => r.requirementId === 'SC.L1-b.1.xi')!.status).toBe('NA');

    // A failing check on a second computer drops it again: no partial credit.
    await postRun(owner, base, 'macos', 'mac-1', {
      ...Object.fromEntries(checkIdsFor('macos').map((id) => [id, 'pass'])),
      'mac.firewall': 'unknown',
    });
    s = await score(owner, base);
    expect(s.met).toBe(14);
    expect(s.requirements.find((r) => r.status === 'NOT_MET')!.requirementId).toBe('SC.L1-b.1.x');
    // The newer run of the same computer replaces the older one.
    clock.set(new Date(clock.at.getTime() + 1000));
    await postRun(owner, base, 'macos', 'mac-1');
    expect((await score(owner, base)).met).toBe(15);

    const bad = await owner.post(
      `${base}/sprs-confirmation`,
      confirmBody(cageCode, { cageCodes: ['ZZZZ9'], affirm: false }),
    );
    expect(bad.statusCode).toBe(400);
    const ok = await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(ok.statusCode, ok.body).toBe(201);
    const conf = ok.json() as { status: string; nextDue: string; reminderAt: string; assessmentSnapshotSha256: string };
    expect(conf.status).toBe('compliant');
    expect(conf.nextDue).toBe(
      new Date(Date.parse(`${clock.today()}T00:00:00Z`) + 365 * DAY).toISOString().slice(0, 10),
    );
    expect(conf.reminderAt).toBe(
      new Date(Date.parse(`${clock.today()}T00:00:00Z`) + 335 * DAY).toISOString().slice(0, 10),
    );
    expect(conf.assessmentSnapshotSha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await score(owner, base)).profileStatus).toBe('compliant');
    const events = await outboxFor(cageCode);
    expect(events.map((e) => [e.peer, e.event_type])).toEqual(
      expect.arrayContaining([
        [BID, 'cmmc.compliant'],
        [MGMT, 'cmmc.compliant'],
      ]),
    );
    expect(events).toHaveLength(2);

    // The optional proof of the SPRS entry: PDF, PNG or JPEG, kept with the latest confirmation and in the evidence pack.
    const txt = multipartFile('sprs.txt', Buffer.from('hello'), 'text/plain');
    expect(
      (await owner.request('POST', `${base}/sprs-confirmation/proof`, txt.payload, txt.headers)).json(),
    ).toMatchObject({ error: 'evidence_type_not_allowed' });
    const png = multipartFile('sprs-entry.png', PNG, 'image/png');
    const proof = await owner.request('POST', `${base}/sprs-confirmation/proof`, png.payload, png.headers);
    expect(proof.statusCode, proof.body).toBe(201);
    const got = await owner.get(`${base}/sprs-confirmation/proof`);
    expect(got.headers['content-type']).toBe('image/png');
    expect(got.rawPayload.equals(PNG)).toBe(true);
    expect(
      ((await score(owner, base)) as unknown as { lastConfirmation: { proofFileName: string } }).lastConfirmation
        .proofFileName,
    ).toBe('sprs-entry.png');
    const pack = unzip((await owner.get(`${base}/export/evidence-pack.zip`)).rawPayload);
    expect(pack['sprs-proof/1-sprs-entry.png']?.equals(PNG)).toBe(true);
    expect(JSON.stringify(JSON.parse(pack['sprs-confirmations.json']!.toString()))).not.toContain('cmmc-sprs-proof/');

    // A delivery that fails for good is reported to the management peer through the reporter.
    await t.app.services.mesh.outbox.deliverDue();
    const failures = () =>
      withService(
        t.database.db,
        async (tx) =>
          (
            await sql<{
              peer: string;
              title: string;
            }>`select peer, payload::jsonb ->> 'title' as title from svc_outbox where event_type = 'mesh.delivery_failed' and payload::jsonb -> 'data' ->> 'peer' = ${BID}`.execute(
              tx,
            )
          ).rows,
      );
    await expect.poll(failures, { timeout: 20_000 }).toEqual([
      {
        peer: MGMT,
        // The report names the company and its CAGE code.
        title: expect.stringMatching(
          new RegExp(`^Could not deliver cmmc\\.compliant for .+ \\(CAGE ${cageCode}\\) to ${BID}$`),
        ),
      },
    ]);
  }, 60_000);
});

describe('the Affirming Official', () => {
  it('alone approves policies and confirms the SPRS entry; another admin gets cmmc_not_affirming_official; the pages say who may act', async () => {
    clock.reset();
    const { owner, tenant, base, cageCode, email } = await tenantWithProfile('official');
    const admin = await addUser(tenant, 'official-admin', 'admin');
    expect((await owner.post(`${base}/policies/generate`, {})).statusCode).toBe(200);
    type Policies = {
      canApprove: boolean;
      affirmingOfficial: { email: string; isCaller: boolean };
      documents: { kind: string; latest: { id: string; status: string } }[];
    };
    const asAdmin = (await admin.c.get(`${base}/policies`)).json() as Policies;
    expect(asAdmin).toMatchObject({ canApprove: false, affirmingOfficial: { email, isCaller: false } });
    expect((await owner.get(`${base}/policies`)).json()).toMatchObject({
      canApprove: true,
      affirmingOfficial: { email, isCaller: true },
    });
    const draft = asAdmin.documents.find((d) => d.kind === 'access_control')!.latest.id;
    const refused = await admin.c.post(`${base}/policies/${draft}/approve`, {
      effectiveDate: clock.today(),
      forAffirmingOfficial: true,
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      error: 'cmmc_not_affirming_official',
      details: { affirmingOfficialEmail: email, signedInAs: admin.email },
    });
    expect(
      ((await owner.get(`${base}/policies`)).json() as Policies).documents.find((d) => d.kind === 'access_control')!
        .latest.status,
    ).toBe('draft');

    await approveAll(owner, base);
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    expect(await score(admin.c, base)).toMatchObject({
      allMet: true,
      canConfirm: false,
      affirmingOfficial: { email, isCaller: false },
    });
    const notOfficial = await admin.c.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(notOfficial.statusCode).toBe(403);
    expect(notOfficial.json()).toMatchObject({ error: 'cmmc_not_affirming_official' });
    expect((await score(owner, base)).profileStatus).toBe('in_progress');

    // The owner names the admin as the Affirming Official in Scope (audited): now only the admin acts.
    const profile = (
      (await owner.get(`${base}/profile`)).json() as {
        profile: Record<string, unknown> & { affirmingOfficial: Record<string, string> };
      }
    ).profile;
    const body = {
      cageCode,
      companyName: profile.companyName,
      biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test' }],
      mailPlatform: 'm365',
      scopeDescription: 'Office network and 2 laptops',
      affirmingOfficial: { name: 'Ada Admin', title: 'COO', email: admin.email.toUpperCase() },
    };
    expect((await owner.put(`${base}/profile`, body)).statusCode).toBe(200);
    expect(await score(owner, base)).toMatchObject({ canConfirm: false });
    expect(await score(admin.c, base)).toMatchObject({ canConfirm: true, affirmingOfficial: { isCaller: true } });
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode))).json()).toMatchObject({
      error: 'cmmc_not_affirming_official',
    });
    const ok = await admin.c.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(ok.statusCode, ok.body).toBe(201);
    const row = (
      await withService(t.database.db, (tx) =>
        sql<{
          confirmed_by_email: string;
          affirming_official_email: string;
        }>`select confirmed_by_email, affirming_official_email from compliance_handoffs where tenant_id = ${tenant}::uuid`.execute(
          tx,
        ),
      )
    ).rows;
    expect(row).toEqual([{ confirmed_by_email: admin.email, affirming_official_email: admin.email }]);

    // An Affirming Official with the member role still cannot act (owners and admins change CMMC records).
    const member = await addUser(tenant, 'official-member', 'member');
    expect(
      (
        await owner.put(`${base}/profile`, {
          ...body,
          affirmingOfficial: { name: 'Mo Member', title: 'CFO', email: member.email },
        })
      ).statusCode,
    ).toBe(200);
    expect((await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] })).statusCode).toBe(200);
    const next = (await member.c.get(`${base}/policies`)).json() as Policies;
    expect(next).toMatchObject({ canApprove: false, affirmingOfficial: { isCaller: true } });
    const byMember = await member.c.post(
      `${base}/policies/${next.documents.find((d) => d.kind === 'access_control')!.latest.id}/approve`,
      { effectiveDate: clock.today(), forAffirmingOfficial: true },
    );
    expect(byMember.json()).toMatchObject({ error: 'tenant_forbidden' });
  });
});

describe('CAGE codes saved before I and O were refused', () => {
  /** Stores codes as an older release could (the 0024 triggers refuse them now, so they are bypassed in one transaction). */
  const storeLegacy = (tenant: string, cageCode: string, additional: string[]) =>
    t.database.db.transaction().execute(async (tx) => {
      await sql`alter table compliance_profiles disable trigger compliance_profiles_cage_codes_update`.execute(tx);
      await sql`update compliance_profiles set cage_code = ${cageCode}, additional_cage_codes = ${additional}::text[] where tenant_id = ${tenant}`.execute(
        tx,
      );
      await sql`alter table compliance_profiles enable trigger compliance_profiles_cage_codes_update`.execute(tx);
    });

  it('Scope names the stored code on save, SPRS confirmation answers cmmc_cage_code_invalid naming it, status changes still work, and the database refuses new ones', async () => {
    clock.reset();
    const { owner, tenant, base, email } = await tenantWithProfile('legacy-cage');
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    await approveAll(owner, base);
    expect((await score(owner, base)).met).toBe(15);
    const legacy = `9${cage().slice(0, 3)}O`;
    const legacyFurther = `I${cage().slice(0, 4)}`;
    await storeLegacy(tenant, legacy, ['9ZZ99', legacyFurther]);
    const profile = (
      (await owner.get(`${base}/profile`)).json() as { profile: { cageCode: string; additionalCageCodes: string[] } }
    ).profile;
    expect(profile).toMatchObject({ cageCode: legacy, additionalCageCodes: ['9ZZ99', legacyFurther] });

    // Re-saving Scope unchanged: each field error names its code and the likely correction.
    const body = {
      cageCode: legacy,
      additionalCageCodes: ['9ZZ99', legacyFurther],
      companyName: 'legacy-cage Machining LLC',
      biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test' }],
      mailPlatform: 'm365',
      affirmingOfficial: { name: 'Alice Able', title: 'President', email },
      scopeDescription: 'Office network and 2 laptops',
    };
    const resave = await owner.put(`${base}/profile`, body);
    expect(resave.statusCode).toBe(400);
    const details = (resave.json() as { details: { path: string; message: string }[] }).details;
    expect(details.find((d) => d.path === 'body.cageCode')!.message).toBe(
      `${legacy} uses the letter O: CAGE codes never use the letters I and O (they are the digits 1 and 0), so it is probably ${legacy.replace(/O/g, '0')}.`,
    );
    expect(details.find((d) => d.path === 'body.additionalCageCodes.1')!.message).toContain(
      `${legacyFurther} uses the letter I`,
    );

    // The SPRS confirmation says which stored codes to correct, and where.
    const conf = await owner.post(`${base}/sprs-confirmation`, confirmBody(legacy));
    expect(conf.statusCode, conf.body).toBe(409);
    const err = conf.json() as {
      error: string;
      message: string;
      details: { invalidCageCodes: string[]; fields: string[] };
    };
    expect(err).toMatchObject({
      error: 'cmmc_cage_code_invalid',
      details: { invalidCageCodes: [legacy, legacyFurther], fields: ['cageCode', 'additionalCageCodes'] },
    });
    expect(err.message).toContain(`The CAGE codes ${legacy}, ${legacyFurther} saved in Scope are not valid`);
    expect(err.message).toMatch(/Correct them in Scope and save/);

    // Status changes of such a profile still work (no check constraint on the old row).
    await withService(t.database.db, (tx) =>
      sql`update compliance_profiles set status = 'renewal_due' where tenant_id = ${tenant}`.execute(tx),
    );
    await withService(t.database.db, (tx) =>
      sql`update compliance_profiles set status = 'in_progress' where tenant_id = ${tenant}`.execute(tx),
    );
    // The database refuses writing a code with I or O, primary or further.
    const refused = async (q: ReturnType<typeof sql>) => {
      let code = '';
      try {
        await q.execute(t.database.db);
      } catch (e) {
        code = String((e as { code?: string }).code ?? e);
      }
      return code;
    };
    expect(await refused(sql`update compliance_profiles set cage_code = '1ABO2' where tenant_id = ${tenant}`)).toBe(
      '23514',
    );
    expect(
      await refused(
        sql`update compliance_profiles set additional_cage_codes = array['9ZZ99', '1ABI2'] where tenant_id = ${tenant}`,
      ),
    ).toBe('23514');
    expect(
      await refused(
        sql`update compliance_profiles set additional_cage_codes = array['9ZZ99'] where tenant_id = ${tenant}`,
      ),
    ).toBe('23514');

    // Corrected in Scope: saved, and the confirmation goes through.
    const fixed = await owner.put(`${base}/profile`, {
      ...body,
      cageCode: legacy.replace(/O/g, '0'),
      additionalCageCodes: ['9ZZ99'],
    });
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(legacy.replace(/O/g, '0')))).statusCode).toBe(
      201,
    );
  }, 60_000);

  it('the database refuses a new profile with I or O in a CAGE code', async () => {
    const { tenant } = await tenantWithProfile('legacy-cage-insert');
    const row = (
      await withService(t.database.db, (tx) =>
        sql<Record<string, unknown>>`select * from compliance_profiles where tenant_id = ${tenant}`.execute(tx),
      )
    ).rows[0]!;
    let code = '';
    try {
      await sql`insert into compliance_profiles (tenant_id, cage_code, additional_cage_codes, company_name, bidding_users, mail_platform, affirming_official_name, affirming_official_title, affirming_official_email) values (${tenant}, '1ABO2', '{}', 'x', ${JSON.stringify(row.bidding_users)}, 'm365', 'a', 'b', 'c@d.test')`.execute(
        t.database.db,
      );
    } catch (e) {
      code = String((e as { code?: string }).code ?? e);
    }
    expect(code).toBe('23514');
  });
});

describe('program routes', () => {
  it('declare the schema of every success answer (the web app takes its types from them)', async () => {
    type Operation = { responses?: Record<string, { content?: Record<string, { schema?: object }> }> };
    const spec = (await t.app.inject('/docs/json')).json() as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.entries(spec.paths)
      .filter(([path]) => path.includes('cmmc') || path === '/api/public/compliance/verify')
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({ route: `${method} ${path}`, op })),
      );
    // 21 program routes, 7 of Scope and device checks (profile twice, device token, devices, retire, unretire, verify),
    // and the signing key.
    expect(operations.length).toBeGreaterThanOrEqual(29);
    const undeclared = operations.filter(({ op }) => {
      const success = Object.entries(op.responses ?? {}).filter(([code]) => /^2\d\d$/.test(code));
      if (!success.length) return true;
      return success.some(([code, r]) => code !== '204' && !Object.values(r.content ?? {}).some((c) => c.schema));
    });
    expect(undeclared.map((o) => o.route)).toEqual([]);
  });
});
