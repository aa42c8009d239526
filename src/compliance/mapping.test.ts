// Finding classes → controls: CWE, rule-id and scanner fallbacks, and the table's integrity.
import { describe, expect, it } from 'vitest';
import {
  classifyFinding,
  FINDING_CLASSES,
  mapFindingToControls,
  undefinedClassReferences,
  unknownMappedControls,
  type ControlRef,
} from './mapping.ts';

const ids = (refs: ControlRef[], framework: ControlRef['framework']) =>
  refs.filter((r) => r.framework === framework).map((r) => r.controlId);

describe('mapFindingToControls', () => {
  it('maps cleartext transport (CWE-319) to encryption-in-transit controls in every framework', () => {
    const refs = mapFindingToControls({ cwe: [319], ruleId: null, scanner: 'webapp' });
    expect(ids(refs, 'iso27001')).toContain('A.8.24');
    expect(ids(refs, 'nist-csf')).toContain('PR.DS-02');
    expect(ids(refs, 'cis-v8')).toContain('3.10');
    expect(ids(refs, 'soc2')).toContain('CC6.7');
    expect(ids(refs, 'gdpr')).toEqual(['Art. 32']);
  });

  it('returns frameworks in order, controls in catalogue order, without repeats', () => {
    const refs = mapFindingToControls({ cwe: [319, 327, 311], ruleId: 'tls.protocol.tls10', scanner: 'edge' });
    const keys = refs.map((r) => `${r.framework}:${r.controlId}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect([...new Set(refs.map((r) => r.framework))]).toEqual(['soc2', 'gdpr', 'iso27001', 'nist-csf', 'cis-v8']);
    expect(ids(refs, 'soc2')).toEqual(['CC6.1', 'CC6.7', 'C1.1']);
    expect(ids(refs, 'cis-v8')).toEqual(['3.10', '3.11', '4.1', '12.6']);
  });

  it('maps hard-coded credentials, vulnerable components, auth, CORS and directory listing by CWE', () => {
    expect(classifyFinding({ cwe: [798] })).toEqual(['hardcoded-credentials']);
    expect(ids(mapFindingToControls({ cwe: [1104] }), 'cis-v8')).toEqual(expect.arrayContaining(['7.4', '16.5']));
    expect(ids(mapFindingToControls({ cwe: [937] }), 'iso27001')).toContain('A.8.8');
    expect(ids(mapFindingToControls({ cwe: [306] }), 'nist-csf')).toEqual(['PR.AA-03']);
    expect(classifyFinding({ cwe: [287] })).toEqual(['authentication']);
    expect(classifyFinding({ cwe: [942] })).toEqual(['cors']);
    expect(classifyFinding({ cwe: [548] })).toEqual(['directory-listing']);
    expect(classifyFinding({ cwe: [200] })).toEqual(['information-exposure']);
    expect(classifyFinding({ cwe: [538] })).toEqual(['information-exposure']);
    expect(classifyFinding({ cwe: [16] })).toEqual(['security-misconfiguration']);
    expect(classifyFinding({ cwe: [693] })).toEqual(['security-misconfiguration']);
  });

  it('uses the longest rule-id prefix, ignoring case', () => {
    expect(classifyFinding({ ruleId: 'tls.cert.expired' })).toEqual(['certificate']);
    expect(classifyFinding({ ruleId: 'TLS.protocol.sslv3' })).toEqual(['weak-transport-crypto']);
    expect(classifyFinding({ ruleId: 'port.3389' })).toEqual(['exposed-service']);
    expect(classifyFinding({ ruleId: 'header.strict-transport-security.missing' })).toEqual(['cleartext-transport']);
    expect(classifyFinding({ ruleId: 'header.x-frame-options.missing' })).toEqual(['security-misconfiguration']);
    expect(classifyFinding({ ruleId: 'container.cve.CVE-2024-3094' })).toEqual(['vulnerable-component']);
    expect(classifyFinding({ ruleId: 'container.cve.os.openssl' })).toEqual(['vulnerable-os-package']);
    expect(ids(mapFindingToControls({ ruleId: 'port.6379' }), 'cis-v8')).toEqual(['4.4', '4.8', '12.2']);
  });

  it('combines CWE and rule classes', () => {
    expect(classifyFinding({ cwe: [79], ruleId: 'container.cve.lodash' }).sort()).toEqual([
      'application-vulnerability',
      'vulnerable-component',
    ]);
  });

  it('falls back to the scanner kind only when nothing else classes the finding', () => {
    expect(classifyFinding({ cwe: [], ruleId: 'something-unknown', scanner: 'port' })).toEqual(['exposed-service']);
    expect(classifyFinding({ cwe: [], ruleId: null, scanner: 'container' })).toEqual(['vulnerable-component']);
    expect(classifyFinding({ cwe: [], ruleId: null, scanner: 'edge' })).toEqual(['weak-transport-crypto']);
    expect(classifyFinding({ cwe: [548], scanner: 'port' })).toEqual(['directory-listing']);
    expect(mapFindingToControls({ cwe: [999999], ruleId: 'zzz', scanner: 'unknown' })).toEqual([]);
    expect(mapFindingToControls({})).toEqual([]);
  });

  it('names only controls that exist in the catalogues and only defined classes', () => {
    expect(unknownMappedControls()).toEqual([]);
    expect(undefinedClassReferences()).toEqual([]);
    expect(new Set(FINDING_CLASSES.map((c) => c.id)).size).toBe(FINDING_CLASSES.length);
    for (const c of FINDING_CLASSES) expect(Object.keys(c.controls).length, c.id).toBeGreaterThan(0);
  });
});
