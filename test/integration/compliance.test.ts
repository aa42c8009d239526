// Frameworks and per-control evidence: catalogue summaries, the control status rule with real
// findings rows, evidence uploads streamed to built-in storage (bytes, hash, size limit, type
// checks), download headers, permissions and tenant isolation (API and RLS).
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

const MAX = 64 * 1024;
let t: TestApp;
let owner: Client;
let member: Client;
let memberId: string;
let outsider: Client;
let tenant: string;
let otherTenant: string;
let now = new Date('2025-06-15T12:00:00Z');
const clock: Clock = { now: () => new Date(now) };

beforeAll(async () => {
  t = await createTestApp({ env: { EVIDENCE_MAX_BYTES: String(MAX) }, deps: { clock } });
  owner = new Client(t.app);
  await owner.signUp(uniqueEmail('compliance-owner'));
  tenant = await owner.createTenant('Compliance Co');
  await owner.me();
  member = new Client(t.app);
  memberId = (await member.signUp(uniqueEmail('compliance-member'))).user.id;
  await t.database.db
    .insertInto('member')
    .values({ organizationId: tenant, userId: memberId, role: 'member', createdAt: new Date() })
    .execute();
  outsider = new Client(t.app);
  await outsider.signUp(uniqueEmail('compliance-outsider'));
  otherTenant = await outsider.createTenant('Other Co');
  await outsider.me();
});
afterAll(async () => {
  await t.close();
});

const fw = (tenantId = tenant) => `/api/v1/tenants/${tenantId}/frameworks`;
const evidenceUrl = (framework: string, control: string, tenantId = tenant) =>
  `${fw(tenantId)}/${framework}/controls/${encodeURIComponent(control)}/evidence`;

function multipart(fields: Record<string, string>, file?: { name: string; content: Buffer; type?: string }) {
  const boundary = `----rampart${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
    );
    parts.push(file.content, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const pdf = (bytes: number) => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(bytes - 9)]);

interface Evidence {
  id: string;
  sha256: string;
  size: number;
  state: string;
  fileName: string;
  contentType: string;
  canDelete: boolean;
  effectiveDate: string;
  expiresAt: string | null;
}

async function upload(
  client: Client,
  framework: string,
  control: string,
  fields: Record<string, string>,
  file?: { name: string; content: Buffer; type?: string },
) {
  const { body, headers } = multipart(fields, file);
  return client.request('POST', evidenceUrl(framework, control), body, headers);
}

async function uploadOk(
  client: Client,
  framework: string,
  control: string,
  fields: Record<string, string>,
  file: { name: string; content: Buffer; type?: string } = { name: 'policy.pdf', content: pdf(2048) },
): Promise<Evidence> {
  const res = await upload(client, framework, control, fields, file);
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { evidence: Evidence }).evidence;
}

/** Files under the tenant's built-in evidence directory (and the storage temp directory). */
function storedFiles(tenantId = tenant): string[] {
  const dir = join(t.config.DATA_DIR, 'storage', 'objects', 'tenants', tenantId, 'evidence');
  const tmp = join(t.config.DATA_DIR, 'storage', 'tmp');
  return [
    ...(existsSync(dir) ? readdirSync(dir).filter((f) => !f.startsWith('.')) : []),
    ...(existsSync(tmp) ? readdirSync(tmp).map((f) => `tmp/${f}`) : []),
  ];
}

async function evidenceRowCount(tenantId = tenant): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from control_evidence where tenant_id = ${tenantId}`.execute(t.database.db);
  return rows[0]!.n;
}

type ControlRow = {
  id: string;
  status: string;
  openFindings: number;
  openBySeverity: Record<string, number>;
  evidence: { current: number; expired: number; upcoming: number };
};
async function controls(framework: string, query = '', client = owner) {
  const res = await client.get(`${fw()}/${framework}${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    summary: {
      controls: number;
      withOpenFindings: number;
      withCurrentEvidence: number;
      withExpiredEvidence: number;
      byStatus: Record<string, number>;
    };
    controls: ControlRow[];
  };
}
const row = async (framework: string, id: string) => (await controls(framework)).controls.find((c) => c.id === id)!;

describe('framework catalogues per tenant', () => {
  it('lists the five frameworks with their control counts, all without evidence at first', async () => {
    const res = await owner.get(fw());
    expect(res.statusCode, res.body).toBe(200);
    const { frameworks } = res.json() as {
      frameworks: {
        id: string;
        catalogueVersion: string;
        summary: { controls: number; byStatus: Record<string, number> };
      }[];
    };
    expect(frameworks.map((f) => [f.id, f.summary.controls])).toEqual([
      ['soc2', 61],
      ['gdpr', 37],
      ['iso27001', 93],
      ['nist-csf', 106],
      ['cis-v8', 153],
    ]);
    for (const f of frameworks) {
      expect(f.catalogueVersion).toBeTruthy();
      expect(f.summary.byStatus).toEqual({
        failing: 0,
        evidenced: 0,
        evidence_expired: 0,
        no_evidence: f.summary.controls,
      });
    }
  });

  it('answers 404 for unknown frameworks and controls, and keeps non-members out', async () => {
    expect((await owner.get(`${fw()}/pci-dss`)).json()).toMatchObject({ error: 'framework_not_found' });
    expect((await owner.get(`${fw()}/pci-dss`)).statusCode).toBe(404);
    const res = await owner.get(`${fw()}/iso27001/controls/A.9.99`);
    expect([res.statusCode, res.json().error]).toEqual([404, 'control_not_found']);
    // Ids are exact: a control of another framework is not found here.
    expect((await owner.get(`${fw()}/nist-csf/controls/A.8.24`)).statusCode).toBe(404);
    const denied = await outsider.get(fw());
    expect([denied.statusCode, denied.json().error]).toEqual([403, 'tenant_forbidden']);
    expect((await outsider.get(`${fw()}/iso27001/controls/A.8.24`)).statusCode).toBe(403);
  });

  it('shows a control with its catalogue entry and groups', async () => {
    const res = await owner.get(`${fw()}/nist-csf/controls/PR.DS-02`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      control: {
        id: 'PR.DS-02',
        description: 'The confidentiality, integrity, and availability of data-in-transit are protected',
        group: { id: 'PR.DS', title: 'Data Security' },
        parentGroup: { id: 'PR', title: 'Protect' },
      },
      status: 'no_evidence',
      findings: { open: 0, items: [] },
      evidence: [],
    });
    const gdpr = (await owner.get(`${fw()}/gdpr/controls/${encodeURIComponent('Art. 32')}`)).json() as {
      control: { title: string };
    };
    expect(gdpr.control.title).toBe('Security of processing');
  });
});

describe('evidence uploads', () => {
  it('streams a file to storage and back: identical bytes, recorded SHA-256, download headers', async () => {
    const content = pdf(40_000);
    const ev = await uploadOk(
      owner,
      'iso27001',
      'A.5.1',
      {
        title: 'Information security policy',
        description: 'Approved by the board',
        effectiveDate: '2025-01-01',
        expiresAt: '2026-01-01',
      },
      { name: '../../etc/Sécurité; "policy" v2.pdf'.replace(/"/g, '%22'), content, type: 'application/pdf' },
    );
    expect(ev).toMatchObject({
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
      contentType: 'application/pdf',
      state: 'current',
      canDelete: true,
      effectiveDate: '2025-01-01',
      expiresAt: '2026-01-01',
    });
    // Directories are stripped from the name.
    expect(ev.fileName).toBe('Sécurité; %22policy%22 v2.pdf');

    const dl = await owner.get(`/api/v1/tenants/${tenant}/evidence/${ev.id}/download`);
    expect(dl.statusCode).toBe(200);
    expect(Buffer.compare(dl.rawPayload, content)).toBe(0);
    expect(dl.headers['content-type']).toBe('application/pdf');
    expect(dl.headers['x-content-type-options']).toBe('nosniff');
    expect(dl.headers['content-disposition']).toBe(
      `attachment; filename="S_curit__ _22policy_22 v2.pdf"; filename*=UTF-8''S%C3%A9curit%C3%A9%3B%20%2522policy%2522%20v2.pdf`,
    );
    expect(dl.headers['cache-control']).toBe('private, no-store');

    const list = (await member.get(evidenceUrl('iso27001', 'A.5.1'))).json() as { evidence: Evidence[] };
    expect(list.evidence.map((e) => e.id)).toEqual([ev.id]);
    // Members read everything but may delete only their own uploads.
    expect(list.evidence[0]!.canDelete).toBe(false);
    expect((await row('iso27001', 'A.5.1')).status).toBe('evidenced');

    const { rows } = await sql<{
      action: string;
      details: Record<string, unknown>;
    }>`select action, details from audit_log where tenant_id = ${tenant} and target_id = ${ev.id}`.execute(
      t.database.db,
    );
    expect(rows).toEqual([
      expect.objectContaining({
        action: 'compliance.evidence_uploaded',
        details: expect.objectContaining({ controlId: 'A.5.1', sha256: ev.sha256 }),
      }),
    ]);
  });

  it('refuses a file over EVIDENCE_MAX_BYTES with 413 and keeps nothing', async () => {
    const rowsBefore = await evidenceRowCount();
    const filesBefore = storedFiles();
    const res = await upload(
      owner,
      'iso27001',
      'A.5.2',
      { title: 'Too big', effectiveDate: '2025-01-01' },
      { name: 'big.pdf', content: pdf(MAX + 1) },
    );
    expect([res.statusCode, res.json().error]).toEqual([413, 'payload_too_large']);
    expect(res.json().message).toContain('64 KiB');
    expect(await evidenceRowCount()).toBe(rowsBefore);
    expect(storedFiles()).toEqual(filesBefore);
    // Exactly at the limit is fine.
    await uploadOk(
      owner,
      'iso27001',
      'A.5.2',
      { title: 'At the limit', effectiveDate: '2025-01-01' },
      { name: 'limit.pdf', content: pdf(MAX) },
    );
  });

  it('rejects bad controls, dates, types and content before anything is kept', async () => {
    const rowsBefore = await evidenceRowCount();
    const filesBefore = storedFiles();
    const file = { name: 'x.pdf', content: pdf(1000) };
    const fields = { title: 'Evidence', effectiveDate: '2025-01-01' };
    const cases: [
      string,
      Promise<{ statusCode: number; json(): { error: string; details?: { path: string }[] } }>,
      number,
      string,
    ][] = [
      ['unknown control', upload(owner, 'iso27001', 'A.9.99', fields, file), 404, 'control_not_found'],
      ['unknown framework', upload(owner, 'pci', '1.1', fields, file), 404, 'framework_not_found'],
      [
        'expiry before effective date',
        upload(owner, 'iso27001', 'A.5.3', { ...fields, expiresAt: '2024-12-31' }, file),
        400,
        'validation_failed',
      ],
      [
        'expiry equal to effective date',
        upload(owner, 'iso27001', 'A.5.3', { ...fields, expiresAt: '2025-01-01' }, file),
        400,
        'validation_failed',
      ],
      [
        'not a date',
        upload(owner, 'iso27001', 'A.5.3', { ...fields, effectiveDate: '01/02/2025' }, file),
        400,
        'validation_failed',
      ],
      [
        'missing title',
        upload(owner, 'iso27001', 'A.5.3', { effectiveDate: '2025-01-01' }, file),
        400,
        'validation_failed',
      ],
      ['no file', upload(owner, 'iso27001', 'A.5.3', fields), 400, 'evidence_file_missing'],
      [
        'executable',
        upload(owner, 'iso27001', 'A.5.3', fields, { name: 'tool.exe', content: Buffer.from('MZ\x90\x00') }),
        415,
        'evidence_type_not_allowed',
      ],
      [
        'svg (script-capable) refused',
        upload(owner, 'iso27001', 'A.5.3', fields, { name: 'd.svg', content: Buffer.from('<svg/>') }),
        415,
        'evidence_type_not_allowed',
      ],
      [
        'pdf that is not a PDF',
        upload(owner, 'iso27001', 'A.5.3', fields, { name: 'fake.pdf', content: Buffer.from('hello, I am text') }),
        415,
        'evidence_content_mismatch',
      ],
      [
        'binary csv',
        upload(owner, 'iso27001', 'A.5.3', fields, {
          name: 'data.csv',
          content: Buffer.from([0x00, 0x01, 0x02, 0x03, 0x41]),
        }),
        415,
        'evidence_content_mismatch',
      ],
      [
        'json that is not JSON',
        upload(owner, 'iso27001', 'A.5.3', fields, { name: 'scan.json', content: Buffer.from('plain words') }),
        415,
        'evidence_content_mismatch',
      ],
      [
        'png that is a jpeg',
        upload(owner, 'iso27001', 'A.5.3', fields, {
          name: 'shot.png',
          content: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]),
        }),
        415,
        'evidence_content_mismatch',
      ],
      [
        'empty file',
        upload(owner, 'iso27001', 'A.5.3', fields, { name: 'empty.txt', content: Buffer.alloc(0) }),
        400,
        'validation_failed',
      ],
    ];
    for (const [label, pending, status, code] of cases) {
      const res = await pending;
      expect([res.statusCode, res.json().error], label).toEqual([status, code]);
    }
    const expiry = await upload(owner, 'iso27001', 'A.5.3', { ...fields, expiresAt: '2024-12-31' }, file);
    expect(expiry.json().details).toEqual([expect.objectContaining({ path: 'expiresAt' })]);
    const json = await upload(owner, 'iso27001', 'A.5.3', fields, { name: 'x.txt', content: Buffer.from('ok') });
    expect(json.statusCode).toBe(201);
    expect(await evidenceRowCount()).toBe(rowsBefore + 1);
    expect(storedFiles().length).toBe(filesBefore.length + 1);
  });

  it('accepts text, CSV, JSON, images and office documents with canonical content types', async () => {
    const files: [string, Buffer, string][] = [
      ['notes.md', Buffer.from('# Review\nAll good — signed.'), 'text/markdown'],
      ['users.csv', Buffer.from('\uFEFFname,role\nAda,admin\n'), 'text/csv'],
      ['export.json', Buffer.from('  {"ok": true}'), 'application/json'],
      [
        'screen.png',
        Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]),
        'image/png',
      ],
      ['photo.JPG', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(64)]), 'image/jpeg'],
      [
        'matrix.xlsx',
        Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), randomBytes(64)]),
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      ],
      [
        'old.doc',
        Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), randomBytes(64)]),
        'application/msword',
      ],
    ];
    for (const [name, content, type] of files) {
      const ev = await uploadOk(
        member,
        'soc2',
        'CC6.1',
        { title: name, effectiveDate: '2025-02-01' },
        { name, content, type: 'application/octet-stream' },
      );
      expect([ev.contentType, ev.size], name).toEqual([type, content.length]);
      const dl = await member.get(`/api/v1/tenants/${tenant}/evidence/${ev.id}/download`);
      expect(Buffer.compare(dl.rawPayload, content), name).toBe(0);
    }
  });
});

describe('permissions and deletion', () => {
  it('lets members upload and delete their own evidence; only owners and admins delete others', async () => {
    const mine = await uploadOk(member, 'gdpr', 'Art. 30', {
      title: 'Record of processing',
      effectiveDate: '2025-03-01',
    });
    expect(mine.canDelete).toBe(true);
    const owners = await uploadOk(owner, 'gdpr', 'Art. 30', { title: 'DPIA register', effectiveDate: '2025-03-01' });
    const denied = await member.delete(`/api/v1/tenants/${tenant}/evidence/${owners.id}`);
    expect([denied.statusCode, denied.json().error]).toEqual([403, 'tenant_forbidden']);
    expect((await member.delete(`/api/v1/tenants/${tenant}/evidence/${mine.id}`)).statusCode).toBe(204);
    // The owner deletes anyone's.
    const another = await uploadOk(member, 'gdpr', 'Art. 30', { title: 'Second record', effectiveDate: '2025-03-01' });
    expect((await owner.delete(`/api/v1/tenants/${tenant}/evidence/${another.id}`)).statusCode).toBe(204);

    const left = (await owner.get(evidenceUrl('gdpr', 'Art. 30'))).json() as { evidence: Evidence[] };
    expect(left.evidence.map((e) => e.id)).toEqual([owners.id]);
    // Gone means gone: no download, no second delete, bytes removed; the row stays for the audit trail.
    const dl = await owner.get(`/api/v1/tenants/${tenant}/evidence/${mine.id}/download`);
    expect([dl.statusCode, dl.json().error]).toEqual([404, 'evidence_not_found']);
    expect((await owner.delete(`/api/v1/tenants/${tenant}/evidence/${mine.id}`)).statusCode).toBe(404);
    expect(storedFiles()).not.toContain(mine.id);
    const { rows } = await sql<{
      action: string;
      actor_email: string;
    }>`select action, actor_email from audit_log where target_id in (${mine.id}, ${another.id}) order by id`.execute(
      t.database.db,
    );
    expect(rows.map((r) => r.action)).toEqual([
      'compliance.evidence_uploaded',
      'compliance.evidence_deleted',
      'compliance.evidence_uploaded',
      'compliance.evidence_deleted',
    ]);
  });

  it('keeps tenants apart: B can neither list nor download nor delete A’s evidence', async () => {
    const ev = await uploadOk(owner, 'cis-v8', '3.10', { title: 'TLS configuration', effectiveDate: '2025-01-01' });
    // Through A's URLs: not a member.
    for (const res of [
      await outsider.get(evidenceUrl('cis-v8', '3.10')),
      await outsider.get(`/api/v1/tenants/${tenant}/evidence/${ev.id}/download`),
      await outsider.delete(`/api/v1/tenants/${tenant}/evidence/${ev.id}`),
      await upload(
        outsider,
        'cis-v8',
        '3.10',
        { title: 'x', effectiveDate: '2025-01-01' },
        { name: 'x.pdf', content: pdf(100) },
      ),
    ])
      expect([res.statusCode, res.json().error]).toEqual([403, 'tenant_forbidden']);
    // Through B's own URLs with A's evidence id: not found.
    const dl = await outsider.get(`/api/v1/tenants/${otherTenant}/evidence/${ev.id}/download`);
    expect([dl.statusCode, dl.json().error]).toEqual([404, 'evidence_not_found']);
    expect((await outsider.delete(`/api/v1/tenants/${otherTenant}/evidence/${ev.id}`)).statusCode).toBe(404);
    const theirs = (await outsider.get(evidenceUrl('cis-v8', '3.10', otherTenant))).json() as { evidence: Evidence[] };
    expect(theirs.evidence).toEqual([]);
    const summary = (await outsider.get(fw(otherTenant))).json() as {
      frameworks: { summary: { withCurrentEvidence: number } }[];
    };
    expect(summary.frameworks.every((f) => f.summary.withCurrentEvidence === 0)).toBe(true);
    // Row-level security alone hides the rows, even from a query with no tenant filter.
    const seen = await withTenant(
      t.database.db,
      { tenantId: otherTenant },
      async (tx) => (await sql<{ id: string }>`select id from control_evidence`.execute(tx)).rows,
    );
    expect(seen).toEqual([]);
    const own = await withTenant(
      t.database.db,
      { tenantId: tenant },
      async (tx) => (await sql<{ id: string }>`select id from control_evidence where id = ${ev.id}`.execute(tx)).rows,
    );
    expect(own).toHaveLength(1);
    // And a tenant cannot write rows into another tenant.
    await expect(
      withTenant(t.database.db, { tenantId: otherTenant }, (tx) =>
        sql`insert into control_evidence (tenant_id, framework, control_id, title, file_name, content_type, size_bytes, sha256, storage_kind, storage_key, effective_date) values (${tenant}, 'soc2', 'CC1.1', 'x', 'x.pdf', 'application/pdf', 1, ${'0'.repeat(64)}, 'builtin', 'evidence/x', '2025-01-01')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/row-level security/);
  });
});

describe('control status', () => {
  let assetId: string;
  const finding = async (f: {
    ruleId: string;
    scanner: string;
    cwe: number[];
    severity: string;
    status?: string;
    title?: string;
    location?: string;
    evidence?: unknown;
  }) => {
    const id = randomBytes(16).toString('hex');
    const { rows } = await sql<{ id: string }>`
      insert into findings (tenant_id, asset_id, scanner, rule_id, title, severity, cwe_ids, location_text, evidence, fingerprint, scope_key, status, status_reason, status_expires_at, first_seen_at, last_seen_at)
      values (${tenant}, ${assetId}, ${f.scanner}, ${f.ruleId}, ${f.title ?? f.ruleId}, ${f.severity}, ${sql.raw(`'{${f.cwe.join(',')}}'::int[]`)}, ${f.location ?? 'https://shop.example.test'},
              ${JSON.stringify(f.evidence ?? {})}::jsonb, ${id}, 'full',
              ${f.status ?? 'open'}, ${f.status === 'accepted_risk' ? 'accepted' : null}, ${f.status === 'accepted_risk' ? new Date(Date.now() + 86_400_000) : null}, now(), now())
      returning id`.execute(t.database.db);
    return rows[0]!.id;
  };

  beforeAll(async () => {
    const { rows } = await sql<{ id: string }>`
      insert into assets (tenant_id, kind, target, dns_name, name, verification_token)
      values (${tenant}, 'webapp', 'https://shop.example.test', 'shop.example.test', 'Shop', 'token') returning id`.execute(
      t.database.db,
    );
    assetId = rows[0]!.id;
  });

  it('follows the documented rule: open findings fail a control, then current, expired or no evidence', async () => {
    // Seen on 14 pages of the site (a site-wide web finding); the port finding is one place.
    const cleartext = await finding({
      ruleId: 'http.cleartext-login',
      scanner: 'webapp',
      cwe: [319],
      severity: 'high',
      title: 'Login form over HTTP',
      location: 'http://shop.example.test/',
      evidence: { data: { siteWide: true, instances: 14 } },
    });
    await finding({
      ruleId: 'port.3389',
      scanner: 'port',
      cwe: [],
      severity: 'medium',
      title: 'RDP exposed',
      location: 'tcp://shop.example.test:3389',
      evidence: { data: { instances: 'many' } },
    });
    // Not open: never counted.
    await finding({ ruleId: 'xss.reflected', scanner: 'webapp', cwe: [79], severity: 'critical', status: 'fixed' });
    await finding({
      ruleId: 'header.csp.missing',
      scanner: 'webapp',
      cwe: [693],
      severity: 'low',
      status: 'accepted_risk',
    });

    // Evidence: current, expired, not yet effective, and current on a failing control.
    await uploadOk(owner, 'iso27001', 'A.8.24', { title: 'Crypto standard', effectiveDate: '2025-01-01' });
    await uploadOk(owner, 'iso27001', 'A.5.15', {
      title: 'Old access review',
      effectiveDate: '2024-01-01',
      expiresAt: '2025-06-14',
    });
    await uploadOk(owner, 'iso27001', 'A.5.16', {
      title: 'Identity procedure (draft window)',
      effectiveDate: '2025-07-01',
    });
    await uploadOk(owner, 'iso27001', 'A.5.17', {
      title: 'Password standard',
      effectiveDate: '2025-01-01',
      expiresAt: '2025-06-15',
    });

    const iso = await controls('iso27001');
    const byId = new Map(iso.controls.map((c) => [c.id, c]));
    expect(byId.get('A.8.24')).toMatchObject({
      status: 'failing',
      openFindings: 1,
      openBySeverity: { high: 1, medium: 0, critical: 0 },
      evidence: { current: 1 },
    });
    // Cleartext transport and the exposed service both bear on network security.
    expect(byId.get('A.8.20')).toMatchObject({
      status: 'failing',
      openFindings: 2,
      openBySeverity: { high: 1, medium: 1 },
    });
    expect(byId.get('A.8.28')).toMatchObject({ status: 'no_evidence', openFindings: 0 });
    expect(byId.get('A.5.15')).toMatchObject({ status: 'evidence_expired', evidence: { current: 0, expired: 1 } });
    expect(byId.get('A.5.16')).toMatchObject({ status: 'no_evidence', evidence: { upcoming: 1 } });
    // Evidence counts through its expiry day.
    expect(byId.get('A.5.17')).toMatchObject({ status: 'evidenced', evidence: { current: 1 } });
    expect(byId.get('A.5.1')!.status).toBe('evidenced');
    expect(iso.summary.withOpenFindings).toBe(iso.controls.filter((c) => c.openFindings > 0).length);
    expect(iso.summary.byStatus.failing).toBe(iso.summary.withOpenFindings);
    expect(iso.summary.withExpiredEvidence).toBe(1);
    expect(Object.values(iso.summary.byStatus).reduce((a, b) => a + b)).toBe(93);

    expect((await row('nist-csf', 'PR.DS-02')).status).toBe('failing');
    expect((await row('cis-v8', '4.4')).status).toBe('failing');
    expect((await row('gdpr', 'Art. 32')).openFindings).toBe(2);

    // Filters: status, search, group (a NIST function covers its categories).
    expect((await controls('iso27001', '?status=failing')).controls.every((c) => c.status === 'failing')).toBe(true);
    expect((await controls('iso27001', '?q=cryptography')).controls.map((c) => c.id)).toEqual(['A.8.24']);
    expect((await controls('iso27001', '?q=a.8.2')).controls.map((c) => c.id)).toEqual([
      'A.8.2',
      'A.8.20',
      'A.8.21',
      'A.8.22',
      'A.8.23',
      'A.8.24',
      'A.8.25',
      'A.8.26',
      'A.8.27',
      'A.8.28',
      'A.8.29',
    ]);
    expect((await controls('iso27001', '?group=A.6')).controls).toHaveLength(8);
    const govern = (await controls('nist-csf', '?group=GV')).controls;
    expect(govern).toHaveLength(31);
    expect((await owner.get(`${fw()}/iso27001?status=passing`)).statusCode).toBe(400);

    // The control page lists the mapped open findings with their assets.
    const detail = (await member.get(`${fw()}/iso27001/controls/A.8.20`)).json() as {
      status: string;
      findings: {
        open: number;
        bySeverity: Record<string, number>;
        items: { id: string; severity: string; asset: { name: string }; location: string; instances: number }[];
        truncated: boolean;
      };
    };
    expect(detail.status).toBe('failing');
    expect(detail.findings).toMatchObject({
      open: 2,
      truncated: false,
      bySeverity: { high: 1, medium: 1, critical: 0, low: 0, info: 0 },
    });
    expect(detail.findings.items.map((f) => f.severity)).toEqual(['high', 'medium']);
    expect(detail.findings.items[0]).toMatchObject({ id: cleartext, asset: { name: 'Shop' } });
    // Each with where it is and how many places it was seen (an unreadable count is one place).
    expect(detail.findings.items.map((f) => [f.location, f.instances])).toEqual([
      ['http://shop.example.test/', 14],
      ['tcp://shop.example.test:3389', 1],
    ]);

    // Fixing the finding lets the current evidence count; a day later the expiring evidence lapses.
    await sql`update findings set status = 'fixed' where id = ${cleartext}`.execute(t.database.db);
    expect((await row('iso27001', 'A.8.24')).status).toBe('evidenced');
    now = new Date('2025-06-16T00:30:00Z');
    try {
      expect((await row('iso27001', 'A.5.17')).status).toBe('evidence_expired');
      const list = (await owner.get(evidenceUrl('iso27001', 'A.5.17'))).json() as { evidence: Evidence[] };
      expect(list.evidence[0]!.state).toBe('expired');
    } finally {
      now = new Date('2025-06-15T12:00:00Z');
    }
    // Other tenants' findings never count here, and A's never count there.
    const theirs = (await outsider.get(`${fw(otherTenant)}/iso27001`)).json() as {
      summary: { withOpenFindings: number };
    };
    expect(theirs.summary.withOpenFindings).toBe(0);
  });
});
