// A native report written by the worker parses with the server's importer, and its declared size
// and SHA-256 are those of the file's bytes.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseReport } from '../workers/importers/index.ts';
import { MAX_COVERAGE_URLS } from '../findings/index.ts';
import { fitCoverage, writeNativeReport } from './report.ts';
import { portFindings } from './scanners/port/index.ts';

describe('native report writer', () => {
  it('writes a report the native importer reads back, with the right size and hash', async () => {
    const findings = portFindings({
      host: 'h1.example.test',
      address: '203.0.113.7',
      open: [
        {
          port: 22,
          service: 'ssh',
          product: 'OpenSSH',
          version: '9.6p1',
          banner: 'SSH-2.0-OpenSSH_9.6p1',
          identifiedBy: 'banner',
        },
        { port: 6379, service: 'redis', identifiedBy: 'probe', data: { authentication: 'none' } },
      ],
    });
    const bad = { ruleId: '', title: 'no rule id', severity: 'info', location: {} } as never;
    const report = await writeNativeReport({
      scanner: 'port',
      tool: { name: 'rampart-port', version: '0.1.0' },
      target: 'h1.example.test',
      startedAt: new Date(),
      findings: [...findings, bad],
    });
    try {
      const bytes = readFileSync(report.path);
      expect(report.size).toBe(bytes.length);
      expect(report.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(statSync(report.path).mode & 0o777).toBe(0o600);
      expect(report.findings).toBe(3);
      expect(report.skipped).toBe(1);

      const parsed = parseReport('native', createReadStream(report.path));
      const read = [];
      for await (const f of parsed) read.push(f);
      expect(parsed.meta.scanner).toBe('port');
      expect(parsed.meta.tool).toBe('rampart-port 0.1.0');
      expect(read.map((f) => f.ruleId)).toEqual(['port.open.tcp.22', 'port.open.tcp.6379', 'service.exposed.redis']);
      expect(read[2]).toMatchObject({
        severity: 'high',
        location: { host: 'h1.example.test', port: 6379, protocol: 'tcp' },
      });
      // The end line is what tells a complete report from a cut one.
      expect(bytes.toString('utf8').trim().split('\n').at(-1)).toBe('{"type":"end","findings":3}');
    } finally {
      await report.remove();
    }
    expect(existsSync(report.path)).toBe(false);
  });

  it('marks a partial scan in the header, and the importer reads the reason', async () => {
    const report = await writeNativeReport({
      scanner: 'template',
      tool: { name: 'rampart-template', version: '0.1.0' },
      target: 'https://a.example.test/',
      startedAt: new Date(),
      partial: '2 requests failed',
      findings: [],
    });
    try {
      const parsed = parseReport('native', createReadStream(report.path));
      for await (const f of parsed) void f;
      expect(parsed.meta.partial).toBe('2 requests failed');
    } finally {
      await report.remove();
    }
  });

  it('writes coverage and an inconclusive reason in the header, and the importer reads them back', async () => {
    const coverage = {
      hosts: ['h1.example.test', '203.0.113.7'],
      ports: [[1, 1024] as [number, number], [3306, 3306] as [number, number]],
      rules: ['port.open.tcp.*'],
    };
    const report = await writeNativeReport({
      scanner: 'port',
      tool: { name: 'rampart-port', version: '0.1.0' },
      target: 'h1.example.test',
      startedAt: new Date(),
      inconclusive: 'no port answered',
      coverage,
      findings: [],
    });
    try {
      const header = JSON.parse(readFileSync(report.path, 'utf8').split('\n')[0]!);
      expect(header).toMatchObject({ type: 'report', version: 1, inconclusive: 'no port answered', coverage });
      const parsed = parseReport('native', createReadStream(report.path));
      for await (const f of parsed) void f;
      expect(parsed.meta).toMatchObject({ inconclusive: 'no port answered', scanCoverage: coverage });
      expect(parsed.meta.partial).toBeUndefined();
    } finally {
      await report.remove();
    }
  });

  it('cuts a coverage URL list to what the server accepts, keeping the total in urlCount', () => {
    const urls = Array.from({ length: MAX_COVERAGE_URLS + 10 }, (_, i) => `https://a.example.test/page/${i}`);
    expect(fitCoverage({ urls, urlCount: urls.length })).toMatchObject({
      urls: urls.slice(0, MAX_COVERAGE_URLS),
      urlCount: MAX_COVERAGE_URLS + 10,
    });
    const long = Array.from({ length: 3_000 }, (_, i) => `https://a.example.test/${'x'.repeat(1_900)}/${i}`);
    const fitted = fitCoverage({ urls: long })!;
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(fitted.urls!.length).toBeGreaterThan(500);
    expect(fitted.urlCount).toBe(3_000);
    expect(fitCoverage({ ports: [[10, 5]] })).toBeUndefined();
  });
});
