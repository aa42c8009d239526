// The input rule on every route, table-driven over the OpenAPI document (and over Better Auth's
// endpoints, which the document hides): NUL characters, unpaired surrogates and deeply nested JSON
// in path parameters, query strings, JSON bodies and multipart fields answer 400 with a stable
// code, never 500. Callers are authenticated the way each route wants (session and CSRF token,
// cron and relay secrets, signed worker and mesh requests), so the answer is the rule's, not an
// authentication failure's.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_NAME_MAX, TENANT_SLUG_MAX, USER_NAME_MAX } from '../../src/auth/auth-schemas.ts';
import { withService } from '../../src/db/tenant.ts';
import { signBody } from '../../src/lib/worker-wire.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { multipart } from '../helpers/llm-http.ts';
import { peerSign } from '../helpers/mesh.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { enrollWorker, signingSecret, type TestWorker } from '../helpers/workers.ts';

const CRON = 'cron-secret-for-hygiene';
const RELAY = 'relay-secret-for-hygiene';
const PEER = 'hygiene-peer';
const PEER_SECRET = 'peer-secret-for-hygiene';
const DISPATCH = '/api/public/svc/dispatch';

type Operation = { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, unknown> } };
interface Probe {
  label: string;
  method: string;
  url: string;
  body?: string | Buffer;
  contentType?: string;
  expected: 'invalid_characters' | 'json_too_deep' | 'invalid_payload';
}

const NUL_BODY = '{"field":"a\\u0000b"}';
const SURROGATE_BODY = '{"field":"a\\ud800b"}';
const DEEP_BODY = `{"field":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
const BODY_CASES = [
  ['NUL in the body', NUL_BODY, 'invalid_characters'],
  ['a lone surrogate in the body', SURROGATE_BODY, 'invalid_characters'],
  ['JSON 5,000 levels deep', DEEP_BODY, 'json_too_deep'],
] as const;

/** Routes whose body is a file streamed as it arrives (not text): their query and path are still checked. */
const RAW_BODY = new Set([
  'PUT /api/v1/tenants/{tenantId}/assets/{assetId}/archive',
  'POST /api/v1/tenants/{tenantId}/assets/archives',
  'PUT /api/public/worker/v1/uploads/{uploadId}',
]);
/** multipart/form-data routes: a text field and a file name are checked too. */
const MULTIPART =
  /\/(llm\/explain|llm\/evidence-review|imports|controls\/\{controlId\}\/evidence|sprs-confirmation\/proof|attestations\/\{itemId\}\/evidence)$/;

let t: TestApp;
let staff: Client;
let tenant: string;
let worker: TestWorker;

beforeAll(async () => {
  t = await createTestApp({
    env: {
      CRON_SECRET: CRON,
      AGENT_RELAY_SECRET: RELAY,
      [`SVC_SECRET_FROM_HYGIENE_PEER`]: PEER_SECRET,
      SVC_PEER_FLOWS_HYGIENE_PEER: 'ping,health_check,event_report',
      SVC_PEER_URL_HYGIENE_PEER: 'http://127.0.0.1:9',
    },
  });
  staff = await bootstrapStaff(t, uniqueEmail('hygiene', STAFF_DOMAIN), 'super_admin');
  tenant = await staff.createTenant('Hygiene Co');
  await staff.me();
  worker = await enrollWorker(t, staff, tenant, { secret: await signingSecret(staff, tenant) });
});
afterAll(() => t.close());

/** Sends a probe with what its route needs to get past authentication. */
async function send(p: Probe) {
  const path = p.url.split('?')[0]!;
  const headers: Record<string, string> = {};
  if (p.contentType) headers['content-type'] = p.contentType;
  if (path.startsWith('/api/public/hooks/')) headers.authorization = `Bearer ${CRON}`;
  else if (path === '/api/public/svc/relay') headers.authorization = `Bearer ${RELAY}`;
  else if (path === DISPATCH) {
    const ts = new Date().toISOString();
    Object.assign(headers, {
      'x-svc-caller': PEER,
      'x-svc-timestamp': ts,
      'x-svc-signature': peerSign(PEER_SECRET, PEER, ts, p.body ?? ''),
    });
  } else if (path.startsWith('/api/public/worker/v1/') && !path.endsWith('/enroll') && !path.includes('/uploads/')) {
    Object.assign(headers, {
      authorization: `Bearer ${worker.token}`,
      'x-rampart-signature': signBody(worker.secret, p.body ?? ''),
    });
  }
  if (headers.authorization || headers['x-svc-caller'])
    return t.app.inject({
      method: p.method as 'POST',
      url: p.url,
      headers,
      ...(p.body !== undefined ? { payload: p.body } : {}),
    });
  return staff.request(p.method, p.url, p.body, headers);
}

function fill(path: string, bad?: string): string {
  let first = true;
  return path.replace(/\{(\w+)\}|:(\w+)/g, (_m, a: string | undefined, b: string | undefined) => {
    const name = a ?? b!;
    if (bad !== undefined && first) {
      first = false;
      return bad;
    }
    return name === 'tenantId'
      ? tenant
      : name === 'framework'
        ? 'soc2'
        : name === 'itemId'
          ? 'ac1.roster'
          : name === 'controlId'
            ? 'CC6.1'
            : '00000000-0000-4000-8000-000000000000';
  });
}

function probesFor(method: string, path: string, op: Operation): Probe[] {
  const key = `${method} ${path}`;
  const url = fill(path);
  const declared = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const q = declared[0] ?? 'extra';
  const probes: Probe[] = [
    { label: `NUL in query ${q}`, method, url: `${url}?${q}=%00`, expected: 'invalid_characters' },
    {
      label: `a surrogate escaped in query ${q}`,
      method,
      url: `${url}?${q}=%ED%A0%80`,
      expected: 'invalid_characters',
    },
    { label: 'NUL in an undeclared query parameter', method, url: `${url}?zz=a%00b`, expected: 'invalid_characters' },
  ];
  if (/\{\w+\}/.test(path))
    probes.push({ label: 'NUL in a path parameter', method, url: fill(path, '%00'), expected: 'invalid_characters' });
  if (method === 'GET' || RAW_BODY.has(key)) return probes;
  if (key === `POST ${DISPATCH}`) {
    // The signed mesh route answers the rule with its own documented code, for any flow's payload.
    for (const [label, body] of BODY_CASES)
      probes.push({
        label,
        method,
        url,
        body: `{"flow":"event_report","payload":{"kind":"k","severity":"info","title":"t","data":${body}}}`,
        contentType: 'application/json',
        expected: 'invalid_payload',
      });
    return probes;
  }
  for (const [label, body, expected] of BODY_CASES)
    probes.push({ label, method, url, body, contentType: 'application/json', expected });
  if (MULTIPART.test(path)) {
    const field = multipart([
      { name: 'notes', value: 'a\u0000b' },
      { name: 'file', value: 'x', fileName: 'x.txt' },
    ]);
    probes.push({
      label: 'NUL in a multipart field',
      method,
      url,
      body: field.payload,
      contentType: field.headers['content-type']!,
      expected: 'invalid_characters',
    });
    const name = multipart([{ name: 'file', value: 'x', fileName: 'evil\u0000.txt' }]);
    probes.push({
      label: 'NUL in a multipart file name',
      method,
      url,
      body: name.payload,
      contentType: name.headers['content-type']!,
      expected: 'invalid_characters',
    });
  }
  return probes;
}

async function failuresOf(probes: { route: string; probe: Probe }[]): Promise<string[]> {
  const failures: string[] = [];
  for (const { route, probe } of probes) {
    const res = await send(probe);
    let code: unknown;
    try {
      code = (res.json() as { error?: unknown }).error;
    } catch {
      code = undefined;
    }
    if (res.statusCode !== 400 || code !== probe.expected)
      failures.push(`${route} — ${probe.label}: ${res.statusCode} ${String(code ?? res.body.slice(0, 120))}`);
  }
  return failures;
}

describe('the input rule on every route of the OpenAPI document', () => {
  it('answers 400 invalid_characters / json_too_deep to NUL, lone surrogates and deep JSON, never 500', async () => {
    const doc = t.app.swagger() as { paths: Record<string, Record<string, Operation>> };
    const probes: { route: string; probe: Probe }[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        const method = m.toUpperCase();
        for (const probe of probesFor(method, path, op)) probes.push({ route: `${method} ${path}`, probe });
      }
    }
    // Every route is covered: the document has well over a hundred operations.
    expect(new Set(probes.map((p) => p.route)).size).toBeGreaterThan(120);
    expect(await failuresOf(probes)).toEqual([]);
  });

  it('covers the Better Auth endpoints the app mounts (hidden from the document) the same way', async () => {
    const api = t.app.services.auth.api as unknown as Record<
      string,
      { path?: string; options?: { method?: string | string[] } }
    >;
    const probes: { route: string; probe: Probe }[] = [];
    for (const endpoint of Object.values(api)) {
      if (!endpoint.path || !endpoint.options?.method) continue;
      const methods = ([] as string[]).concat(endpoint.options.method).filter((m) => m === 'GET' || m === 'POST');
      const path = `/api/auth${endpoint.path}`;
      for (const method of methods)
        for (const probe of probesFor(method, path, {})) probes.push({ route: `${method} ${path}`, probe });
    }
    expect(new Set(probes.map((p) => p.route)).size).toBeGreaterThan(50);
    expect(await failuresOf(probes)).toEqual([]);
  });

  it('checks signed bodies after their signature: an unsigned mesh or worker request still learns nothing', async () => {
    const mesh = await t.app.inject({
      method: 'POST',
      url: DISPATCH,
      headers: {
        'content-type': 'application/json',
        'x-svc-caller': PEER,
        'x-svc-timestamp': new Date().toISOString(),
        'x-svc-signature': '0'.repeat(64),
      },
      payload: NUL_BODY,
    });
    expect(mesh.json()).toMatchObject({ error: 'bad_signature' });
    const w = await t.app.inject({
      method: 'POST',
      url: '/api/public/worker/v1/heartbeat',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${worker.token}`,
        'x-rampart-signature': `sha256=${'0'.repeat(64)}`,
      },
      payload: NUL_BODY,
    });
    expect(w.json()).toMatchObject({ error: 'worker_signature_invalid' });
  });

  it('keeps the signed mesh order and codes: event_report data with NUL or 5,000 levels is invalid_payload after the HMAC, nothing recorded', async () => {
    for (const data of ['{"note":"a\\u0000b"}', `{"x":${'['.repeat(5_000)}${']'.repeat(5_000)}}`]) {
      const body = `{"flow":"event_report","payload":{"kind":"x","severity":"info","title":"t","data":${data}}}`;
      const requestId = `hyg-${randomBytes(6).toString('hex')}`;
      const ts = new Date().toISOString();
      const headers = {
        'content-type': 'application/json',
        'x-svc-caller': PEER,
        'x-svc-timestamp': ts,
        'x-svc-request-id': requestId,
      };
      const res = await t.app.inject({
        method: 'POST',
        url: DISPATCH,
        headers: { ...headers, 'x-svc-signature': peerSign(PEER_SECRET, PEER, ts, body) },
        payload: body,
      });
      expect([res.statusCode, res.json().error]).toEqual([400, 'invalid_payload']);
      expect(
        await withService(t.database.db, (tx) =>
          tx.selectFrom('svc_received_events').select('id').where('request_id', '=', requestId).execute(),
        ),
      ).toEqual([]);
      // The request id was not claimed: the same id with a clean payload is accepted.
      const clean =
        '{"flow":"event_report","payload":{"kind":"x","severity":"info","title":"t","data":{"note":"fine"}}}';
      const ok = await t.app.inject({
        method: 'POST',
        url: DISPATCH,
        headers: { ...headers, 'x-svc-signature': peerSign(PEER_SECRET, PEER, ts, clean) },
        payload: clean,
      });
      expect([ok.statusCode, ok.json().accepted]).toEqual([200, true]);
    }
  });

  it('lets ordinary text through: accents, CJK, emoji, tabs and newlines', async () => {
    const res = await staff.post(`/api/v1/tenants/${tenant}/assets`, {
      kind: 'host',
      target: '198.51.100.7',
      name: 'Ünïcödé 中文 🛡️',
      notes: 'line one\n\tline two',
    });
    expect(res.statusCode, res.body).toBe(201);
    const list = await staff.get(`/api/v1/tenants/${tenant}/assets?q=${encodeURIComponent('中文 🛡️')}`);
    expect(list.statusCode).toBe(200);
    expect((list.json() as { assets: { name: string }[] }).assets.map((a) => a.name)).toEqual(['Ünïcödé 中文 🛡️']);
  });
});

/** Request strings with no length in the document, and what bounds them instead. */
const UNBOUNDED_BY_DESIGN: Record<string, string> = {
  'POST /api/v1/tenants/{tenantId}/scan-templates body.yaml':
    'a template document: the 1 MiB body limit and the template parser bound it',
  'PUT /api/v1/tenants/{tenantId}/scan-templates/{templateId} body.yaml': 'the same template document',
  'POST /api/public/worker/v1/report body.report':
    'a report file (legacy upload): WORKER_LEGACY_REPORT_MAX_BYTES bounds it',
  'PUT /api/v1/tenants/{tenantId}/cmmc/profile body.biddingUsers[].email':
    'an e-mail address: at most 320 characters after normalising (a pipe the document cannot show)',
  'PUT /api/v1/tenants/{tenantId}/cmmc/profile body.affirmingOfficial.email': 'the same e-mail rule',
};

type JsonSchema = {
  type?: string;
  maxLength?: number;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  additionalProperties?: unknown;
};

function unboundedStrings(schema: JsonSchema | undefined, at: string, out: string[]): void {
  if (!schema || typeof schema !== 'object') return;
  if (
    schema.type === 'string' &&
    schema.maxLength === undefined &&
    !schema.enum &&
    schema.const === undefined &&
    !schema.pattern &&
    !schema.format
  )
    out.push(at);
  for (const [k, v] of Object.entries(schema.properties ?? {})) unboundedStrings(v, `${at}.${k}`, out);
  if (schema.items) unboundedStrings(schema.items, `${at}[]`, out);
  for (const alt of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    unboundedStrings(alt, at, out);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
    unboundedStrings(schema.additionalProperties as JsonSchema, `${at}{}`, out);
}

describe('length limits', () => {
  it('bounds every string a request body or query string of the document carries (names included)', () => {
    const doc = t.app.swagger() as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { in: string; name: string; schema?: JsonSchema }[];
            requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
          }
        >
      >;
    };
    const found: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        const route = `${m.toUpperCase()} ${path}`;
        unboundedStrings(op.requestBody?.content?.['application/json']?.schema, `${route} body`, found);
        for (const p of op.parameters ?? [])
          if (p.in === 'query') unboundedStrings(p.schema, `${route} ?${p.name}`, found);
      }
    }
    expect(found.filter((f) => !UNBOUNDED_BY_DESIGN[f])).toEqual([]);
  });

  it('limits the names Better Auth stores: sign-up and account names, tenant names and slugs', async () => {
    const fresh = new Client(t.app);
    const huge = 'N'.repeat(100_000);
    const signUp = await fresh.post('/api/auth/sign-up/email', {
      email: uniqueEmail('long'),
      name: huge,
      password: 'correct horse battery staple',
    });
    expect(signUp.statusCode).toBe(400);
    expect(signUp.json()).toMatchObject({ error: 'validation_failed', details: [{ path: 'body.name' }] });
    const signUp201 = await fresh.post('/api/auth/sign-up/email', {
      email: uniqueEmail('long'),
      name: 'N'.repeat(USER_NAME_MAX + 1),
      password: 'correct horse battery staple',
    });
    expect(signUp201.statusCode).toBe(400);
    await fresh.signUp(uniqueEmail('fits'), 'N'.repeat(USER_NAME_MAX));
    expect((await fresh.post('/api/auth/update-user', { name: 'N'.repeat(USER_NAME_MAX + 1) })).json()).toMatchObject({
      error: 'validation_failed',
      details: [{ path: 'body.name' }],
    });
    expect((await fresh.post('/api/auth/update-user/', { name: '   ' })).statusCode).toBe(400);
    const org = await fresh.post('/api/auth/organization/create', {
      name: 'T'.repeat(TENANT_NAME_MAX + 1),
      slug: 'long-name',
    });
    expect(org.json()).toMatchObject({ error: 'validation_failed', details: [{ path: 'body.name' }] });
    expect(
      (
        await fresh.post('/api/auth/organization/create', { name: 'Fine', slug: 's'.repeat(TENANT_SLUG_MAX + 1) })
      ).json(),
    ).toMatchObject({ details: [{ path: 'body.slug' }] });
    const id = await fresh.createTenant('T'.repeat(TENANT_NAME_MAX - 10));
    const update = await fresh.post('/api/auth/organization/update', {
      organizationId: id,
      data: { name: 'T'.repeat(TENANT_NAME_MAX + 1) },
    });
    expect(update.json()).toMatchObject({ error: 'validation_failed', details: [{ path: 'body.data.name' }] });
    // Nothing over the limit was stored.
    const users = await t.database.db.selectFrom('user').select('name').where('name', 'like', 'NNNN%').execute();
    expect(users.every((u) => u.name.length <= USER_NAME_MAX)).toBe(true);
  });
});
