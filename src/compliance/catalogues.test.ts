// The bundled catalogues: counts that the official documents fix, id formats, uniqueness, and the
// licence rule (no descriptions where the framework text is licensed).
import { describe, expect, it } from 'vitest';
import { CATALOGUE_LIST, CATALOGUES, findControl } from './catalogues.ts';

const ID_FORMATS = {
  soc2: /^(CC[1-9]|A1|C1|PI1|P[1-8])\.\d$/,
  gdpr: /^Art\. \d{1,2}$/,
  iso27001: /^A\.[5-8]\.\d{1,2}$/,
  'nist-csf': /^(GV|ID|PR|DE|RS|RC)\.[A-Z]{2}-\d{2}$/,
  'cis-v8': /^\d{1,2}\.\d{1,2}$/,
} as const;

describe('framework catalogues', () => {
  it('ISO/IEC 27001:2022 Annex A has 93 controls: 37 organizational, 8 people, 14 physical, 34 technological', () => {
    const iso = CATALOGUES.iso27001;
    expect(iso.controls).toHaveLength(93);
    const perTheme = Object.fromEntries(
      iso.groups.map((g) => [g.id, iso.controls.filter((c) => c.groupId === g.id).length]),
    );
    expect(perTheme).toEqual({ 'A.5': 37, 'A.6': 8, 'A.7': 14, 'A.8': 34 });
    expect(findControl('iso27001', 'A.8.24')?.title).toBe('Use of cryptography');
    expect(findControl('iso27001', 'A.5.23')?.title).toBe('Information security for use of cloud services');
    expect(findControl('iso27001', 'A.8.34')?.title).toBe('Protection of information systems during audit testing');
  });

  it('NIST CSF 2.0 has 6 functions, 22 categories and 106 subcategories', () => {
    const csf = CATALOGUES['nist-csf'];
    expect(csf.groups.filter((g) => g.kind === 'function').map((g) => g.id)).toEqual([
      'GV',
      'ID',
      'PR',
      'DE',
      'RS',
      'RC',
    ]);
    const categories = csf.groups.filter((g) => g.kind === 'category');
    expect(categories).toHaveLength(22);
    expect(csf.controls).toHaveLength(106);
    const perFunction = Object.fromEntries(
      ['GV', 'ID', 'PR', 'DE', 'RS', 'RC'].map((f) => [f, csf.controls.filter((c) => c.id.startsWith(`${f}.`)).length]),
    );
    expect(perFunction).toEqual({ GV: 31, ID: 21, PR: 22, DE: 11, RS: 13, RC: 8 });
    // Withdrawn CSF 1.1 numbers are absent, the renumbered ones present.
    for (const gone of ['ID.AM-06', 'PR.DS-03', 'DE.CM-04', 'RS.AN-01', 'PR.AC-01'])
      expect(findControl('nist-csf', gone), gone).toBeUndefined();
    for (const kept of ['ID.AM-07', 'PR.DS-10', 'PR.DS-11', 'DE.CM-09', 'DE.AE-08', 'RS.AN-08', 'RC.CO-04'])
      expect(findControl('nist-csf', kept), kept).toBeDefined();
    expect(findControl('nist-csf', 'PR.DS-02')?.description).toBe(
      'The confidentiality, integrity, and availability of data-in-transit are protected',
    );
    // Every category's subcategories sit under a category of the right function.
    for (const c of csf.controls) expect(c.id.startsWith(`${c.groupId}-`)).toBe(true);
  });

  it('CIS Controls v8 has 18 controls and 153 safeguards with cumulative implementation groups (56 / 130 / 153)', () => {
    const cis = CATALOGUES['cis-v8'];
    expect(cis.groups).toHaveLength(18);
    expect(cis.controls).toHaveLength(153);
    const ig = (n: number) => cis.controls.filter((c) => (c.implementationGroup ?? 9) <= n).length;
    expect([ig(1), ig(2), ig(3)]).toEqual([56, 130, 153]);
    expect(findControl('cis-v8', '3.10')?.title).toBe('Encrypt Sensitive Data in Transit');
    expect(findControl('cis-v8', '18.5')).toMatchObject({
      title: 'Perform Periodic Internal Penetration Tests',
      implementationGroup: 3,
    });
    expect(cis.controls.every((c) => c.description === undefined)).toBe(true);
  });

  it('SOC 2 has the 2017 criteria CC1.1–CC9.2, A1, C1, PI1 and P1–P8 (61 criteria)', () => {
    const soc2 = CATALOGUES.soc2;
    const count = (prefix: string) => soc2.controls.filter((c) => c.id.startsWith(prefix)).length;
    expect({
      CC: count('CC'),
      A: count('A1.'),
      C: count('C1.'),
      PI: count('PI1.'),
      P: soc2.controls.filter((c) => /^P\d\./.test(c.id)).length,
    }).toEqual({ CC: 33, A: 3, C: 2, PI: 5, P: 18 });
    expect(soc2.controls.map((c) => c.id)).toEqual(
      expect.arrayContaining(['CC1.1', 'CC6.8', 'CC7.5', 'CC8.1', 'CC9.2', 'P6.7', 'P8.1']),
    );
    expect(soc2.controls.every((c) => c.description === undefined)).toBe(true);
  });

  it('GDPR carries the security and processing obligations with their official titles', () => {
    for (const [id, title] of [
      ['Art. 5', 'Principles relating to processing of personal data'],
      ['Art. 25', 'Data protection by design and by default'],
      ['Art. 28', 'Processor'],
      ['Art. 30', 'Records of processing activities'],
      ['Art. 32', 'Security of processing'],
      ['Art. 33', 'Notification of a personal data breach to the supervisory authority'],
      ['Art. 34', 'Communication of a personal data breach to the data subject'],
      ['Art. 35', 'Data protection impact assessment'],
      ['Art. 37', 'Designation of the data protection officer'],
      ['Art. 44', 'General principle for transfers'],
    ] as const)
      expect(findControl('gdpr', id)?.title, id).toBe(title);
  });

  it.each(CATALOGUE_LIST.map((c) => [c.id, c] as const))(
    '%s: ids are unique and well formed, groups resolve, version is set',
    (id, catalogue) => {
      const ids = catalogue.controls.map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const c of ids) expect(c, c).toMatch(ID_FORMATS[id]);
      const groupIds = new Set(catalogue.groups.map((g) => g.id));
      expect(groupIds.size).toBe(catalogue.groups.length);
      for (const c of catalogue.controls) {
        expect(groupIds.has(c.groupId), c.id).toBe(true);
        expect(c.title.trim().length, c.id).toBeGreaterThan(2);
      }
      for (const g of catalogue.groups) if (g.parentId) expect(groupIds.has(g.parentId), g.id).toBe(true);
      expect(catalogue.catalogueVersion).toMatch(/^[a-z0-9-]+[.-]\S+$/);
      if (!catalogue.licence.textIncluded)
        expect(catalogue.controls.every((c) => c.description === undefined)).toBe(true);
    },
  );
});
