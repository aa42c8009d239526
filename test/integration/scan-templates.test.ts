// Tenant scan templates: upload (validated by the template engine, errors named by path), the
// per-tenant id and limits, built-in ids refused, roles, tenant isolation (API and RLS), and
// template leases carrying the tenant's templates (only template leases, only that tenant's).
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import {
  TEMPLATE_MAX_BYTES,
  TENANT_TEMPLATE_LIMIT,
  TENANT_TEMPLATE_TOTAL_BYTES,
  type ScanTemplateDetailDto,
  type ScanTemplateDto,
} from '../../src/templates/index.ts';
import { normalizedFindingSchema } from '../../src/findings/findings-schemas.ts';
import {
  BUILTIN_TEMPLATES,
  createTemplateScanner,
  MAX_CUSTOM_TEMPLATES,
  TEMPLATE_LIMITS,
} from '../../src/agent/scanners/template/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import type { Client } from '../helpers/client.ts';
import { tenantCast, type TenantCast } from '../helpers/tenants.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';
import { scanTenant, setVerification } from './scans-fixtures.ts';

let t: TestApp;
let cast: TenantCast;
let base: string;
let otherBase: string;

const yaml = (id: string, opts: { severity?: string; regex?: string; tags?: string } = {}) => `id: ${id}
info:
  name: Test template ${id}
  author: tests
  severity: ${opts.severity ?? 'medium'}
  tags: ${opts.tags ?? 'exposure,test'}
http:
  - method: GET
    path:
      - "{{BaseURL}}/.secret-${id}"
    matchers-condition: and
    matchers:
      - type: status
        status: [200]
      - type: regex
        regex:
          - '${opts.regex ?? 'SECRET_[A-Z]+'}'
`;

async function upload(c: Client, b: string, text: string): Promise<ScanTemplateDetailDto> {
  const res = await c.post(`${b}/scan-templates`, { yaml: text });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { template: ScanTemplateDetailDto }).template;
}
type List = {
  templates: ScanTemplateDto[];
  builtin: { templateId: string }[];
  usage: { count: number; totalBytes: number };
  canManage: boolean;
};
const list = async (c: Client, b: string) => (await c.get(`${b}/scan-templates`)).json() as List;

beforeAll(async () => {
  t = await createTestApp();
  cast = await tenantCast(t, 'templates');
  base = `/api/v1/tenants/${cast.tenant}`;
  otherBase = `/api/v1/tenants/${cast.otherTenant}`;
});
afterAll(() => t.close());

describe('uploading templates', () => {
  it('keeps its limits in step with the engine', () => {
    expect(TEMPLATE_MAX_BYTES).toBe(TEMPLATE_LIMITS.bytes);
    expect(TENANT_TEMPLATE_LIMIT).toBe(MAX_CUSTOM_TEMPLATES);
  });

  it('publishes the routes in the OpenAPI document', async () => {
    const spec = (await t.app.inject('/docs/json')).json() as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    expect(Object.keys(spec.paths['/api/v1/tenants/{tenantId}/scan-templates']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(spec.paths['/api/v1/tenants/{tenantId}/scan-templates/{templateId}']!).sort()).toEqual([
      'delete',
      'get',
      'put',
    ]);
    expect(spec.paths['/api/v1/tenants/{tenantId}/scan-templates']!.post!.tags).toEqual(['scan templates']);
  });

  it('stores a valid template with its metadata, size and hash, audited, and lists it', async () => {
    const text = yaml('acme-secret-file', { severity: 'HIGH', tags: 'Acme, Secrets' });
    const created = await upload(cast.owner, base, text);
    expect(created).toMatchObject({
      templateId: 'acme-secret-file',
      name: 'Test template acme-secret-file',
      severity: 'high',
      tags: ['acme', 'secrets'],
      size: Buffer.byteLength(text),
      yaml: text,
      createdBy: { email: expect.stringContaining('templates-owner') },
    });
    expect(created.sha256).toMatch(/^[0-9a-f]{64}$/);
    const l = await list(cast.member, base);
    expect(l.templates.map((x) => x.templateId)).toContain('acme-secret-file');
    expect(l.templates.find((x) => x.id === created.id)).not.toHaveProperty('yaml');
    expect(l.canManage).toBe(false);
    expect(l.builtin.length).toBe(BUILTIN_TEMPLATES.length);
    expect((await cast.member.get(`${base}/scan-templates/${created.id}`)).json().template.yaml).toBe(text);
    const audit = await withService(t.database.db, (tx) =>
      tx
        .selectFrom('audit_log')
        .select(['action', 'target_id'])
        .where('tenant_id', '=', cast.tenant)
        .where('action', 'like', 'template.%')
        .execute(),
    );
    expect(audit).toContainEqual({ action: 'template.created', target_id: created.id });
  });

  it('refuses an invalid template with each problem named by its path under body.yaml', async () => {
    const bad = yaml('bad-one')
      .replace('status: [200]', 'status: [200]\n        part: nowhere')
      .replace('method: GET', 'method: BREW');
    const res = await cast.owner.post(`${base}/scan-templates`, { yaml: bad });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { error: string; details: { path: string; message: string }[] };
    expect(body.error).toBe('validation_failed');
    expect(body.details.map((d) => d.path)).toContain('body.yaml.http[0].method');
    // YAML syntax errors are on body.yaml, with the line in the message.
    const syntax = (
      await cast.owner.post(`${base}/scan-templates`, { yaml: 'id: x\ninfo: [unclosed' })
    ).json() as typeof body;
    expect(syntax.details[0]).toMatchObject({
      path: 'body.yaml',
      message: expect.stringMatching(/^line \d+: not valid YAML/),
    });
    expect((await cast.owner.post(`${base}/scan-templates`, { yaml: '' })).json().details[0].path).toBe('body.yaml');
  });

  it('refuses a lookahead regex, naming the exact matcher', async () => {
    const res = await cast.owner.post(`${base}/scan-templates`, {
      yaml: yaml('lookahead', { regex: 'password(?=:)' }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([
      { path: 'body.yaml.http[0].matchers[1].regex[0]', message: expect.stringContaining('lookahead') },
    ]);
  });

  it('refuses an id the tenant already has, and a built-in id, with 409 template_exists', async () => {
    await upload(cast.owner, base, yaml('dup-id'));
    const again = await cast.owner.post(`${base}/scan-templates`, { yaml: yaml('dup-id', { severity: 'low' }) });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('template_exists');
    const builtinId = BUILTIN_TEMPLATES[0]!.yaml.match(/^id: (\S+)$/m)![1]!;
    const clash = await cast.owner.post(`${base}/scan-templates`, { yaml: yaml(builtinId) });
    expect(clash.statusCode).toBe(409);
    expect(clash.json()).toMatchObject({
      error: 'template_exists',
      message: expect.stringContaining('built-in'),
      details: { builtin: true },
    });
    // Another tenant may use the same id.
    await upload(cast.other, otherBase, yaml('dup-id'));
  });

  it('refuses a template over 64 KiB', async () => {
    const big = `${yaml('big')}# ${'x'.repeat(TEMPLATE_MAX_BYTES)}\n`;
    const res = await cast.owner.post(`${base}/scan-templates`, { yaml: big });
    expect(res.statusCode).toBe(400);
    expect(res.json().details[0].path).toBe('body.yaml');
  });
});

describe('replacing and deleting', () => {
  it('replaces the YAML under the same id, refuses another id, and deletes', async () => {
    const created = await upload(cast.owner, base, yaml('to-replace'));
    const next = yaml('to-replace', { severity: 'critical' });
    const res = await cast.owner.put(`${base}/scan-templates/${created.id}`, { yaml: next });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().template).toMatchObject({ id: created.id, severity: 'critical', yaml: next });
    const renamed = await cast.owner.put(`${base}/scan-templates/${created.id}`, { yaml: yaml('renamed') });
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json().details[0].path).toBe('body.yaml.id');
    expect((await cast.owner.delete(`${base}/scan-templates/${created.id}`)).statusCode).toBe(204);
    const gone = await cast.owner.get(`${base}/scan-templates/${created.id}`);
    expect([gone.statusCode, gone.json().error]).toEqual([404, 'template_not_found']);
    expect((await cast.owner.delete(`${base}/scan-templates/${created.id}`)).statusCode).toBe(404);
    const actions = await withService(t.database.db, (tx) =>
      tx.selectFrom('audit_log').select('action').where('target_id', '=', created.id).orderBy('id').execute(),
    );
    expect(actions.map((a) => a.action)).toEqual(['template.created', 'template.updated', 'template.deleted']);
  });

  it('lets members read but not write (403 tenant_forbidden)', async () => {
    const created = await upload(cast.owner, base, yaml('member-readable'));
    expect((await cast.member.get(`${base}/scan-templates/${created.id}`)).statusCode).toBe(200);
    for (const res of [
      await cast.member.post(`${base}/scan-templates`, { yaml: yaml('by-member') }),
      await cast.member.put(`${base}/scan-templates/${created.id}`, {
        yaml: yaml('member-readable', { severity: 'low' }),
      }),
      await cast.member.delete(`${base}/scan-templates/${created.id}`),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('tenant_forbidden');
    }
  });
});

describe('tenant isolation', () => {
  it('keeps another tenant out through the API', async () => {
    const mine = await upload(cast.owner, base, yaml('private-one'));
    expect((await cast.other.get(`${base}/scan-templates`)).statusCode).toBe(403);
    // The other tenant's own routes do not find it either.
    for (const res of [
      await cast.other.get(`${otherBase}/scan-templates/${mine.id}`),
      await cast.other.put(`${otherBase}/scan-templates/${mine.id}`, { yaml: yaml('private-one') }),
      await cast.other.delete(`${otherBase}/scan-templates/${mine.id}`),
    ])
      expect(res.statusCode).toBe(404);
    expect((await list(cast.other, otherBase)).templates.map((x) => x.templateId)).not.toContain('private-one');
  });
});

describe('limits', () => {
  it(`allows at most ${TENANT_TEMPLATE_LIMIT} templates and ${TENANT_TEMPLATE_TOTAL_BYTES} bytes per tenant (409 template_limit_reached)`, async () => {
    const c = await tenantCast(t, 'tpl-limit');
    const b = `/api/v1/tenants/${c.tenant}`;
    // Rows written as the database owner, as if uploaded earlier: the API is what is under test.
    const filler = (i: number) => ({
      tenant_id: c.tenant,
      template_id: `filler-${i}`,
      name: 'Filler',
      severity: 'info' as const,
      tags: [],
      yaml: yaml(`filler-${i}`),
      size: 10,
      sha256: '0'.repeat(64),
    });
    await t.database.db
      .insertInto('scan_templates')
      .values(Array.from({ length: TENANT_TEMPLATE_LIMIT - 1 }, (_, i) => filler(i)))
      .execute();
    // Two uploads at once for the one free place: the per-tenant lock lets exactly one in.
    const both = await Promise.all(
      ['the-last-one', 'one-too-many'].map((id) => c.owner.post(`${b}/scan-templates`, { yaml: yaml(id) })),
    );
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(both.find((r) => r.statusCode === 409)!.json().error).toBe('template_limit_reached');
    expect((await list(c.owner, b)).usage.count).toBe(TENANT_TEMPLATE_LIMIT);
    // Bytes: one large row leaves no room for another template.
    const d = await tenantCast(t, 'tpl-bytes');
    await t.database.db
      .insertInto('scan_templates')
      .values({ ...filler(0), tenant_id: d.tenant, size: TENANT_TEMPLATE_TOTAL_BYTES - 100 })
      .execute();
    const full = await d.owner.post(`/api/v1/tenants/${d.tenant}/scan-templates`, { yaml: yaml('no-room') });
    expect([full.statusCode, full.json().error]).toEqual([409, 'template_limit_reached']);
  });
});

describe('row-level security', () => {
  it('shows an unfiltered select only the current tenant rows and refuses writes into another tenant', async () => {
    const seen = await withTenant(
      t.database.db,
      { tenantId: cast.otherTenant },
      async (tx) => (await sql<{ tenant_id: string }>`select distinct tenant_id from scan_templates`.execute(tx)).rows,
    );
    expect(seen).toEqual([{ tenant_id: cast.otherTenant }]);
    await expect(
      withTenant(t.database.db, { tenantId: cast.otherTenant }, (tx) =>
        tx
          .insertInto('scan_templates')
          .values({
            tenant_id: cast.tenant,
            template_id: 'forged',
            name: 'x',
            severity: 'info',
            tags: [],
            yaml: 'x',
            size: 1,
            sha256: 'x',
          })
          .execute(),
      ),
    ).rejects.toThrow(/row-level security/);
    const deleted = await withTenant(t.database.db, { tenantId: cast.otherTenant }, (tx) =>
      tx.deleteFrom('scan_templates').where('tenant_id', '=', cast.tenant).executeTakeFirst(),
    );
    expect(deleted.numDeletedRows).toBe(0n);
    // The service role reads (leases) but never writes.
    await expect(
      withService(t.database.db, (tx) =>
        tx.deleteFrom('scan_templates').where('tenant_id', '=', cast.tenant).execute(),
      ),
    ).rejects.toThrow(/permission denied/);
  });
});

describe('template leases', () => {
  type Lease = { scanId: string; kind: string; options: Record<string, unknown> };
  let w: TestWorker;
  let outsider: TestWorker;

  beforeAll(async () => {
    for (const [c, b] of [
      [cast.owner, base],
      [cast.other, otherBase],
    ] as const)
      expect((await c.put(`${b}/settings`, { dailyScanQuota: 1000, perAssetConcurrentScans: 5 })).statusCode).toBe(200);
    w = await enrollWorker(t, cast.owner, cast.tenant, {
      name: 'tpl-w',
      secret: await signingSecret(cast.owner, cast.tenant),
    });
    outsider = await enrollWorker(t, cast.other, cast.otherTenant, {
      name: 'tpl-outsider',
      secret: await signingSecret(cast.other, cast.otherTenant),
    });
    await upload(cast.other, otherBase, yaml('other-tenant-only', { severity: 'high' }));
  });

  async function leaseOne(worker: TestWorker, kinds: string[]): Promise<Lease> {
    const res = await worker.post('lease', { kinds, waitSeconds: 0 });
    expect(res.statusCode, res.body).toBe(200);
    const l = res.json().lease as Lease | null;
    expect(l).not.toBeNull();
    await withService(t.database.db, (tx) =>
      sql`update scans set status = 'cancelled' where id = ${l!.scanId}`.execute(tx),
    );
    return l!;
  }
  /** A host asset of the tenant, verified and freshly checked, so a lease needs no DNS. */
  async function hostAsset(c: Client, b: string): Promise<string> {
    const res = await c.post(`${b}/assets`, {
      kind: 'host',
      target: `tpl-${Math.random().toString(36).slice(2, 10)}.example.test`,
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = (res.json() as { asset: { id: string } }).asset.id;
    await setVerification(t, id, 'verified');
    await withService(t.database.db, (tx) =>
      sql`update assets set last_checked_at = now() where id = ${id}`.execute(tx),
    );
    return id;
  }
  async function queue(c: Client, b: string, body: Record<string, unknown>) {
    const res = await c.post(`${b}/scans`, body);
    expect(res.statusCode, res.body).toBe(201);
  }
  const custom = (l: Lease) => (l.options.customTemplates as { id: string; yaml: string }[]).map((c) => c.id);

  it("carries the tenant's templates on template leases only, never another tenant's", async () => {
    const asset = await hostAsset(cast.owner, base);
    const mine = (await list(cast.owner, base)).templates.map((x) => x.templateId).sort();

    await queue(cast.owner, base, { assetId: asset, kind: 'template' });
    const l = await leaseOne(w, ['template']);
    expect(l.kind).toBe('template');
    expect([...custom(l)].sort()).toEqual(mine);
    expect(custom(l)).not.toContain('other-tenant-only');
    const one = (l.options.customTemplates as { id: string; yaml: string }[]).find((c) => c.id === 'acme-secret-file');
    expect(one?.yaml).toBe(yaml('acme-secret-file', { severity: 'HIGH', tags: 'Acme, Secrets' }));

    // Filtered by the scan's template ids and severities.
    await queue(cast.owner, base, {
      assetId: asset,
      kind: 'template',
      options: { templateIds: ['acme-secret-file', 'dup-id', 'other-tenant-only'] },
    });
    expect(custom(await leaseOne(w, ['template']))).toEqual(['acme-secret-file', 'dup-id']);
    await queue(cast.owner, base, { assetId: asset, kind: 'template', options: { severities: ['high', 'critical'] } });
    expect(custom(await leaseOne(w, ['template']))).toEqual(['acme-secret-file']);

    await queue(cast.owner, base, { assetId: asset, kind: 'port', options: { range: { from: 1, to: 10 } } });
    const port = await leaseOne(w, ['port']);
    expect(port.kind).toBe('port');
    expect(port.options).not.toHaveProperty('customTemplates');
  });

  it('hides secret-looking scan variables from people and gives the worker their values', async () => {
    const asset = await hostAsset(cast.owner, base);
    const variables = { username: 'alice', password: 'hunter2', 'api-key': 'k-123' };
    const res = await cast.owner.post(`${base}/scans`, {
      assetId: asset,
      kind: 'template',
      options: { templateIds: ['acme-secret-file'], variables },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.body).not.toContain('hunter2');
    expect(res.json().scan.options.variables).toEqual({
      username: 'alice',
      password: '********',
      'api-key': '********',
    });
    const shown = await cast.owner.get(`${base}/scans/${res.json().scan.id}`);
    expect(shown.body).not.toContain('hunter2');
    expect((await leaseOne(w, ['template'])).options.variables).toEqual(variables);
    const bad = await cast.owner.post(`${base}/scans`, {
      assetId: asset,
      kind: 'template',
      options: { variables: { BaseURL: 'http://elsewhere/' } },
    });
    expect([bad.statusCode, bad.json().error, bad.json().details[0].path]).toEqual([
      400,
      'validation_failed',
      'body.options.variables.BaseURL',
    ]);
  });

  it("gives the other tenant's worker only that tenant's templates", async () => {
    await queue(cast.other, otherBase, { assetId: await hostAsset(cast.other, otherBase), kind: 'template' });
    expect(custom(await leaseOne(outsider, ['template']))).toEqual(['dup-id', 'other-tenant-only']);
  });

  it("runs a leased tenant template in the template scanner, which reports the tenant's finding", async () => {
    const server = createServer((req, res) => {
      if (req.url === '/.secret-acme-secret-file')
        res.writeHead(200, { 'content-type': 'text/plain' }).end('SECRET_TOKEN=1\n');
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await queue(cast.owner, base, {
        assetId: await hostAsset(cast.owner, base),
        kind: 'template',
        options: { templateIds: ['acme-secret-file'] },
      });
      const l = await leaseOne(w, ['template']);
      const task = {
        target: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        options: l.options,
        chunk: null,
        signal: new AbortController().signal,
        progress: () => undefined,
      };
      const out = await createTemplateScanner({ concurrency: 2, timeoutMs: 2000 }).run(task);
      expect(out.findings).toHaveLength(1);
      const f = normalizedFindingSchema.parse(out.findings[0]);
      expect(JSON.stringify(f)).toContain('acme-secret-file');
      expect(f.severity).toBe('high');
    } finally {
      server.close();
    }
  });

  it('stores payload files with the template, refuses missing, unused and unsafe ones, and runs them', async () => {
    const withFile = (id: string) => `id: ${id}
info: {name: Payload files ${id}, author: tests, severity: high}
http:
  - path: ["{{BaseURL}}/login?u={{user}}&p={{pass}}"]
    attack: clusterbomb
    payloads:
      user: helpers/wordlists/users.txt
      pass: [p1, secret]
    matchers: [{type: word, words: ["WELCOME"]}]
`;
    const text = withFile('acme-payload-files');
    const files = { 'helpers/wordlists/users.txt': 'guest\r\nadmin\n\n' };
    const refused = async (body: Record<string, unknown>) => {
      const res = await cast.owner.post(`${base}/scan-templates`, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe('validation_failed');
      return res.json().details as { path: string; message: string }[];
    };
    expect(await refused({ yaml: text })).toContainEqual({
      path: 'body.yaml.http[0].payloads.user',
      message: expect.stringMatching(/payload file "helpers\/wordlists\/users\.txt" was not uploaded/),
    });
    expect(await refused({ yaml: text, payloadFiles: { ...files, 'extra.txt': 'x' } })).toEqual([
      { path: 'body.payloadFiles.extra.txt', message: expect.stringMatching(/no payload with this file/) },
    ]);
    expect((await refused({ yaml: text, payloadFiles: { '../etc/passwd': 'x' } }))[0]!.path).toMatch(
      /^body\.payloadFiles/,
    );
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}.txt`, 'x']));
    expect((await refused({ yaml: text, payloadFiles: many }))[0]!.message).toMatch(/At most 20 payload files/);

    const res = await cast.owner.post(`${base}/scan-templates`, { yaml: text, payloadFiles: files });
    expect(res.statusCode, res.body).toBe(201);
    const stored = (res.json() as { template: ScanTemplateDetailDto }).template;
    expect(stored.payloadFiles).toEqual([{ path: 'helpers/wordlists/users.txt', size: 14 }]);
    expect(stored.size).toBe(Buffer.byteLength(text) + 14);
    // A replacement without files keeps the stored ones.
    const put = await cast.owner.put(`${base}/scan-templates/${stored.id}`, { yaml: `${text}# v2\n` });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().template.payloadFiles).toEqual(stored.payloadFiles);

    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url!);
      res.end(req.url === '/login?u=admin&p=secret' ? 'WELCOME admin' : 'no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await queue(cast.owner, base, {
        assetId: await hostAsset(cast.owner, base),
        kind: 'template',
        options: { templateIds: ['acme-payload-files'] },
      });
      const l = await leaseOne(w, ['template']);
      const leased = (l.options.customTemplates as { id: string; payloadFiles: Record<string, string> }[]).find(
        (c) => c.id === 'acme-payload-files',
      );
      expect(leased?.payloadFiles).toEqual(files);
      const out = await createTemplateScanner({ concurrency: 2, timeoutMs: 2000 }).run({
        target: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        options: l.options,
        chunk: null,
        signal: new AbortController().signal,
        progress: () => undefined,
      });
      expect(seen.filter((u) => u.startsWith('/login')).sort()).toEqual([
        '/login?u=admin&p=p1',
        '/login?u=admin&p=secret',
        '/login?u=guest&p=p1',
        '/login?u=guest&p=secret',
      ]);
      expect(JSON.stringify(out.findings)).toContain('acme-payload-files');
    } finally {
      server.close();
    }
  });

  it('stops a lease at the byte cap, in template id order', async () => {
    const d = await tenantCast(t, 'tpl-cap');
    const s = await scanTenant(t, d.owner);
    await s.settings(1000, 5);
    const worker = await enrollWorker(t, d.owner, s.tenantId, {
      name: 'cap-w',
      secret: await signingSecret(d.owner, s.tenantId),
    });
    const half = TENANT_TEMPLATE_TOTAL_BYTES / 2;
    // Sizes as if the limits had been higher when these were stored.
    await t.database.db
      .insertInto('scan_templates')
      .values(
        ['cap-a', 'cap-b', 'cap-c'].map((id) => ({
          tenant_id: s.tenantId,
          template_id: id,
          name: id,
          severity: 'info' as const,
          tags: [],
          yaml: yaml(id),
          size: half,
          sha256: '0'.repeat(64),
        })),
      )
      .execute();
    const asset = await s.asset('host');
    await withService(t.database.db, (tx) =>
      sql`update assets set last_checked_at = now() where id = ${asset}`.execute(tx),
    );
    await s.queue({ assetId: asset, kind: 'template' });
    expect(custom(await leaseOne(worker, ['template']))).toEqual(['cap-a', 'cap-b']);
  });
});
