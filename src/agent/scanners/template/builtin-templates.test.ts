// Every built-in template against real local targets: it must fire on the vulnerable target and
// stay quiet on the clean catch-all one (the false-positive trap). Also checks that the compiled-in
// copy (builtin-templates.ts) matches the YAML files.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedFindingSchema, type NormalizedFindingInput } from '../../../findings/index.ts';
import { GENERATED_FILE, renderBuiltinTemplates, TEMPLATES_DIR } from './build-templates.ts';
import { builtinTemplates, createTemplateScanner } from './index.ts';
import { startTestTarget, type TestTarget } from '../../../../test/fixtures/template-target.ts';

const HEADER_MATCHERS = [
  'content-security-policy',
  'permissions-policy',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
];

let vulnerable: TestTarget;
let clean: TestTarget;
const found: Record<'vulnerable' | 'clean', NormalizedFindingInput[]> = { vulnerable: [], clean: [] };
const details: Record<string, Record<string, unknown>> = {};

beforeAll(async () => {
  [vulnerable, clean] = await Promise.all([startTestTarget('vulnerable'), startTestTarget('clean')]);
  const scanner = createTemplateScanner();
  for (const [mode, target] of [
    ['vulnerable', vulnerable],
    ['clean', clean],
  ] as const) {
    const out = await scanner.run({
      target: target.url,
      options: { rateLimit: 1000 },
      chunk: null,
      signal: new AbortController().signal,
      progress: () => undefined,
    });
    found[mode] = out.findings;
    details[mode] = out.details!;
  }
});

afterAll(async () => {
  await Promise.all([vulnerable?.close(), clean?.close()]);
});

describe('built-in templates', () => {
  it('are compiled into builtin-templates.ts from the current YAML files', () => {
    expect(readFileSync(GENERATED_FILE, 'utf8'), 'run: npx node src/agent/scanners/template/build-templates.ts').toBe(
      renderBuiltinTemplates(),
    );
  });

  it('are at least 25, valid, named after their ids, with two or more matchers per request', () => {
    const templates = builtinTemplates();
    const files = readdirSync(TEMPLATES_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(templates.length).toBeGreaterThanOrEqual(25);
    expect(templates.map((t) => `${t.id}.yaml`).sort()).toEqual(files);
    for (const t of templates) {
      for (const b of t.requests) expect(b.matchers.length, t.id).toBeGreaterThanOrEqual(2);
      expect(t.info.description, t.id).toBeTruthy();
      expect(t.info.remediation, t.id).toBeTruthy();
      expect(t.info.references.length, t.id).toBeGreaterThan(0);
      expect(t.info.tags.length, t.id).toBeGreaterThan(0);
    }
  });

  it('ran every template on both targets without request errors', () => {
    for (const d of Object.values(details)) {
      expect(d.errors, JSON.stringify(d.errorSamples)).toBe(0);
      expect(d.templatesRun).toBe(builtinTemplates().length);
    }
  });

  it.each(builtinTemplates().map((t) => [t.id]))('%s fires on the vulnerable target and not on the clean one', (id) => {
    expect(found.vulnerable.filter((f) => f.ruleId === id).length, `vulnerable: ${id}`).toBeGreaterThan(0);
    expect(
      found.clean.filter((f) => f.ruleId === id),
      `clean: ${id}`,
    ).toEqual([]);
  });

  it('reports one finding per missing security header, named by its matcher', () => {
    const headers = found.vulnerable.filter((f) => f.ruleId === 'rampart-missing-security-headers');
    expect(headers.map((f) => f.discriminator).sort()).toEqual(HEADER_MATCHERS);
    expect(headers.find((f) => f.discriminator === 'x-frame-options')!.title).toBe(
      'Missing security header (x-frame-options)',
    );
  });

  it('produces findings the server accepts, with evidence and extracted values', () => {
    for (const f of found.vulnerable) normalizedFindingSchema.parse(f);
    const git = found.vulnerable.find((f) => f.ruleId === 'rampart-git-config')!;
    expect(git).toMatchObject({
      severity: 'high',
      cwe: ['CWE-538'],
      location: {
        url: `${vulnerable.url}/.git/config`,
        host: '127.0.0.1',
        port: vulnerable.port,
        path: '/.git/config',
      },
      evidence: {
        extracted: ['git@github.com:acme/portal.git'],
        curl: `curl -sk -X GET '${vulnerable.url}/.git/config'`,
      },
    });
    expect(git.evidence!.request).toMatch(/^GET \/\.git\/config HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\n/);
    expect(git.evidence!.response).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\[core\]/);
    const tech = found.vulnerable.find((f) => f.ruleId === 'rampart-tech-detect')!;
    expect(tech.evidence!.extracted).toEqual(['Apache/2.4.41 (Ubuntu)', 'PHP/7.4.3']);
    const cors = found.vulnerable.find((f) => f.ruleId === 'rampart-cors-credentials')!;
    expect(cors.evidence!.curl).toBe(`curl -sk -X GET '${vulnerable.url}/' -H 'Origin: https://evil.example'`);
  });

  it('shares identical GETs between templates instead of sending them again', () => {
    const roots = vulnerable.hits.filter((h) => h === 'GET /');
    // The root probe serves the plain-GET templates; the Origin and redirect-following variants differ.
    expect(roots.length).toBe(3);
    expect(details.vulnerable!.cacheHits).toBeGreaterThan(0);
  });
});
