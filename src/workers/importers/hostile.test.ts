import { Readable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImportError, parseReport, REPORT_FORMATS, type ReportFormat } from './index.ts';
import { collect, fixtureStream, parseError, textStream } from './test-helpers.ts';

/** Any input either parses into schema-valid findings (checked by collect) or fails with ImportError. */
async function survives(format: ReportFormat, input: string | Buffer): Promise<void> {
  try {
    await collect(format, textStream(input, 13));
  } catch (err) {
    if (!(err instanceof ImportError)) throw err;
  }
}

describe('hostile input', () => {
  it('fails with ImportError when a report is read as the wrong format', async () => {
    const wrong: [ReportFormat, string, string][] = [
      ['nuclei', 'nmap-scan.xml', 'invalid_json'],
      ['native', 'nuclei-results.jsonl', 'invalid_report'],
      ['trivy', 'zap-report.json', 'invalid_report'],
      ['zap', 'semgrep.sarif', 'invalid_report'],
      ['sarif', 'trivy-image.json', 'invalid_report'],
      ['nmap', 'zap-report.json', 'invalid_xml'],
      ['nuclei', 'zap-report.json', 'invalid_json'],
    ];
    for (const [format, file, code] of wrong) {
      const err = await parseError(format, fixtureStream(file));
      expect(err, `${file} as ${format}`).toBeInstanceOf(ImportError);
      expect((err as ImportError).code, `${file} as ${format}`).toBe(code);
    }
  });

  it('never crashes on random bytes or random JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...REPORT_FORMATS), fc.uint8Array({ maxLength: 300 }), async (format, bytes) => {
        await survives(format, Buffer.from(bytes));
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...REPORT_FORMATS),
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }),
        async (format, values) => {
          await survives(format, values.map((v) => JSON.stringify(v)).join('\n'));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never crashes on records with the right keys and wrong types', async () => {
    const anything = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
    );
    const rec = (keys: string[]) => fc.record(Object.fromEntries(keys.map((k) => [k, anything])), { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(
        rec([
          'template-id',
          'info',
          'matched-at',
          'host',
          'port',
          'matcher-name',
          'extracted-results',
          'curl-command',
          'request',
          'response',
          'type',
        ]),
        async (r) => {
          await survives('nuclei', JSON.stringify(r));
        },
      ),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(
        rec([
          'VulnerabilityID',
          'PkgName',
          'InstalledVersion',
          'FixedVersion',
          'Severity',
          'CweIDs',
          'CVSS',
          'References',
          'PrimaryURL',
        ]),
        async (v) => {
          await survives(
            'trivy',
            JSON.stringify({
              SchemaVersion: 2,
              Results: [{ Target: 't', Vulnerabilities: [v], Secrets: [v], Misconfigurations: [v] }],
            }),
          );
        },
      ),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(
        rec([
          'pluginid',
          'alertRef',
          'name',
          'riskcode',
          'confidence',
          'desc',
          'instances',
          'solution',
          'reference',
          'cweid',
          'wascid',
        ]),
        async (a) => {
          await survives('zap', JSON.stringify({ site: [{ '@name': 'https://x.example', alerts: [a] }] }));
        },
      ),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(
        rec(['ruleId', 'ruleIndex', 'level', 'message', 'locations', 'partialFingerprints', 'properties', 'kind']),
        async (r) => {
          await survives(
            'sarif',
            JSON.stringify({
              version: '2.1.0',
              runs: [{ tool: { driver: { name: 'x', rules: [{ id: 'r' }] } }, results: [r] }],
            }),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('one bad value never fails a whole import', () => {
  const header = '{"type":"report","version":1,"scanner":"template"}\n';
  const finding = (extra: string) =>
    `{"type":"finding","ruleId":"r","title":"t","severity":"low","location":{"host":"a.example"}${extra}}\n`;

  it('cleans a NUL in a nested evidence key, and cuts nesting 6,000 levels deep', async () => {
    const deep = `${'{"a":'.repeat(6_000)}1${'}'.repeat(6_000)}`;
    const input = `${header}${finding(',"evidence":{"data":{"outer":{"k\\u0000ey":"v\\u0000"}}}')}${finding(`,"discriminator":"deep","evidence":{"data":{"d":${deep}}}`)}`;
    const { findings, meta } = await collect('native', textStream(input));
    expect(findings).toHaveLength(2);
    expect(findings[0]!.evidence?.data).toEqual({ outer: { 'k\uFFFDey': 'v\uFFFD' } });
    expect(JSON.stringify(findings[1]!.evidence?.data)).toContain('[nested too deep: dropped by Rampart]');
    expect(meta.cleaned.counts).toMatchObject({ nul: 2, deep: 1 });
    expect(meta.cleaned.samples).toEqual(
      expect.arrayContaining([
        { kind: 'nul', where: 'line 2' },
        { kind: 'deep', where: 'line 3' },
      ]),
    );
  });

  it('skips an invalid finding of a native report with its line, and marks the report partial', async () => {
    const { findings, meta } = await collect(
      'native',
      textStream(
        `${header}{"type":"finding","ruleId":"r","title":"t","severity":"severe","location":{}}\n${finding('')}`,
      ),
    );
    expect(findings).toHaveLength(1);
    expect(meta.skipReasons[0]).toMatchObject({ count: 1, where: ['line 2'] });
    expect(meta.skipReasons[0]!.reason).toMatch(/^invalid finding \(severity/);
    expect(meta.partial).toMatch(/nothing is closed/);
  });

  it('cleans lone surrogates in nmap XML and in JSON escapes', async () => {
    const xml = `<nmaprun version="7.94"><host><status state="up"/><address addr="192.0.2.9" addrtype="ipv4"/><ports><port protocol="tcp" portid="80"><state state="open"/><service name="http"/><script id="http-title" output="caf&#xD800;&#x1;e"/></port></ports></host></nmaprun>`;
    const x = await collect('nmap', textStream(xml, 5));
    expect(x.findings).toHaveLength(1);
    expect(x.findings[0]!.evidence?.snippet).not.toMatch(/[\uD800-\uDFFF]/);
    expect(x.meta.cleaned.total).toBeGreaterThanOrEqual(1);
    const j = await collect(
      'nuclei',
      textStream('{"template-id":"t","info":{"name":"caf\\ud800e"},"matched-at":"https://a.example/\\udc00"}\n'),
    );
    expect(j.findings[0]!.title).toBe('caf\uFFFDe');
    // The title, the URL and the summary that quotes the URL.
    expect(j.meta.cleaned.counts.surrogate).toBe(3);
  });

  it('fails a binary file sent as native at once, with a message that can be stored', async () => {
    const bytes = Buffer.alloc(64 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    const err = (await parseError('native', textStream(bytes, 4096))) as ImportError;
    expect(err).toBeInstanceOf(ImportError);
    // eslint-disable-next-line no-control-regex
    expect(err.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\uD800-\uDFFF]/);
  });

  it('keeps a SARIF result whose properties nest 6,000 deep', async () => {
    const deep = `${'['.repeat(6_000)}${']'.repeat(6_000)}`;
    const log = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"ruleId":"r","message":{"text":"m"},"properties":{"junk":${deep}},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.c"}}}]}]}]}`;
    const { findings, meta } = await collect('sarif', textStream(log, 500));
    expect(findings).toHaveLength(1);
    expect(meta.cleaned.counts.deep).toBe(1);
  });
});

describe('bounded memory for single-document reports', () => {
  it('streams a large SARIF log without holding it', async () => {
    const RESULTS = 40_000;
    let produced = 0;
    function* gen() {
      yield Buffer.from(
        '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"semgrep","rules":[{"id":"r1"}]}},"results":[',
      );
      for (let i = 0; i < RESULTS; i++) {
        produced += 1;
        const r = {
          ruleId: 'r1',
          message: { text: `finding ${i} ${'x'.repeat(200)}` },
          locations: [
            { physicalLocation: { artifactLocation: { uri: `src/f${i}.js` }, region: { startLine: i + 1 } } },
          ],
        };
        yield Buffer.from(`${i ? ',' : ''}${JSON.stringify(r)}`);
      }
      yield Buffer.from(']}]}');
    }
    const report = parseReport('sarif', Readable.from(gen(), { objectMode: false, highWaterMark: 16 }));
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let count = 0;
    let maxAhead = 0;
    for await (const _f of report) {
      count += 1;
      maxAhead = Math.max(maxAhead, produced - count);
      if (count % 5_000 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
    }
    expect(count).toBe(RESULTS);
    // ~13 MB of JSON; the reader holds about one chunk's records at a time.
    expect(maxAhead).toBeLessThan(1_000);
    expect(peak - before).toBeLessThan(16 * 1024 * 1024);
  });
});
