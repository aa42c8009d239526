import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImportError, REPORT_FORMATS, type ReportFormat } from './index.ts';
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
      fc.asyncProperty(fc.constantFrom(...REPORT_FORMATS), fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }), async (format, values) => {
        await survives(format, values.map((v) => JSON.stringify(v)).join('\n'));
      }),
      { numRuns: 300 },
    );
  });

  it('never crashes on records with the right keys and wrong types', async () => {
    const anything = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }));
    const rec = (keys: string[]) => fc.record(Object.fromEntries(keys.map((k) => [k, anything])), { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(rec(['template-id', 'info', 'matched-at', 'host', 'port', 'matcher-name', 'extracted-results', 'curl-command', 'request', 'response', 'type']), async (r) => {
        await survives('nuclei', JSON.stringify(r));
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(rec(['VulnerabilityID', 'PkgName', 'InstalledVersion', 'FixedVersion', 'Severity', 'CweIDs', 'CVSS', 'References', 'PrimaryURL']), async (v) => {
        await survives('trivy', JSON.stringify({ SchemaVersion: 2, Results: [{ Target: 't', Vulnerabilities: [v], Secrets: [v], Misconfigurations: [v] }] }));
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(rec(['pluginid', 'alertRef', 'name', 'riskcode', 'confidence', 'desc', 'instances', 'solution', 'reference', 'cweid', 'wascid']), async (a) => {
        await survives('zap', JSON.stringify({ site: [{ '@name': 'https://x.example', alerts: [a] }] }));
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(rec(['ruleId', 'ruleIndex', 'level', 'message', 'locations', 'partialFingerprints', 'properties', 'kind']), async (r) => {
        await survives('sarif', JSON.stringify({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x', rules: [{ id: 'r' }] } }, results: [r] }] }));
      }),
      { numRuns: 300 },
    );
  });
});
