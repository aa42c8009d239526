// The language-model routes through the app, on the test database (PGlite, or PostgreSQL with
// DATABASE_URL): the streamed explainer (offline and with the local model server), error mapping
// as JSON and as stream events, history private per user (API and RLS as the app role), the
// staff status endpoint, the evidence-review route, and aborting upstream when the client leaves.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../src/db/tenant.ts';
import { loggerOptions } from '../../src/server/app.ts';
import type { EvidenceReview, ExplanationSummary } from '../../src/llm/index.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import type { Client } from '../helpers/client.ts';
import { multipart, parseSse } from '../helpers/llm-http.ts';
import { makeImagePdf, makeTextPdf, promptText, startLlmServer, type LlmServer } from '../helpers/llm-server.ts';
import { bootstrapStaff } from '../helpers/staff.ts';
import { tenantCast, type TenantCast } from '../helpers/tenants.ts';

const KEY = 'sk-api-test-secret-4242';
const trivy = readFileSync(fileURLToPath(new URL('../fixtures/reports/trivy-image.json', import.meta.url)));

const explain = (c: Client, tenant: string, file: Buffer, fileName = 'trivy-image.json') => {
  const m = multipart([{ name: 'file', value: file, fileName }]);
  return c.post(`/api/v1/tenants/${tenant}/llm/explain`, m.payload, m.headers);
};

describe('language-model helpers without a model (offline analysis)', () => {
  let t: TestApp;
  let cast: TenantCast;

  beforeAll(async () => {
    t = await createTestApp();
    cast = await tenantCast(t, 'llm-off');
  });
  afterAll(() => t.close());

  it('streams the offline analysis as server-sent events and stores it in the caller’s history', async () => {
    const res = await explain(cast.owner, cast.tenant, trivy);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.body);
    expect(events[0]).toMatchObject({
      event: 'meta',
      data: { source: 'offline', label: 'offline analysis', format: 'trivy', fileName: 'trivy-image.json' },
    });
    expect(events[0]!.data).not.toHaveProperty('model');
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.text)
      .join('');
    expect(text).toMatch(/^\*\*Offline analysis\*\*/);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    const id = done.data.explanationId as string;

    const list = await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`);
    expect(list.statusCode).toBe(200);
    expect((list.json() as { explanations: ExplanationSummary[] }).explanations.map((e) => e.id)).toEqual([id]);
    const one = await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`);
    expect(one.json()).toMatchObject({
      explanation: { id, source: 'offline', answer: text, fileName: 'trivy-image.json' },
    });
  });

  it('keeps the history private per user within the tenant, and per tenant', async () => {
    const res = await explain(cast.owner, cast.tenant, trivy);
    const id = parseSse(res.body).at(-1)!.data.explanationId as string;
    // Another member of the same tenant sees nothing of it.
    const memberList = await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`);
    expect(memberList.statusCode).toBe(200);
    expect((memberList.json() as { explanations: unknown[] }).explanations).toEqual([]);
    expect((await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).json()).toMatchObject({
      error: 'llm_explanation_not_found',
    });
    expect((await cast.member.delete(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).statusCode).toBe(404);
    // Someone of another tenant is not even a member.
    expect((await cast.other.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`)).json()).toMatchObject({
      error: 'tenant_forbidden',
    });
    expect((await cast.other.get(`/api/v1/tenants/${cast.otherTenant}/llm/explanations/${id}`)).statusCode).toBe(404);
    // The owner still has it, and deletes it.
    expect((await cast.owner.delete(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).statusCode).toBe(204);
    expect((await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).statusCode).toBe(404);
  });

  it('enforces the privacy by row-level security as the app role, not only in the queries', async () => {
    const ownerId = (await cast.owner.me()).user.id;
    const memberId = (await cast.member.me()).user.id;
    await explain(cast.owner, cast.tenant, trivy);
    await explain(cast.member, cast.tenant, trivy);
    const seen = (userId: string, tenantId = cast.tenant) =>
      withTenant(
        t.database.db,
        { tenantId, userId },
        async (tx) =>
          (
            await sql<{ user_id: string; tenant_id: string }>`select user_id, tenant_id from llm_explanations`.execute(
              tx,
            )
          ).rows,
      );
    const asOwner = await seen(ownerId);
    expect(asOwner.length).toBeGreaterThan(0);
    expect(asOwner.every((r) => r.user_id === ownerId && r.tenant_id === cast.tenant)).toBe(true);
    const asMember = await seen(memberId);
    expect(asMember.length).toBe(1);
    expect(asMember[0]!.user_id).toBe(memberId);
    // The owner's user id in another tenant sees none of these rows.
    expect(await seen(ownerId, cast.otherTenant)).toEqual([]);
    // Writes as someone else, or into another tenant, are refused; deletes of others' rows touch nothing.
    const row = {
      tenant_id: cast.tenant,
      user_id: ownerId,
      file_name: 'x',
      format: 'trivy',
      source: 'offline',
      answer: 'forged',
    };
    await expect(
      withTenant(t.database.db, { tenantId: cast.tenant, userId: memberId }, (tx) =>
        sql`insert into llm_explanations (tenant_id, user_id, file_name, format, source, answer) values (${row.tenant_id}::uuid, ${row.user_id}::uuid, 'x', 'trivy', 'offline', 'forged')`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/row-level security/);
    const deleted = await withTenant(t.database.db, { tenantId: cast.tenant, userId: memberId }, (tx) =>
      sql`delete from llm_explanations where user_id = ${ownerId}::uuid`.execute(tx),
    );
    expect(Number(deleted.numAffectedRows ?? 0)).toBe(0);
    const rls = await sql<{
      relrowsecurity: boolean;
      relforcerowsecurity: boolean;
    }>`select relrowsecurity, relforcerowsecurity from pg_class where relname = 'llm_explanations'`.execute(
      t.database.db,
    );
    expect(rls.rows[0]).toEqual({ relrowsecurity: true, relforcerowsecurity: true });
  });

  it('keeps the uploaded result file with the explanation: a safe download, private by RLS, deleted with the entry', async () => {
    const res = await explain(cast.owner, cast.tenant, trivy, 'rapport-été.json');
    const id = parseSse(res.body).at(-1)!.data.explanationId as string;
    const url = `/api/v1/tenants/${cast.tenant}/llm/explanations/${id}/file`;

    const listed = (
      (await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`)).json() as {
        explanations: ExplanationSummary[];
      }
    ).explanations.find((e) => e.id === id);
    expect(listed).toMatchObject({ fileName: 'rapport-été.json', fileSize: trivy.length });
    expect((await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).json()).toMatchObject({
      explanation: { fileSize: trivy.length },
    });

    // The bytes as uploaded, as an attachment that is never rendered or sniffed.
    const file = await cast.owner.get(url);
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(trivy)).toBe(true);
    expect(file.headers['content-type']).toBe('application/octet-stream');
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="rapport-_t_.json"; filename*=UTF-8''rapport-%C3%A9t%C3%A9.json`,
    );
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(file.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(file.headers['cache-control']).toBe('private, no-store');

    // Another member of the tenant, and someone of another tenant, get nothing.
    expect((await cast.member.get(url)).json()).toMatchObject({ error: 'llm_explanation_not_found' });
    expect((await cast.other.get(url)).json()).toMatchObject({ error: 'tenant_forbidden' });
    expect((await cast.other.get(`/api/v1/tenants/${cast.otherTenant}/llm/explanations/${id}/file`)).statusCode).toBe(
      404,
    );

    // Row-level security as the app role covers the file too: only its author sees, adds or deletes it.
    const ownerId = (await cast.owner.me()).user.id;
    const memberId = (await cast.member.me()).user.id;
    const files = (userId: string, tenantId = cast.tenant) =>
      withTenant(
        t.database.db,
        { tenantId, userId },
        async (tx) =>
          (
            await sql<{
              explanation_id: string;
              user_id: string;
            }>`select explanation_id, user_id from llm_explanation_files`.execute(tx)
          ).rows,
      );
    expect((await files(ownerId)).map((r) => r.explanation_id)).toContain(id);
    expect((await files(memberId)).every((r) => r.user_id === memberId)).toBe(true);
    expect((await files(memberId)).map((r) => r.explanation_id)).not.toContain(id);
    expect(await files(ownerId, cast.otherTenant)).toEqual([]);
    const removed = await withTenant(t.database.db, { tenantId: cast.tenant, userId: memberId }, (tx) =>
      sql`delete from llm_explanation_files where explanation_id = ${id}::uuid`.execute(tx),
    );
    expect(Number(removed.numAffectedRows ?? 0)).toBe(0);
    await expect(
      withTenant(t.database.db, { tenantId: cast.tenant, userId: memberId }, (tx) =>
        sql`insert into llm_explanation_files (explanation_id, tenant_id, user_id, size, sha256, data) values (${id}::uuid, ${cast.tenant}::uuid, ${ownerId}::uuid, 1, ${'0'.repeat(64)}, '\\x00'::bytea)`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/row-level security/);
    const rls = await sql<{
      relrowsecurity: boolean;
      relforcerowsecurity: boolean;
    }>`select relrowsecurity, relforcerowsecurity from pg_class where relname = 'llm_explanation_files'`.execute(
      t.database.db,
    );
    expect(rls.rows[0]).toEqual({ relrowsecurity: true, relforcerowsecurity: true });

    // Deleting the explanation deletes its file.
    expect((await cast.owner.delete(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).statusCode).toBe(204);
    expect((await cast.owner.get(url)).json()).toMatchObject({ error: 'llm_explanation_not_found' });
    const left = await sql<{
      n: number;
    }>`select count(*)::int as n from llm_explanation_files where explanation_id = ${id}::uuid`.execute(t.database.db);
    expect(left.rows[0]!.n).toBe(0);
  });

  it('a file row cannot belong to someone other than its explanation’s author', async () => {
    const ownerId = (await cast.owner.me()).user.id;
    const memberId = (await cast.member.me()).user.id;
    // An explanation of the owner without a file yet.
    const id = await withTenant(t.database.db, { tenantId: cast.tenant, userId: ownerId }, async (tx) => {
      const r = await sql<{
        id: string;
      }>`insert into llm_explanations (tenant_id, user_id, file_name, format, source, answer) values (${cast.tenant}::uuid, ${ownerId}::uuid, 'x.json', 'trivy', 'offline', 'answer') returning id`.execute(
        tx,
      );
      return r.rows[0]!.id;
    });
    // The member may write rows as themselves (RLS), but not attach a file to the owner's explanation.
    await expect(
      withTenant(t.database.db, { tenantId: cast.tenant, userId: memberId }, (tx) =>
        sql`insert into llm_explanation_files (explanation_id, tenant_id, user_id, size, sha256, data) values (${id}::uuid, ${cast.tenant}::uuid, ${memberId}::uuid, 1, ${'0'.repeat(64)}, '\\x00'::bytea)`.execute(
          tx,
        ),
      ),
    ).rejects.toThrow(/foreign key/);
    await withTenant(t.database.db, { tenantId: cast.tenant, userId: ownerId }, (tx) =>
      sql`delete from llm_explanations where id = ${id}::uuid`.execute(tx),
    );
  });

  it('says so when an older explanation has no kept file, and keeps a user’s newest 100 explanations', async () => {
    const memberId = (await cast.member.me()).user.id;
    // 100 entries made before files were kept (only their answers), oldest first.
    const counts = { critical: 0, high: 1, medium: 0, low: 0, info: 0, total: 1 };
    const ids = await withTenant(t.database.db, { tenantId: cast.tenant, userId: memberId }, async (tx) => {
      await sql`delete from llm_explanations`.execute(tx);
      const out: string[] = [];
      for (let i = 0; i < 100; i++) {
        const r = await sql<{
          id: string;
        }>`insert into llm_explanations (tenant_id, user_id, file_name, format, source, counts, answer, created_at)
          values (${cast.tenant}::uuid, ${memberId}::uuid, ${`old-${i}.json`}, 'trivy', 'offline', ${JSON.stringify(counts)}::jsonb, 'old answer', now() - make_interval(days => ${200 - i}))
          returning id`.execute(tx);
        out.push(r.rows[0]!.id);
      }
      return out;
    });
    const oldest = ids[0]!;
    const one = await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${ids[1]}`);
    expect(one.json()).toMatchObject({ explanation: { fileSize: null } });
    const none = await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${ids[1]}/file`);
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ error: 'llm_explanation_file_not_kept' });

    // One more: the oldest goes, with its file (none here); the newest 100 stay.
    const res = await explain(cast.member, cast.tenant, trivy);
    const id = parseSse(res.body).at(-1)!.data.explanationId as string;
    const list = (
      (await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`)).json() as {
        explanations: ExplanationSummary[];
      }
    ).explanations;
    expect(list).toHaveLength(100);
    expect(list[0]!.id).toBe(id);
    expect(list.map((e) => e.id)).not.toContain(oldest);
    expect((await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${oldest}`)).statusCode).toBe(404);
  });

  it('refuses uploads that are not result files, and requests without a file', async () => {
    const bad = await explain(cast.owner, cast.tenant, Buffer.from('just some text'), 'notes.txt');
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ error: 'llm_result_file_unreadable' });
    const m = multipart([{ name: 'note', value: 'x' }]);
    const none = await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/explain`, m.payload, m.headers);
    expect(none.json()).toMatchObject({ error: 'llm_file_missing' });
    const json = await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/explain`, { file: 'x' });
    expect(json.statusCode).toBe(415);
  });

  it('reviews evidence offline: verdicts, scans not assessable, Word refused', async () => {
    const m = multipart([
      { name: 'notes', value: 'We are a 5-person company.' },
      {
        name: 'files',
        value: await makeTextPdf([
          'Access control policy: authorized users only; user accounts reviewed; offboarding removes access.',
          'Firewall on the router; boundary and network diagram attached; VPN for remote access.',
        ]),
        fileName: 'policy.pdf',
        type: 'application/pdf',
      },
      { name: 'files', value: await makeImagePdf(2), fileName: 'scan.pdf', type: 'application/pdf' },
    ]);
    const res = await cast.member.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, m.headers);
    expect(res.statusCode).toBe(200);
    const r = res.json() as EvidenceReview;
    expect(r.source).toBe('offline');
    expect(r.label).toBe('offline analysis');
    expect(r.requirements).toHaveLength(15);
    // One sentence each addresses some objectives of these requirements, not all: Partial, cited.
    expect(r.requirements.find((x) => x.id === 'AC.L1-b.1.i')).toMatchObject({
      verdict: 'Partial',
      citations: [{ fileName: 'policy.pdf', pages: [1] }],
    });
    expect(r.requirements.find((x) => x.id === 'SC.L1-b.1.x')).toMatchObject({
      verdict: 'Partial',
      citations: [{ fileName: 'policy.pdf', pages: [2] }],
    });
    expect(r.files.find((f) => f.fileName === 'scan.pdf')).toMatchObject({ assessable: false });
    expect(r.nextSteps[0]!.text).toContain('scan.pdf');

    const word = multipart([
      { name: 'files', value: Buffer.from('PK\u0003\u0004word/document.xml'), fileName: 'policy.docx' },
    ]);
    const w = await cast.member.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, word.payload, word.headers);
    expect(w.statusCode).toBe(415);
    expect(w.json()).toMatchObject({ error: 'llm_word_document' });
    expect((w.json() as { message: string }).message).toMatch(/Save it as PDF first/);
    const nine = multipart(
      Array.from({ length: 9 }, (_, i) => ({ name: 'files', value: 'text', fileName: `f${i}.txt` })),
    );
    expect(
      (await cast.member.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, nine.payload, nine.headers)).json(),
    ).toMatchObject({ error: 'llm_too_many_files' });
    expect(
      (await cast.other.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, m.headers)).json(),
    ).toMatchObject({ error: 'tenant_forbidden' });
  });

  it('tells staff only whether a model is configured', async () => {
    const staff = await bootstrapStaff(t, uniqueEmail('llm-staff', STAFF_DOMAIN), 'staff');
    expect((await staff.get('/api/v1/staff/llm/status')).json()).toEqual({ configured: false });
    expect((await cast.owner.get('/api/v1/staff/llm/status')).json()).toMatchObject({ error: 'staff_only' });
  });
});

describe('language-model helpers with a model (local OpenAI-compatible server)', () => {
  const logLines: string[] = [];
  let t: TestApp;
  let server: LlmServer;
  let cast: TenantCast;

  beforeAll(async () => {
    server = await startLlmServer();
    // The log, kept to check what operators are told when the model fails (and that it holds no prompt or key).
    const loggerInstance = pino(
      loggerOptions('warn'),
      new Writable({ write: (chunk, _enc, cb) => (logLines.push(String(chunk)), cb()) }),
    );
    t = await createTestApp({
      env: { LLM_BASE_URL: server.url, LLM_API_KEY: KEY, LLM_MODEL: 'test-model' },
      deps: { loggerInstance, llmOptions: { connectMs: 2_000, firstTokenMs: 1_500, maxRetryWaitSeconds: 2 } },
    });
    cast = await tenantCast(t, 'llm-on');
  });
  afterAll(async () => {
    await t.close();
    await server.close();
  });

  it('streams the model answer, with the result facts delimited and no key in the prompt', async () => {
    const n = server.requests.length;
    server.enqueue({ kind: 'stream', chunks: ['## Summary\n', 'Patch ', 'openssl [F1].'] });
    const res = await explain(cast.owner, cast.tenant, trivy);
    expect(res.statusCode).toBe(200);
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual(['meta', 'delta', 'delta', 'delta', 'done']);
    expect(events[0]!.data).toMatchObject({ source: 'model', label: 'model answer', format: 'trivy' });
    // Tenant users learn that a model answered, never which one (LLM_MODEL).
    expect(events[0]!.data).not.toHaveProperty('model');
    expect(res.body).not.toContain('test-model');
    expect(
      events
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.text)
        .join(''),
    ).toBe('## Summary\nPatch openssl [F1].');
    const req = server.requests[n]!;
    const prompt = promptText(req);
    expect(prompt).toContain('<<<UNTRUSTED_DATA kind="scan-results"');
    expect(prompt).toContain('"format": "trivy"');
    expect(prompt).toContain('"id": "F1"');
    expect(prompt).toMatch(/square brackets/);
    expect(req.raw).not.toContain(KEY);
    expect(res.body).not.toContain(KEY);
    const id = events.at(-1)!.data.explanationId as string;
    const saved = await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`);
    expect(saved.json()).toMatchObject({ explanation: { source: 'model', answer: '## Summary\nPatch openssl [F1].' } });
    expect(saved.body).not.toContain('test-model');
    expect((await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`)).body).not.toContain('test-model');
  });

  it('answers with the offline analysis, labelled with the reason, when the model is busy, out of credits, slow or failing', async () => {
    const history = async () =>
      (
        (await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`)).json() as {
          explanations: ExplanationSummary[];
        }
      ).explanations;
    const offlineAnswer = async () => {
      const res = await explain(cast.owner, cast.tenant, trivy);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = parseSse(res.body);
      expect(events.map((e) => e.event)).toEqual(['meta', 'delta', 'done']);
      expect(events[0]!.data).toMatchObject({ source: 'offline', label: 'offline analysis', format: 'trivy' });
      expect(events[1]!.data.text).toMatch(/^\*\*Offline analysis\*\*/);
      expect(events[2]!.data.source).toBe('offline');
      // Kept in the history as what the user was shown: the offline analysis.
      const id = events[2]!.data.explanationId as string;
      const saved = (await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${id}`)).json() as {
        explanation: { source: string; answer: string };
      };
      expect(saved.explanation).toMatchObject({ source: 'offline', answer: events[1]!.data.text });
      return events[0]!.data as {
        fallbackReason: string;
        fallbackError: { error: string; message: string; retryAfterSeconds?: number };
      };
    };
    const before = (await history()).length;

    server.enqueue({ kind: 'status', status: 429, retryAfter: '30' });
    const busy = await offlineAnswer();
    expect(busy.fallbackError).toEqual({
      error: 'llm_busy',
      message: 'The language model is busy. Try again in 30 seconds.',
      retryAfterSeconds: 30,
    });
    expect(busy.fallbackReason).toBe('The language model is busy. Try again in 30 seconds.');

    server.enqueue({ kind: 'status', status: 402 });
    const credits = await offlineAnswer();
    expect(credits.fallbackError).toMatchObject({ error: 'llm_credits_exhausted' });
    expect(credits.fallbackError.retryAfterSeconds).toBeUndefined();
    expect(credits.fallbackReason).toMatch(/run out of credits/);

    server.enqueue({ kind: 'stream', chunks: ['late'], firstDelayMs: 4_000 });
    const slow = await offlineAnswer();
    expect(slow.fallbackError).toMatchObject({ error: 'llm_timeout' });
    expect(slow.fallbackReason).toMatch(/too long to start/);

    server.enqueue({ kind: 'status', status: 503, message: 'upstream internal detail' });
    const broken = await offlineAnswer();
    expect(broken.fallbackError).toMatchObject({ error: 'llm_unavailable' });
    expect(JSON.stringify(broken)).not.toContain('upstream internal detail');

    expect((await history()).length).toBe(before + 4);

    // Operators learn why the offline analysis answered: the codes, never the prompt, answer or key.
    const warned = logLines
      .map((l) => JSON.parse(l) as { msg?: string; llmError?: string; retryAfterSeconds?: number })
      .filter((l) => l.msg === 'language model failed; the offline analysis answered');
    expect(warned.map((l) => l.llmError)).toEqual(
      expect.arrayContaining(['llm_busy', 'llm_credits_exhausted', 'llm_timeout', 'llm_unavailable']),
    );
    expect(warned.find((l) => l.llmError === 'llm_busy')!.retryAfterSeconds).toBe(30);
    const log = logLines.join('\n');
    expect(log).not.toContain(KEY);
    expect(log).not.toContain('UNTRUSTED_DATA');
    expect(log).not.toContain('upstream internal detail');
  });

  it('retries a 429 with a short Retry-After and then streams', async () => {
    server.enqueue({ kind: 'status', status: 429, retryAfter: '1' }, { kind: 'stream', chunks: ['ok'] });
    const res = await explain(cast.owner, cast.tenant, trivy);
    expect(parseSse(res.body).map((e) => e.event)).toEqual(['meta', 'delta', 'done']);
  });

  it('reports a failure after the first token as an error event, and stores nothing', async () => {
    const list = async () =>
      ((await cast.member.get(`/api/v1/tenants/${cast.tenant}/llm/explanations`)).json() as { explanations: unknown[] })
        .explanations.length;
    const before = await list();
    server.enqueue({ kind: 'stream', chunks: ['partial ', 'answer ', 'never'], delayMs: 10, cutAfter: 2 });
    const res = await explain(cast.member, cast.tenant, trivy);
    expect(res.statusCode).toBe(200);
    const events = parseSse(res.body);
    expect(events[0]!.event).toBe('meta');
    expect(events.some((e) => e.event === 'delta')).toBe(true);
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data.error).toMatch(/^llm_/);
    expect(typeof last.data.message).toBe('string');
    expect(await list()).toBe(before);
  });

  it('uses the model’s validated verdicts for evidence review, and falls back to offline on invalid output', async () => {
    const pdf = await makeTextPdf(['Every password has 14 characters. MFA and multi-factor authentication on email.']);
    const body = () => multipart([{ name: 'files', value: pdf, fileName: 'auth.pdf', type: 'application/pdf' }]);
    const requirements = JSON.stringify([
      {
        id: 'R1',
        title: 'Authentication',
        phrases: ['password', 'mfa', 'multi-factor'],
        documentation: ['Password policy'],
      },
    ]);
    const withReqs = () => {
      const m = multipart([
        { name: 'requirements', value: requirements },
        { name: 'files', value: pdf, fileName: 'auth.pdf', type: 'application/pdf' },
      ]);
      return m;
    };
    server.enqueue({
      kind: 'json',
      content: JSON.stringify({
        requirements: [
          {
            id: 'R1',
            verdict: 'Covered',
            citations: [{ fileName: 'auth.pdf', pages: [1] }],
            rationale: 'Passwords and MFA are defined.',
          },
        ],
      }),
    });
    let m = withReqs();
    const goodRes = await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, m.headers);
    expect(goodRes.body).not.toContain('test-model');
    const good = goodRes.json() as EvidenceReview;
    expect(good).toMatchObject({
      source: 'model',
      label: 'model review (validated against the documents)',
      fallbackReason: null,
      summary: { covered: 1, partial: 0, missing: 0 },
    });
    expect(good).not.toHaveProperty('model');
    expect(good.requirements[0]!.rationale).toBe('Passwords and MFA are defined.');

    server.enqueue({ kind: 'json', content: 'Everything looks fine to me!' });
    m = withReqs();
    const bad = (
      await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, m.headers)
    ).json() as EvidenceReview;
    expect(bad).toMatchObject({ source: 'offline', label: 'offline analysis', summary: { covered: 1 } });
    expect(bad.fallbackReason).toMatch(/not used/);

    server.enqueue({ kind: 'status', status: 429, retryAfter: '90' });
    m = body();
    const busy = (
      await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, m.headers)
    ).json() as EvidenceReview;
    expect(busy).toMatchObject({ source: 'offline', fallbackError: { error: 'llm_busy', retryAfterSeconds: 90 } });
    expect(busy.requirements).toHaveLength(15);
    expect(logLines.some((l) => l.includes('"llmError":"llm_busy"') && l.includes('"retryAfterSeconds":90'))).toBe(
      true,
    );

    // Streamed (Accept: text/event-stream): the offline review first, then the model's validated one.
    server.enqueue({
      kind: 'json',
      content: JSON.stringify({
        requirements: [
          {
            id: 'R1',
            verdict: 'Partial',
            citations: [{ fileName: 'auth.pdf', pages: [1] }],
            rationale: 'MFA is mentioned once.',
          },
        ],
      }),
    });
    m = withReqs();
    const streamed = await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, {
      ...m.headers,
      accept: 'text/event-stream',
    });
    expect(streamed.statusCode).toBe(200);
    expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(streamed.body);
    expect(events.map((e) => e.event)).toEqual(['preliminary', 'done']);
    expect(events[0]!.data.review).toMatchObject({
      source: 'offline',
      label: 'offline analysis',
      summary: { covered: 1 },
    });
    expect(events[1]!.data.review).toMatchObject({ source: 'model', summary: { covered: 0, partial: 1, missing: 0 } });

    // Without a model answer to wait for (only scanned files), just `done`; an outsider gets a JSON error.
    const scanned = multipart([
      { name: 'files', value: await makeImagePdf(), fileName: 'scan.pdf', type: 'application/pdf' },
    ]);
    const only = await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, scanned.payload, {
      ...scanned.headers,
      accept: 'text/event-stream',
    });
    expect(parseSse(only.body).map((e) => e.event)).toEqual(['done']);
    const outsider = await cast.other.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, scanned.payload, {
      ...scanned.headers,
      accept: 'text/event-stream',
    });
    expect(outsider.json()).toMatchObject({ error: 'tenant_forbidden' });
  });

  it('tells staff only that a model is configured: no model name, address or key', async () => {
    const staff = await bootstrapStaff(t, uniqueEmail('llm-staff-on', STAFF_DOMAIN), 'staff');
    const res = await staff.get('/api/v1/staff/llm/status');
    expect(res.json()).toEqual({ configured: true });
    expect(res.body).not.toContain(KEY);
    expect(res.body).not.toContain('127.0.0.1');
  });

  it('replaces a streamed answer that cites evidence that does not exist by the offline analysis', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: ['## Fix first\n', '1. Patch openssl [F1].\n', '2. Also fix the kernel [F99].'],
    });
    const res = await explain(cast.owner, cast.tenant, trivy);
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual(['meta', 'delta', 'delta', 'delta', 'fallback', 'done']);
    const fallback = events[4]!.data;
    expect(fallback).toMatchObject({ source: 'offline', label: 'offline analysis' });
    expect(fallback.reason).toMatch(/F99/);
    expect(fallback.text).toMatch(/^\*\*Offline analysis\*\*/);
    const done = events[5]!.data;
    expect(done.source).toBe('offline');
    // The history keeps what the user was finally shown: the offline analysis, not the invalid text.
    const saved = (
      await cast.owner.get(`/api/v1/tenants/${cast.tenant}/llm/explanations/${done.explanationId as string}`)
    ).json() as { explanation: { source: string; answer: string } };
    expect(saved.explanation.source).toBe('offline');
    expect(saved.explanation.answer).toBe(fallback.text);
    expect(saved.explanation.answer).not.toContain('F99');
  });

  it('answers malformed streamed model output with the offline analysis, never with the garbage', async () => {
    server.enqueue({ kind: 'malformed' });
    const res = await explain(cast.owner, cast.tenant, trivy);
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual(['meta', 'delta', 'done']);
    expect(events[0]!.data).toMatchObject({ source: 'offline', fallbackError: { error: 'llm_bad_response' } });
    expect(res.body).not.toContain('not json');
    expect(events[1]!.data.text).toMatch(/^\*\*Offline analysis\*\*/);
  });

  it('aborts the upstream call when the browser hangs up (stop)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address() as { port: number };
    const n = server.requests.length;
    // Five words, then the model "keeps answering" until the connection closes.
    server.enqueue({ kind: 'stream', chunks: Array.from({ length: 100 }, (_, i) => `word${i} `), holdAfter: 5 });
    const m = multipart([{ name: 'file', value: trivy, fileName: 'trivy-image.json' }]);
    const ac = new AbortController();
    const res = await fetch(`http://127.0.0.1:${address.port}/api/v1/tenants/${cast.tenant}/llm/explain`, {
      method: 'POST',
      body: new Uint8Array(m.payload),
      headers: {
        ...m.headers,
        cookie: [...cast.owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'x-csrf-token': cast.owner.csrf!,
        origin: 'http://rampart.test',
      },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let got = '';
    while (!got.includes('word2 ')) got += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    await server.closed(n);
    expect(server.requests[n]!.closedEarly).toBe(true);
  });
  it('aborts the upstream call when Stop closes a streamed evidence review', async () => {
    const address = t.app.server.address() as { port: number } | null;
    if (!address) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;
    const n = server.requests.length;
    // The model is "thinking" for a minute (headers sent, so no connect timeout): only Stop ends it sooner.
    server.enqueue({ kind: 'json', content: '{}', delayMs: 60_000 });
    const m = multipart([
      {
        name: 'files',
        value: await makeTextPdf(['Password policy: MFA and multi-factor authentication for email.']),
        fileName: 'auth.pdf',
        type: 'application/pdf',
      },
    ]);
    const ac = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/tenants/${cast.tenant}/llm/evidence-review`, {
      method: 'POST',
      body: new Uint8Array(m.payload),
      headers: {
        ...m.headers,
        accept: 'text/event-stream',
        cookie: [...cast.owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'x-csrf-token': cast.owner.csrf!,
        origin: 'http://rampart.test',
      },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let got = '';
    // The offline review arrives first, while the model is asked.
    while (!got.includes('event: preliminary')) got += new TextDecoder().decode((await reader.read()).value);
    await expect.poll(() => server.requests.length).toBe(n + 1);
    ac.abort();
    // The local model server sees the platform hang up its request.
    await server.closed(n);
    expect(server.requests[n]!.closedEarly).toBe(true);
  });
});

describe('LLM_STRUCTURED_OUTPUT=true (configuration reaches the evidence review)', () => {
  let t: TestApp;
  let server: LlmServer;
  let cast: TenantCast;

  beforeAll(async () => {
    server = await startLlmServer();
    t = await createTestApp({
      env: { LLM_BASE_URL: server.url, LLM_API_KEY: KEY, LLM_MODEL: 'test-model', LLM_STRUCTURED_OUTPUT: 'true' },
    });
    cast = await tenantCast(t, 'llm-schema');
  });
  afterAll(async () => {
    await t.close();
    await server.close();
  });

  it('sends the review schema as response_format json_schema and uses the validated answer', async () => {
    // This server refuses any request without a json_schema response_format, as strict servers do.
    server.enqueue({
      kind: 'response_format',
      content: JSON.stringify({
        requirements: [
          {
            id: 'R1',
            verdict: 'Covered',
            citations: [{ fileName: 'auth.pdf', pages: [1] }],
            rationale: 'MFA is required.',
          },
        ],
      }),
    });
    const m = multipart([
      {
        name: 'requirements',
        value: JSON.stringify([
          { id: 'R1', title: 'Authentication', phrases: ['password', 'mfa'], documentation: ['Password policy'] },
        ]),
      },
      {
        name: 'files',
        value: await makeTextPdf(['Every password has 14 characters. MFA on email.']),
        fileName: 'auth.pdf',
        type: 'application/pdf',
      },
    ]);
    const review = (
      await cast.owner.post(`/api/v1/tenants/${cast.tenant}/llm/evidence-review`, m.payload, m.headers)
    ).json() as EvidenceReview;
    expect(review).toMatchObject({ source: 'model', summary: { covered: 1 } });
    expect(server.requests.at(-1)!.body.response_format).toMatchObject({ type: 'json_schema' });
  });
});
