// CMMC Level 1, part 2: attestations with evidence files, the generated policy set (draft →
// approved, PDF), scoring to 15/15, the SPRS confirmation and its outbox events, the exports, the
// renewal sweep on a controllable clock, the bid peer's cmmc_handoff / cmmc_status flows and the
// staff list. Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTESTATION_ITEMS, checkIdsFor, type IssuedTokenDto } from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { dispatch } from '../helpers/mesh.ts';
import { freePort } from '../../bench/lib.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const BID = `bid-${RUN}`;
const MGMT = `mgmt-${RUN}`;
const BID_SECRET = 'bid-secret-0123456789abcdef0123456789';
const MGMT_SECRET = 'mgmt-secret-0123456789abcdef012345678';
const CRON = 'cron-secret-0123456789abcdef0123456789';
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const DAY = 86_400_000;

let now = new Date();
const clock: Clock = { now: () => new Date(now) };
let t: TestApp;

beforeAll(async () => {
  // Both peers point at a closed port: events are enqueued, and a delivery attempt fails at once.
  const dead = `http://127.0.0.1:${await freePort()}`;
  t = await createTestApp({
    env: {
      [`SVC_PEER_URL_${sfx(BID)}`]: dead,
      [`SVC_PEER_URL_${sfx(MGMT)}`]: dead,
      CMMC_SCRIPT_SIGNING_SEED: 'cmmc-program-test-seed-0123456789',
      CRON_SECRET: CRON,
      [`SVC_SECRET_FROM_${sfx(BID)}`]: BID_SECRET,
      [`SVC_SECRET_TO_${sfx(BID)}`]: BID_SECRET,
      [`SVC_PEER_FLOWS_${sfx(BID)}`]: 'ping,cmmc_status,cmmc_handoff',
      [`SVC_SECRET_FROM_${sfx(MGMT)}`]: MGMT_SECRET,
      [`SVC_SECRET_TO_${sfx(MGMT)}`]: MGMT_SECRET,
      [`SVC_PEER_FLOWS_${sfx(MGMT)}`]: 'ping,cmmc_status,cmmc_handoff',
      SVC_BID_PEER: BID,
      SVC_MANAGEMENT_PEER: MGMT,
    },
    deps: { clock, outboxOptions: { maxAttempts: 1 } },
  });
});
afterAll(async () => t?.close());

// CAGE codes never use the letters I and O.
const CAGE_CHARS = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const cage = () => Array.from(randomBytes(5), (b) => CAGE_CHARS[b % CAGE_CHARS.length]).join('');

/** A tenant whose owner is the Affirming Official (the one who approves policies and confirms SPRS). */
async function tenantWithProfile(label: string, over: Record<string, unknown> = {}) {
  const owner = new Client(t.app);
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
}

async function postRun(owner: Client, base: string, os: 'windows' | 'macos', hostname: string, results: Record<string, string> = Object.fromEntries(checkIdsFor(os).map((id) => [id, 'pass']))) {
  const issued = await owner.post(`${base}/device-token`);
  expect(issued.statusCode, issued.body).toBe(201);
  const token = (issued.json() as IssuedTokenDto).token;
  const res = await t.app.inject({ method: 'POST', url: '/api/public/compliance/verify', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ scriptVersion: '1.0.0', os, hostname, results }) });
  expect(res.statusCode, res.body).toBe(201);
  return token;
}

async function answerAll(owner: Client, base: string, except: Record<string, { answer: string; note?: string }> = {}) {
  for (const i of ATTESTATION_ITEMS) {
    const a = except[i.id] ?? { answer: 'yes' };
    const res = await owner.put(`${base}/attestations/${i.id}`, a);
    expect(res.statusCode, `${i.id}: ${res.body}`).toBe(200);
  }
}

async function approveAll(owner: Client, base: string, effectiveDate = now.toISOString().slice(0, 10)) {
  expect((await owner.post(`${base}/policies/generate`, {})).statusCode).toBe(200);
  const list = (await owner.get(`${base}/policies`)).json() as { documents: { kind: string; latest: { id: string; status: string } }[] };
  for (const d of list.documents) if (d.latest.status === 'draft') expect((await owner.post(`${base}/policies/${d.latest.id}/approve`, { effectiveDate, forAffirmingOfficial: true })).statusCode).toBe(200);
}

function multipartFile(name: string, content: Buffer, type: string) {
  const boundary = `----h7${randomBytes(6).toString('hex')}`;
  const payload = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`), content, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), randomBytes(64)]);

type ScoreDto = { met: number; allMet: boolean; profileStatus: string; affirmationTextVersion: string; requirements: { requirementId: string; status: string; missingItems: string[]; failingChecks: unknown[]; missingPolicy: string | null }[] };
const score = async (c: Client, base: string) => (await c.get(`${base}/score`)).json() as ScoreDto;

const today = () => now.toISOString().slice(0, 10);
const confirmBody = (cageCode: string, over: Record<string, unknown> = {}) => ({ statusDate: today(), affirmedInSprsOn: today(), scopeDescription: 'Office network and 2 laptops', cageCodes: [cageCode], affirm: true, affirmationTextVersion: 'rampart-l1-affirmation-2025-01', ...over });

const outboxFor = (cageCode: string) =>
  withService(t.database.db, async (tx) => (await sql<{ peer: string; event_type: string; payload: unknown }>`select peer, event_type, payload from svc_outbox where payload::jsonb -> 'data' ->> 'cageCode' = ${cageCode} order by created_at, peer`.execute(tx)).rows);

describe('from nothing to 15/15', () => {
  it('scores NOT MET until every device check, attestation and policy is there, then confirms SPRS and tells the bid and management peers', async () => {
    now = new Date();
    const { owner, base, cageCode } = await tenantWithProfile('full');
    let s = await score(owner, base);
    expect(s.met).toBe(0);
    // Without devices, items and policies every requirement is NOT MET, each saying why.
    expect(s.requirements.every((r) => r.status === 'NOT_MET' && r.missingItems.length > 0 && r.missingPolicy)).toBe(true);

    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base, { 'sc11.public_list': { answer: 'not_applicable', note: 'No public systems' }, 'sc11.separated': { answer: 'not_applicable', note: 'No website or guest Wi-Fi' } });
    s = await score(owner, base);
    expect(s.met).toBe(0);
    expect(s.requirements.every((r) => r.missingItems.length === 0 && r.failingChecks.length === 0)).toBe(true);

    // Confirming before 15/15 is refused.
    const early = await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(early.statusCode).toBe(409);
    expect(early.json()).toMatchObject({ error: 'cmmc_not_all_met' });

    // Drafts do not count; approved with a future effective date does not count yet either.
    await approveAll(owner, base, new Date(now.getTime() + 3 * DAY).toISOString().slice(0, 10));
    expect((await score(owner, base)).met).toBe(0);
    // Regenerate → new draft versions; approve them effective today.
    await approveAll(owner, base);
    s = await score(owner, base);
    expect(s.met, JSON.stringify(s.requirements.filter((r) => r.status === 'NOT_MET'))).toBe(15);
    expect(s.requirements.find((r) => r.requirementId === 'SC.L1-b.1.xi')!.status).toBe('NA');

    // A failing check on a second computer drops it again: no partial credit.
    await postRun(owner, base, 'macos', 'mac-1', { ...Object.fromEntries(checkIdsFor('macos').map((id) => [id, 'pass'])), 'mac.firewall': 'unknown' });
    s = await score(owner, base);
    expect(s.met).toBe(14);
    expect(s.requirements.find((r) => r.status === 'NOT_MET')!.requirementId).toBe('SC.L1-b.1.x');
    // The newer run of the same computer replaces the older one.
    now = new Date(now.getTime() + 1000);
    await postRun(owner, base, 'macos', 'mac-1');
    expect((await score(owner, base)).met).toBe(15);

    const bad = await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode, { cageCodes: ['ZZZZ9'], affirm: false }));
    expect(bad.statusCode).toBe(400);
    const ok = await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(ok.statusCode, ok.body).toBe(201);
    const conf = ok.json() as { status: string; nextDue: string; reminderAt: string; assessmentSnapshotSha256: string };
    expect(conf.status).toBe('compliant');
    expect(conf.nextDue).toBe(new Date(Date.parse(`${today()}T00:00:00Z`) + 365 * DAY).toISOString().slice(0, 10));
    expect(conf.reminderAt).toBe(new Date(Date.parse(`${today()}T00:00:00Z`) + 335 * DAY).toISOString().slice(0, 10));
    expect(conf.assessmentSnapshotSha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await score(owner, base)).profileStatus).toBe('compliant');
    const events = await outboxFor(cageCode);
    expect(events.map((e) => [e.peer, e.event_type])).toEqual(expect.arrayContaining([[BID, 'cmmc.compliant'], [MGMT, 'cmmc.compliant']]));
    expect(events).toHaveLength(2);

    // The optional proof of the SPRS entry: PDF, PNG or JPEG, kept with the latest confirmation and in the evidence pack.
    const txt = multipartFile('sprs.txt', Buffer.from('hello'), 'text/plain');
    expect((await owner.request('POST', `${base}/sprs-confirmation/proof`, txt.payload, txt.headers)).json()).toMatchObject({ error: 'evidence_type_not_allowed' });
    const png = multipartFile('sprs-entry.png', PNG, 'image/png');
    const proof = await owner.request('POST', `${base}/sprs-confirmation/proof`, png.payload, png.headers);
    expect(proof.statusCode, proof.body).toBe(201);
    const got = await owner.get(`${base}/sprs-confirmation/proof`);
    expect(got.headers['content-type']).toBe('image/png');
    expect(got.rawPayload.equals(PNG)).toBe(true);
    expect(((await score(owner, base)) as unknown as { lastConfirmation: { proofFileName: string } }).lastConfirmation.proofFileName).toBe('sprs-entry.png');
    const pack = unzip((await owner.get(`${base}/export/evidence-pack.zip`)).rawPayload);
    expect(pack['sprs-proof/1-sprs-entry.png']?.equals(PNG)).toBe(true);
    expect(JSON.stringify(JSON.parse(pack['sprs-confirmations.json']!.toString()))).not.toContain('cmmc-sprs-proof/');

    // A delivery that fails for good is reported to the management peer through the reporter.
    await t.app.services.mesh.outbox.deliverDue();
    const failures = () =>
      withService(t.database.db, async (tx) => (await sql<{ peer: string; title: string }>`select peer, payload::jsonb ->> 'title' as title from svc_outbox where event_type = 'mesh.delivery_failed' and payload::jsonb -> 'data' ->> 'peer' = ${BID}`.execute(tx)).rows);
    await expect.poll(failures, { timeout: 20_000 }).toEqual([{ peer: MGMT, title: `Could not deliver cmmc.compliant to ${BID}` }]);
  }, 60_000);
});

describe('attestations and evidence', () => {
  it('records who answered when, needs a note for not applicable, stores evidence files in the tenant store and refuses members', async () => {
    now = new Date();
    const { owner, tenant, base } = await tenantWithProfile('attest');
    const na = await owner.put(`${base}/attestations/ac1.roster`, { answer: 'not_applicable' });
    expect(na.statusCode).toBe(400);
    expect((na.json() as { details: { path: string }[] }).details[0]!.path).toBe('body.note');
    expect((await owner.put(`${base}/attestations/zz9.nope`, { answer: 'yes' })).json()).toMatchObject({ error: 'cmmc_item_not_found' });
    const ok = await owner.put(`${base}/attestations/ac1.roster`, { answer: 'yes', note: 'Roster in SharePoint' });
    expect(ok.json()).toMatchObject({ answer: 'yes', note: 'Roster in SharePoint' });

    const boundary = `----h7${randomBytes(6).toString('hex')}`;
    const content = Buffer.from('Name,Email\nAlice,alice@acme.test\n');
    const payload = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="roster.csv"\r\nContent-Type: text/csv\r\n\r\n`), content, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const up = await owner.request('POST', `${base}/attestations/ac1.roster/evidence`, payload, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(up.statusCode, up.body).toBe(201);
    const ev = (up.json() as { evidence: { id: string; fileName: string; sha256: string } }).evidence;
    expect(ev.fileName).toBe('roster.csv');
    const list = (await owner.get(`${base}/attestations`)).json() as { requirements: { items: { id: string; answeredByEmail: string; answeredAt: string; evidence: { id: string }[] }[] }[] };
    const item = list.requirements[0]!.items.find((i) => i.id === 'ac1.roster')!;
    expect(item.answeredByEmail).toMatch(/attest-owner/);
    expect(item.answeredAt).toBeTruthy();
    expect(item.evidence.map((e) => e.id)).toEqual([ev.id]);
    const dl = await owner.get(`${base}/evidence/${ev.id}`);
    expect(dl.statusCode).toBe(200);
    expect(dl.rawPayload.equals(content)).toBe(true);

    const member = new Client(t.app);
    const m = await member.signUp(uniqueEmail('attest-member'));
    await t.database.db.insertInto('member').values({ organizationId: tenant, userId: m.user.id, role: 'member', createdAt: new Date() }).execute();
    await member.me();
    expect((await member.put(`${base}/attestations/ac1.roster`, { answer: 'no' })).statusCode).toBe(403);
    expect((await member.get(`${base}/attestations`)).statusCode).toBe(200);
    const outsider = new Client(t.app);
    await outsider.signUp(uniqueEmail('attest-outsider'));
    expect((await outsider.get(`${base}/evidence/${ev.id}`)).statusCode).toBe(403);

    // No confirmation yet: nothing to attach a proof to.
    const png = multipartFile('sprs.png', PNG, 'image/png');
    expect((await owner.request('POST', `${base}/sprs-confirmation/proof`, png.payload, png.headers)).json()).toMatchObject({ error: 'cmmc_confirmation_not_found' });
    expect((await owner.delete(`${base}/evidence/${ev.id}`)).statusCode).toBe(204);
    expect((await owner.get(`${base}/evidence/${ev.id}`)).json()).toMatchObject({ error: 'cmmc_evidence_not_found' });
  });
});

describe('policies', () => {
  it('generates the set from company data, shows it, renders PDF, and approves a draft once', async () => {
    now = new Date();
    const { owner, base, cageCode } = await tenantWithProfile('policy', { companyName: 'Zeta Precision Inc' });
    expect((await owner.post(`${base}/policies/generate`, {})).json()).toEqual({ generated: 8 });
    const list = (await owner.get(`${base}/policies`)).json() as { documents: { kind: string; latest: { id: string; status: string; version: number; inForce: boolean }; inForce: unknown }[] };
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

    expect((await owner.post(`${base}/policies/${ac.latest.id}/approve`, { effectiveDate: 'tomorrow', forAffirmingOfficial: true })).statusCode).toBe(400);
    // Only as (or for) the Affirming Official.
    const unconfirmed = await owner.post(`${base}/policies/${ac.latest.id}/approve`, { effectiveDate: today() });
    expect(unconfirmed.statusCode).toBe(400);
    expect(unconfirmed.json().details.map((d: { path: string }) => d.path)).toContain('body.forAffirmingOfficial');
    const approved = await owner.post(`${base}/policies/${ac.latest.id}/approve`, { effectiveDate: today(), forAffirmingOfficial: true });
    expect(approved.json()).toMatchObject({ status: 'approved', inForce: true, effectiveDate: today() });
    expect((await owner.post(`${base}/policies/${ac.latest.id}/approve`, { effectiveDate: today(), forAffirmingOfficial: true })).json()).toMatchObject({ error: 'cmmc_policy_not_draft' });
    // Regenerating keeps the approved version in force and adds a draft v2.
    await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] });
    const after = ((await owner.get(`${base}/policies`)).json() as { documents: { kind: string; latest: { version: number; status: string }; inForce: { version: number } | null }[] }).documents.find((d) => d.kind === 'access_control')!;
    expect(after.latest).toMatchObject({ version: 2, status: 'draft' });
    expect(after.inForce?.version).toBe(1);
  });
});

describe('exports', () => {
  it('writes the controls CSV (BOM, spec columns, formula-safe, file name), JSON, and an evidence pack without secrets', async () => {
    now = new Date('2026-03-04T05:06:07Z');
    const { owner, base, cageCode } = await tenantWithProfile('export', { companyName: '=HYPERLINK("http://evil")' });
    const token = await postRun(owner, base, 'windows', 'PC-9');
    await owner.put(`${base}/attestations/ac1.roster`, { answer: 'yes' });
    await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] });
    const csv = await owner.get(`${base}/export/controls.csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-disposition']).toBe('attachment; filename="cmmc-controls-20260304-050607.csv"');
    expect(csv.body.charCodeAt(0)).toBe(0xfeff);
    const lines = csv.body.slice(1).trimEnd().split('\r\n');
    // The spec's columns in its order; the CMMC 2.0 alias is an extra column at the end.
    expect(lines[0]).toBe('control_code,title,status,missing_attestation_items,failing_device_checks,company,cage_code,sprs_status,renewal_due_date,latest_device_check,v2_alias');
    expect(lines).toHaveLength(16);
    expect(lines[1]).toMatch(/^AC\.L1-b\.1\.i,Authorized Access Control,not_implemented,/);
    expect(lines[1]).toMatch(/,AC\.L1-3\.1\.1$/);
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil"")",${cageCode},not_filed`);
    const json = await owner.get(`${base}/export/controls.json`);
    expect(json.headers['content-disposition']).toContain('cmmc-controls-20260304-050607.json');
    expect((json.json() as { controls: { status: string }[] }).controls.every((c) => c.status === 'not_implemented')).toBe(true);

    const zip = await owner.get(`${base}/export/evidence-pack.zip`);
    expect(zip.statusCode).toBe(200);
    expect(zip.headers['content-disposition']).toContain('cmmc-evidence-pack-20260304-050607.zip');
    const files = unzip(zip.rawPayload);
    expect(Object.keys(files)).toEqual(expect.arrayContaining(['cmmc-controls-20260304-050607.csv', 'controls.json', 'attestations.json', 'devices.json', 'manifest.json', 'policies/access-control-v1-draft.md', 'policies/access-control-v1-draft.pdf']));
    const all = Object.values(files).map((b) => b.toString('latin1')).join('\n');
    const hash = (await withService(t.database.db, (tx) => sql<{ h: string }>`select device_token_hash as h from compliance_profiles where cage_code = ${cageCode}`.execute(tx))).rows[0]!.h;
    expect(all).not.toContain(token);
    expect(all).not.toContain(hash);
    expect(all).not.toContain('cmmc-evidence/');
  });
});

/** Reads a zip (stored or deflated entries) through its central directory. */
function unzip(buf: Buffer): Record<string, Buffer> {
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

describe('CAGE codes saved before I and O were refused', () => {
  /** Stores codes as an older release could (the 0024 triggers refuse them now, so they are bypassed in one transaction). */
  const storeLegacy = (tenant: string, cageCode: string, additional: string[]) =>
    t.database.db.transaction().execute(async (tx) => {
      await sql`alter table compliance_profiles disable trigger compliance_profiles_cage_codes_update`.execute(tx);
      await sql`update compliance_profiles set cage_code = ${cageCode}, additional_cage_codes = ${additional}::text[] where tenant_id = ${tenant}`.execute(tx);
      await sql`alter table compliance_profiles enable trigger compliance_profiles_cage_codes_update`.execute(tx);
    });

  it('Scope names the stored code on save, SPRS confirmation answers cmmc_cage_code_invalid naming it, status changes still work, and the database refuses new ones', async () => {
    now = new Date();
    const { owner, tenant, base, email } = await tenantWithProfile('legacy-cage');
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    await approveAll(owner, base);
    expect((await score(owner, base)).met).toBe(15);
    const legacy = `9${cage().slice(0, 3)}O`;
    const legacyFurther = `I${cage().slice(0, 4)}`;
    await storeLegacy(tenant, legacy, ['9ZZ99', legacyFurther]);
    const profile = ((await owner.get(`${base}/profile`)).json() as { profile: { cageCode: string; additionalCageCodes: string[] } }).profile;
    expect(profile).toMatchObject({ cageCode: legacy, additionalCageCodes: ['9ZZ99', legacyFurther] });

    // Re-saving Scope unchanged: each field error names its code and the likely correction.
    const body = { cageCode: legacy, additionalCageCodes: ['9ZZ99', legacyFurther], companyName: 'legacy-cage Machining LLC', biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test' }], mailPlatform: 'm365', affirmingOfficial: { name: 'Alice Able', title: 'President', email }, scopeDescription: 'Office network and 2 laptops' };
    const resave = await owner.put(`${base}/profile`, body);
    expect(resave.statusCode).toBe(400);
    const details = (resave.json() as { details: { path: string; message: string }[] }).details;
    expect(details.find((d) => d.path === 'body.cageCode')!.message).toBe(`${legacy} uses the letter O: CAGE codes never use the letters I and O (they are the digits 1 and 0), so it is probably ${legacy.replace(/O/g, '0')}.`);
    expect(details.find((d) => d.path === 'body.additionalCageCodes.1')!.message).toContain(`${legacyFurther} uses the letter I`);

    // The SPRS confirmation says which stored codes to correct, and where.
    const conf = await owner.post(`${base}/sprs-confirmation`, confirmBody(legacy));
    expect(conf.statusCode, conf.body).toBe(409);
    const err = conf.json() as { error: string; message: string; details: { invalidCageCodes: string[]; fields: string[] } };
    expect(err).toMatchObject({ error: 'cmmc_cage_code_invalid', details: { invalidCageCodes: [legacy, legacyFurther], fields: ['cageCode', 'additionalCageCodes'] } });
    expect(err.message).toContain(`The CAGE codes ${legacy}, ${legacyFurther} saved in Scope are not valid`);
    expect(err.message).toMatch(/Correct them in Scope and save/);

    // Status changes of such a profile still work (no check constraint on the old row).
    await withService(t.database.db, (tx) => sql`update compliance_profiles set status = 'renewal_due' where tenant_id = ${tenant}`.execute(tx));
    await withService(t.database.db, (tx) => sql`update compliance_profiles set status = 'in_progress' where tenant_id = ${tenant}`.execute(tx));
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
    expect(await refused(sql`update compliance_profiles set cage_code = '1ABO2' where tenant_id = ${tenant}`)).toBe('23514');
    expect(await refused(sql`update compliance_profiles set additional_cage_codes = array['9ZZ99', '1ABI2'] where tenant_id = ${tenant}`)).toBe('23514');
    expect(await refused(sql`update compliance_profiles set additional_cage_codes = array['9ZZ99'] where tenant_id = ${tenant}`)).toBe('23514');

    // Corrected in Scope: saved, and the confirmation goes through.
    const fixed = await owner.put(`${base}/profile`, { ...body, cageCode: legacy.replace(/O/g, '0'), additionalCageCodes: ['9ZZ99'] });
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(legacy.replace(/O/g, '0')))).statusCode).toBe(201);
  }, 60_000);

  it('the database refuses a new profile with I or O in a CAGE code', async () => {
    const { tenant } = await tenantWithProfile('legacy-cage-insert');
    const row = (await withService(t.database.db, (tx) => sql<Record<string, unknown>>`select * from compliance_profiles where tenant_id = ${tenant}`.execute(tx))).rows[0]!;
    let code = '';
    try {
      await sql`insert into compliance_profiles (tenant_id, cage_code, additional_cage_codes, company_name, bidding_users, mail_platform, affirming_official_name, affirming_official_title, affirming_official_email) values (${tenant}, '1ABO2', '{}', 'x', ${JSON.stringify(row.bidding_users)}, 'm365', 'a', 'b', 'c@d.test')`.execute(t.database.db);
    } catch (e) {
      code = String((e as { code?: string }).code ?? e);
    }
    expect(code).toBe('23514');
  });
});

describe('renewal sweep', () => {
  const hook = () => t.app.inject({ method: 'POST', url: '/api/public/hooks/cmmc-renewals', headers: { authorization: `Bearer ${CRON}` } });

  it('is shut without the cron secret', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/public/hooks/cmmc-renewals' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/public/hooks/cmmc-renewals', headers: { 'x-cron-secret': 'wrong' } })).statusCode).toBe(401);
  });

  it('marks renewal due on day 335 and expired on day 365, once per day, and sends the events to both peers', async () => {
    // The cycle runs about two years in the past: the sweep looks at every profile of the database,
    // and with PostgreSQL shared between suites, moving the clock a year ahead would renew the
    // profiles other suites confirm today.
    const start = new Date(Date.now() - 800 * DAY);
    start.setUTCHours(12, 0, 0, 0);
    now = start;
    const { owner, base, cageCode, email } = await tenantWithProfile('renew');
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    await approveAll(owner, base);
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode))).statusCode).toBe(201);
    const status = async () => (await withService(t.database.db, (tx) => sql<{ status: string }>`select status from compliance_profiles where cage_code = ${cageCode}`.execute(tx))).rows[0]!.status;
    const events = async () => (await outboxFor(cageCode)).map((e) => e.event_type).filter((e) => e !== 'cmmc.compliant');
    const mine = (r: { json(): unknown }) => (r.json() as { events: { cageCode: string; event: string }[] }).events.filter((e) => e.cageCode === cageCode).map((e) => e.event);

    const at = (d: number) => (now = new Date(start.getTime() + d * DAY));
    at(334);
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('compliant');
    at(335);
    const first = await hook();
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ ok: true });
    expect(mine(first)).toEqual(['cmmc.renewal_due']);
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('renewal_due');
    expect(await events()).toEqual(['cmmc.renewal_due', 'cmmc.renewal_due']);
    // One reminder to the Affirming Official, though the sweep ran twice.
    const mails = t.mailer.sent.filter((m) => m.to === email && m.text.includes(`(CAGE ${cageCode})`));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toMatch(/renewal due/);
    at(364);
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('renewal_due');
    at(365);
    expect(mine(await hook())).toEqual(['cmmc.expired']);
    expect(mine(await hook())).toEqual([]);
    expect(await status()).toBe('expired');
    expect((await events()).sort()).toEqual(['cmmc.expired', 'cmmc.expired', 'cmmc.renewal_due', 'cmmc.renewal_due']);
    at(366);
    expect(mine(await hook())).toEqual([]);
    now = new Date();
  });
});

describe('mesh flows of the bid peer', () => {
  const call = (payload: unknown, flow: string, requestId?: string, caller = BID, secret = BID_SECRET) => dispatch(t.app, { caller, secret, body: { flow, payload }, at: now, ...(requestId ? { requestId } : {}) });

  it('cmmc_status finds a profile by primary or additional CAGE code, found: false otherwise, and only for the bid peer', async () => {
    now = new Date();
    const extra = cage();
    const { cageCode } = await tenantWithProfile('status', { additionalCageCodes: [extra] });
    const a = await call({ cageCode }, 'cmmc_status');
    expect(a.statusCode, a.body).toBe(200);
    expect(a.json()).toMatchObject({ flow: 'cmmc_status', found: true, cageCode, status: 'in_progress', sprsStatus: 'not_filed', companyName: 'status Machining LLC' });
    expect((await call({ cageCode: extra.toLowerCase() }, 'cmmc_status')).json()).toMatchObject({ found: true, primaryCageCode: cageCode });
    expect((await call({ cageCode: '00000' }, 'cmmc_status')).json()).toMatchObject({ found: false });
    expect((await call({ cageCode: 'bad' }, 'cmmc_status')).json()).toMatchObject({ error: 'invalid_payload' });
    expect((await call({ cageCode: '1ABO2' }, 'cmmc_status')).json()).toMatchObject({ error: 'invalid_payload' });
    expect((await call({ cageCode: '1ABI2', companyName: 'X', contactEmail: 'x@y.test' }, 'cmmc_handoff', `io-${RUN}`)).json()).toMatchObject({ error: 'invalid_payload' });
    expect((await call({ cageCode }, 'cmmc_status', undefined, MGMT, MGMT_SECRET)).statusCode).toBe(403);
  });

  it('cmmc_status says when a CAGE code matches several tenants instead of picking one', async () => {
    now = new Date();
    const first = await tenantWithProfile('dup-a', { companyName: 'Dup First LLC' });
    now = new Date(now.getTime() + 1000);
    const second = await tenantWithProfile('dup-b', { cageCode: cage(), additionalCageCodes: [first.cageCode], companyName: 'Dup Parent Inc' });
    now = new Date(now.getTime() + 1000);
    const third = await tenantWithProfile('dup-c', { cageCode: first.cageCode, companyName: 'Dup Copy LLC' });
    now = new Date();
    await withService(t.database.db, (tx) => sql`update compliance_profiles set status = 'compliant', status_date = current_date where tenant_id = ${third.tenant}::uuid`.execute(tx));
    const res = (await call({ cageCode: first.cageCode }, 'cmmc_status')).json() as Record<string, unknown> & { matches: { primaryCageCode: string; companyName: string; status: string }[] };
    expect(res).toMatchObject({ flow: 'cmmc_status', found: true, ambiguous: true, matchCount: 3, cageCode: first.cageCode });
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
    expect(((await call({ cageCode: first.cageCode }, 'cmmc_status')).json() as typeof res).matches).toEqual(res.matches);
    // A code of only one profile answers as before.
    expect((await call({ cageCode: second.cageCode }, 'cmmc_status')).json()).toMatchObject({ found: true, ambiguous: false, companyName: 'Dup Parent Inc', status: 'in_progress' });
  });

  it('cmmc_handoff returns a one-time 30-minute link; GET does not use it, a signed-in claim does, once; a retried request id gets the same link', async () => {
    now = new Date();
    const payload = { cageCode: '7HX12', companyName: 'Handoff Corp', contactEmail: 'Buyer@Handoff.test' };
    const rid = `handoff-${RUN}`;
    const a = await call(payload, 'cmmc_handoff', rid);
    expect(a.statusCode, a.body).toBe(200);
    const link = a.json() as { url: string; expiresAt: string; requestId: string };
    expect(link.url).toMatch(/\/cmmc\/start\?token=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(link.expiresAt) - now.getTime()).toBe(30 * 60_000);
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
    expect((await owner.get(`/api/v1/cmmc/handoff?token=${token}`)).json()).toMatchObject({ prefill: { cageCode: '7HX12', companyName: 'Handoff Corp', contactEmail: 'buyer@handoff.test' } });
    expect((await new Client(t.app).get(`/api/v1/cmmc/handoff?token=${token}`)).statusCode).toBe(401);

    const claim = await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token });
    expect(claim.statusCode, claim.body).toBe(200);
    expect(claim.json()).toMatchObject({ prefill: { cageCode: '7HX12' }, profileExists: false });
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token })).json()).toMatchObject({ error: 'cmmc_handoff_used' });
    expect((await owner.get(`/api/v1/cmmc/handoff?token=${token}`)).json()).toMatchObject({ error: 'cmmc_handoff_used' });

    // Expiry: 30 minutes later an unused link is refused.
    const b = (await call(payload, 'cmmc_handoff', `${rid}-2`)).json() as { url: string };
    const token2 = new URL(b.url).searchParams.get('token')!;
    now = new Date(now.getTime() + 30 * 60_000 + 1000);
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token: token2 })).json()).toMatchObject({ error: 'cmmc_handoff_expired' });
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token: 'x'.repeat(43) })).json()).toMatchObject({ error: 'cmmc_handoff_invalid' });
    // The daily sweep removes links a day past their expiry and keeps the others. (The old link is
    // made in the past rather than the clock moved ahead: suites share the PostgreSQL database.)
    now = new Date(Date.now() - 3 * DAY);
    expect((await call(payload, 'cmmc_handoff', `${rid}-old`)).statusCode).toBe(200);
    now = new Date();
    const links = async () => (await withService(t.database.db, (tx) => sql<{ request_id: string }>`select request_id from cmmc_handoff_links where caller = ${BID} and request_id like ${`${rid}%`} order by request_id`.execute(tx))).rows.map((r) => r.request_id);
    expect(await links()).toEqual([rid, `${rid}-2`, `${rid}-old`]);
    await t.app.inject({ method: 'POST', url: '/api/public/hooks/cmmc-renewals', headers: { authorization: `Bearer ${CRON}` } });
    expect(await links()).toEqual([rid, `${rid}-2`]);
  });

  it('a link claimed by a tenant that already has a profile is used up, changes nothing and says so', async () => {
    now = new Date();
    const { owner, tenant, base, cageCode } = await tenantWithProfile('handoff-existing', { companyName: 'Existing Works' });
    const link = (await call({ cageCode: '7HX34', companyName: 'Bid Portal Name', contactEmail: 'buyer@portal.test' }, 'cmmc_handoff', `existing-${RUN}`)).json() as { url: string };
    const token = new URL(link.url).searchParams.get('token')!;
    const claim = await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token });
    expect(claim.statusCode, claim.body).toBe(200);
    expect(claim.json()).toMatchObject({ profileExists: true, prefill: { cageCode: '7HX34', companyName: 'Bid Portal Name' } });
    expect(((await owner.get(`${base}/profile`)).json() as { profile: { cageCode: string; companyName: string } }).profile).toMatchObject({ cageCode, companyName: 'Existing Works' });
    expect((await owner.post(`/api/v1/tenants/${tenant}/cmmc/handoff/claim`, { token })).json()).toMatchObject({ error: 'cmmc_handoff_used' });
  });
});

/** Adds a user with this role to the tenant; returns the signed-in client and the e-mail. */
async function addUser(tenant: string, label: string, role: 'admin' | 'member') {
  const c = new Client(t.app);
  const email = uniqueEmail(label);
  const u = await c.signUp(email);
  await t.database.db.insertInto('member').values({ organizationId: tenant, userId: u.user.id, role, createdAt: new Date() }).execute();
  await c.me();
  return { c, email };
}

describe('the Affirming Official', () => {
  it('alone approves policies and confirms the SPRS entry; another admin gets cmmc_not_affirming_official; the pages say who may act', async () => {
    now = new Date();
    const { owner, tenant, base, cageCode, email } = await tenantWithProfile('official');
    const admin = await addUser(tenant, 'official-admin', 'admin');
    expect((await owner.post(`${base}/policies/generate`, {})).statusCode).toBe(200);
    type Policies = { canApprove: boolean; affirmingOfficial: { email: string; isCaller: boolean }; documents: { kind: string; latest: { id: string; status: string } }[] };
    const asAdmin = (await admin.c.get(`${base}/policies`)).json() as Policies;
    expect(asAdmin).toMatchObject({ canApprove: false, affirmingOfficial: { email, isCaller: false } });
    expect((await owner.get(`${base}/policies`)).json()).toMatchObject({ canApprove: true, affirmingOfficial: { email, isCaller: true } });
    const draft = asAdmin.documents.find((d) => d.kind === 'access_control')!.latest.id;
    const refused = await admin.c.post(`${base}/policies/${draft}/approve`, { effectiveDate: today(), forAffirmingOfficial: true });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'cmmc_not_affirming_official', details: { affirmingOfficialEmail: email, signedInAs: admin.email } });
    expect(((await owner.get(`${base}/policies`)).json() as Policies).documents.find((d) => d.kind === 'access_control')!.latest.status).toBe('draft');

    await approveAll(owner, base);
    await postRun(owner, base, 'windows', 'PC-1');
    await answerAll(owner, base);
    expect(await score(admin.c, base)).toMatchObject({ allMet: true, canConfirm: false, affirmingOfficial: { email, isCaller: false } });
    const notOfficial = await admin.c.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(notOfficial.statusCode).toBe(403);
    expect(notOfficial.json()).toMatchObject({ error: 'cmmc_not_affirming_official' });
    expect((await score(owner, base)).profileStatus).toBe('in_progress');

    // The owner names the admin as the Affirming Official in Scope (audited): now only the admin acts.
    const profile = ((await owner.get(`${base}/profile`)).json() as { profile: Record<string, unknown> & { affirmingOfficial: Record<string, string> } }).profile;
    const body = { cageCode, companyName: profile.companyName, biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test' }], mailPlatform: 'm365', scopeDescription: 'Office network and 2 laptops', affirmingOfficial: { name: 'Ada Admin', title: 'COO', email: admin.email.toUpperCase() } };
    expect((await owner.put(`${base}/profile`, body)).statusCode).toBe(200);
    expect(await score(owner, base)).toMatchObject({ canConfirm: false });
    expect(await score(admin.c, base)).toMatchObject({ canConfirm: true, affirmingOfficial: { isCaller: true } });
    expect((await owner.post(`${base}/sprs-confirmation`, confirmBody(cageCode))).json()).toMatchObject({ error: 'cmmc_not_affirming_official' });
    const ok = await admin.c.post(`${base}/sprs-confirmation`, confirmBody(cageCode));
    expect(ok.statusCode, ok.body).toBe(201);
    const row = (await withService(t.database.db, (tx) => sql<{ confirmed_by_email: string; affirming_official_email: string }>`select confirmed_by_email, affirming_official_email from compliance_handoffs where tenant_id = ${tenant}::uuid`.execute(tx))).rows;
    expect(row).toEqual([{ confirmed_by_email: admin.email, affirming_official_email: admin.email }]);

    // An Affirming Official with the member role still cannot act (owners and admins change CMMC records).
    const member = await addUser(tenant, 'official-member', 'member');
    expect((await owner.put(`${base}/profile`, { ...body, affirmingOfficial: { name: 'Mo Member', title: 'CFO', email: member.email } })).statusCode).toBe(200);
    expect((await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] })).statusCode).toBe(200);
    const next = ((await member.c.get(`${base}/policies`)).json() as Policies);
    expect(next).toMatchObject({ canApprove: false, affirmingOfficial: { isCaller: true } });
    const byMember = await member.c.post(`${base}/policies/${next.documents.find((d) => d.kind === 'access_control')!.latest.id}/approve`, { effectiveDate: today(), forAffirmingOfficial: true });
    expect(byMember.json()).toMatchObject({ error: 'tenant_forbidden' });
  });
});

describe('retiring a computer', () => {
  it('leaves a retired computer out of the score, exports and staff counts until it sends a new run; un-retire brings it back; owners and admins only, audited', async () => {
    now = new Date();
    const { owner, tenant, base } = await tenantWithProfile('retire', { companyName: `Retire ${RUN} Works` });
    const member = await addUser(tenant, 'retire-member', 'member');
    const stranger = await tenantWithProfile('retire-other');
    await approveAll(owner, base);
    await answerAll(owner, base);
    await postRun(owner, base, 'windows', 'PC-NEW');
    // The old computer's last run is 40 days old: pending, so nothing with device checks is MET.
    now = new Date(Date.now() - 40 * DAY);
    await postRun(owner, base, 'macos', 'Old MacBook (2)');
    now = new Date();
    let s = await score(owner, base);
    expect(s.met).toBeLessThan(15);
    expect(s.requirements.some((r) => (r as unknown as { pendingDevices: string[] }).pendingDevices.includes('Old MacBook (2)'))).toBe(true);

    const retire = (c: Client, hostname: string, note?: string) => c.post(`${base}/devices/retire`, { hostname, ...(note ? { note } : {}) });
    expect((await retire(member.c, 'Old MacBook (2)')).json()).toMatchObject({ error: 'tenant_forbidden' });
    expect((await stranger.owner.post(`${base}/devices/retire`, { hostname: 'Old MacBook (2)' })).statusCode).toBe(403);
    expect((await retire(owner, 'NO-SUCH-PC')).json()).toMatchObject({ error: 'cmmc_device_not_found' });
    expect((await owner.post(`${base}/devices/retire`, { hostname: '' })).statusCode).toBe(400);
    const done = await retire(owner, 'old macbook (2)', 'Replaced by PC-NEW');
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ hostname: 'Old MacBook (2)', retired: { byEmail: expect.any(String), note: 'Replaced by PC-NEW' } });
    expect((await retire(owner, 'Old MacBook (2)')).json()).toMatchObject({ error: 'cmmc_device_retire_conflict' });

    s = await score(owner, base);
    expect(s.met, JSON.stringify(s.requirements.filter((r) => r.status === 'NOT_MET'))).toBe(15);
    const devices = (await member.c.get(`${base}/devices`)).json() as { devices: { hostname: string; retired: unknown }[] };
    expect(devices.devices.map((d) => [d.hostname, d.retired !== null])).toEqual([
      ['PC-NEW', false],
      ['Old MacBook (2)', true],
    ]);
    const csv = (await owner.get(`${base}/export/controls.csv`)).body;
    expect(csv).not.toContain('Old MacBook');
    const staff = await bootstrapStaff(t, `h7-staff-retire-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const staffRow = async () => ((await staff.get(`/api/v1/staff/cmmc/profiles?q=${encodeURIComponent(`Retire ${RUN}`)}`)).json() as { profiles: { device_count: number; pendingDevices: number }[] }).profiles[0]!;
    expect(await staffRow()).toMatchObject({ device_count: 1, pendingDevices: 0 });

    // Un-retire: it counts again (still pending).
    expect((await owner.post(`${base}/devices/unretire`, { hostname: 'Old MacBook (2)' })).json()).toMatchObject({ retired: null });
    expect((await owner.post(`${base}/devices/unretire`, { hostname: 'Old MacBook (2)' })).json()).toMatchObject({ error: 'cmmc_device_retire_conflict' });
    expect((await score(owner, base)).met).toBeLessThan(15);
    expect(await staffRow()).toMatchObject({ device_count: 2, pendingDevices: 1 });

    // Retired again, then a new run from that hostname: it is in use, so it counts again (current now).
    expect((await retire(owner, 'Old MacBook (2)')).statusCode).toBe(200);
    await postRun(owner, base, 'macos', 'OLD MACBOOK (2)', { ...Object.fromEntries(checkIdsFor('macos').map((id) => [id, 'pass'])), 'mac.firewall': 'fail' });
    const back = ((await owner.get(`${base}/devices`)).json() as { devices: { hostname: string; retired: unknown; pending: boolean }[] }).devices.find((d) => d.hostname === 'OLD MACBOOK (2)')!;
    expect(back).toMatchObject({ retired: null, pending: false });
    s = await score(owner, base);
    expect(s.met).toBe(14);
    expect(s.requirements.find((r) => r.status === 'NOT_MET')!.requirementId).toBe('SC.L1-b.1.x');

    const audit = await withService(t.database.db, (tx) => tx.selectFrom('audit_log').select(['action', 'details']).where('tenant_id', '=', tenant).where('action', 'in', ['cmmc.device_retired', 'cmmc.device_unretired']).orderBy('id').execute());
    expect(audit.map((a) => a.action)).toEqual(['cmmc.device_retired', 'cmmc.device_unretired', 'cmmc.device_retired']);
    expect(JSON.stringify(audit[0]!.details)).toContain('Replaced by PC-NEW');
  });
});

describe('staff list', () => {
  it('lists profiles with device fields and the six tiles, filters, searches and sorts by CAGE code; staff only', async () => {
    now = new Date();
    const a = await tenantWithProfile('staff-a', { companyName: `Staffa ${RUN} Alpha` });
    await postRun(a.owner, a.base, 'windows', 'PC-1', { ...Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass'])), 'win.rdp_disabled': 'fail' });
    const b = await tenantWithProfile('staff-b', { companyName: `Staffa ${RUN} Beta` });
    const staff = await bootstrapStaff(t, `h7-staff-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const res = await staff.get(`/api/v1/staff/cmmc/profiles?q=${encodeURIComponent(`Staffa ${RUN}`)}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { tiles: Record<string, number>; total: number; profiles: { cageCode: string; companyName: string; device_link_issued: boolean; device_count: number; failing_devices: number }[] };
    expect(Object.keys(body.tiles).sort()).toEqual(['compliant', 'customers', 'devicesPending', 'expired', 'inProgress', 'renewingSoon']);
    expect(body.total).toBe(2);
    expect(body.profiles.map((p) => p.cageCode)).toEqual([a.cageCode, b.cageCode].sort());
    const pa = body.profiles.find((p) => p.cageCode === a.cageCode)!;
    expect(pa).toMatchObject({ device_link_issued: true, device_count: 1, failing_devices: 1 });
    expect(body.profiles.find((p) => p.cageCode === b.cageCode)).toMatchObject({ device_link_issued: false, device_count: 0, failing_devices: 0 });
    const byCage = (await staff.get(`/api/v1/staff/cmmc/profiles?q=${b.cageCode.toLowerCase()}`)).json() as { profiles: { cageCode: string }[] };
    expect(byCage.profiles.map((p) => p.cageCode)).toContain(b.cageCode);
    const pending = (await staff.get(`/api/v1/staff/cmmc/profiles?filter=devices_pending&q=${encodeURIComponent(`Staffa ${RUN}`)}`)).json() as { profiles: { cageCode: string }[] };
    expect(pending.profiles.map((p) => p.cageCode)).toEqual([b.cageCode]);
    const compliant = (await staff.get(`/api/v1/staff/cmmc/profiles?filter=compliant&q=${encodeURIComponent(`Staffa ${RUN}`)}`)).json() as { profiles: unknown[] };
    expect(compliant.profiles).toEqual([]);
    expect((await staff.get('/api/v1/staff/cmmc/profiles?filter=bogus')).statusCode).toBe(400);
    expect((await a.owner.get('/api/v1/staff/cmmc/profiles')).statusCode).toBe(403);
  });

  it('filters expired and renewing-soon profiles (status date 340 days ago) and counts them in the tiles', async () => {
    now = new Date();
    const tag = `Renewa ${RUN}`;
    const expired = await tenantWithProfile('staff-expired', { companyName: `${tag} Expired` });
    const renewing = await tenantWithProfile('staff-renewing', { companyName: `${tag} Renewing` });
    const recent = await tenantWithProfile('staff-recent', { companyName: `${tag} Recent` });
    const progress = await tenantWithProfile('staff-progress', { companyName: `${tag} Progress` });
    const ago = (days: number) => new Date(now.getTime() - days * DAY).toISOString().slice(0, 10);
    const seed = (tenant: string, status: string, statusDate: string) =>
      withService(t.database.db, (tx) => sql`update compliance_profiles set status = ${status}, status_date = ${statusDate}::date where tenant_id = ${tenant}::uuid`.execute(tx));
    const staff = await bootstrapStaff(t, `h7-staff-renew-${RUN}@${STAFF_DOMAIN}`, 'staff');
    const tilesBefore = ((await staff.get('/api/v1/staff/cmmc/profiles')).json() as { tiles: Record<string, number> }).tiles;
    await seed(expired.tenant, 'expired', ago(400));
    await seed(renewing.tenant, 'compliant', ago(340));
    await seed(recent.tenant, 'compliant', ago(10));
    const list = async (filter: string) => {
      const res = await staff.get(`/api/v1/staff/cmmc/profiles?filter=${filter}&q=${encodeURIComponent(tag)}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { total: number; tiles: Record<string, number>; profiles: { cageCode: string; status: string; statusDate: string | null; renewalDueAt: string | null }[] };
    };
    const exp = await list('expired');
    expect(exp.profiles.map((p) => p.cageCode)).toEqual([expired.cageCode]);
    expect(exp.profiles[0]).toMatchObject({ status: 'expired', statusDate: ago(400) });
    const soon = await list('renewing_soon');
    expect(soon.total).toBe(1);
    expect(soon.profiles[0]).toMatchObject({ cageCode: renewing.cageCode, status: 'compliant', statusDate: ago(340), renewalDueAt: new Date(Date.parse(`${ago(340)}T00:00:00Z`) + 365 * DAY).toISOString().slice(0, 10) });
    expect((await list('compliant')).profiles.map((p) => p.cageCode).sort()).toEqual([recent.cageCode, renewing.cageCode].sort());
    expect((await list('in_progress')).profiles.map((p) => p.cageCode)).toEqual([progress.cageCode]);
    expect((await list('all')).total).toBe(4);
    // The tiles count every profile (not only the search), so the seeded ones moved them (at least
    // by one: test files running in parallel on one PostgreSQL database add profiles too).
    const tiles = exp.tiles;
    expect(tiles.expired! - tilesBefore.expired!).toBeGreaterThanOrEqual(1);
    expect(tiles.renewingSoon! - tilesBefore.renewingSoon!).toBeGreaterThanOrEqual(1);
    expect(tiles.compliant! - tilesBefore.compliant!).toBeGreaterThanOrEqual(2);
  });
});
