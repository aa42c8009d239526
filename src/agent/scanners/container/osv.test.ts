// Version ordering per ecosystem (known answers, including the tricky ones), CVSS v3 base scores of
// published vectors, OSV range semantics, ecosystem and name matching, severity, and importing an
// OSV dump into the indexed database.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import {
  advisorySeverity,
  compareApk,
  compareDpkg,
  comparePep440,
  compareRpm,
  compareSemver,
  cveIds,
  cvss3BaseScore,
  ecosystemMatches,
  evaluateRange,
  importOsvDump,
  matchAdvisory,
  openOsvDb,
  OsvDbError,
  osvRecordSchema,
  rpmvercmp,
  severityOfScore,
  type OsvRecord,
  type VersionCompare,
} from './index.ts';

const SAMPLE = join(import.meta.dirname, 'sample-osv');
const work = mkdtempSync(join(tmpdir(), 'rampart-osv-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Asserts a < b (and the reverse) for each pair, and equality for `same`. */
function ordered(cmp: VersionCompare, less: [string, string][], same: [string, string][] = []) {
  for (const [a, b] of less) {
    expect(cmp(a, b), `${a} < ${b}`).toBeLessThan(0);
    expect(cmp(b, a), `${b} > ${a}`).toBeGreaterThan(0);
  }
  for (const [a, b] of same) expect(cmp(a, b), `${a} == ${b}`).toBe(0);
}

describe('version ordering', () => {
  it('dpkg: epoch, upstream, revision, ~ before everything', () => {
    ordered(
      compareDpkg,
      [
        ['2.0', '1:1.0'],
        ['1.0~rc1', '1.0'],
        ['1.0~~', '1.0~'],
        ['1.0~', '1.0'],
        ['1.0', '1.0a'],
        ['1.0a', '1.0+'],
        ['1.0-1', '1.0-2'],
        ['1.9', '1.10'],
        ['3.0.11-1~deb12u1', '3.0.11-1~deb12u2'],
        ['3.0.11-1~deb12u2', '3.0.11-1'],
        ['2.36-9', '2.36-9+deb12u3'],
        ['1.0', '1.0+b1'],
        ['1:1.2.13.dfsg-1', '1:1.2.13.dfsg-1+deb12u1'],
        ['1.2.13.dfsg-1', '1:0.1'],
        ['0.9', '0.10~beta'],
      ],
      [
        ['0:1.0', '1.0'],
        ['1.001', '1.1'],
        ['1.0', '1.0-0'],
      ],
    );
    expect(compareDpkg('', '1.0')).toBeNull();
    expect(compareDpkg('x:1.0', '1.0')).toBeNull();
  });

  it('apk: digits, letters, pre/post suffixes, revisions', () => {
    ordered(
      compareApk,
      [
        ['1.2.3-r1', '1.2.3-r10'],
        ['1.2.3-r9', '1.2.3-r10'],
        ['1.0_rc1', '1.0'],
        ['1.0_alpha', '1.0_beta'],
        ['1.0_beta', '1.0_pre'],
        ['1.0_pre', '1.0_rc'],
        ['1.0_rc2', '1.0'],
        ['1.0', '1.0_cvs'],
        ['1.0_cvs', '1.0_svn'],
        ['1.0_git', '1.0_hg'],
        ['1.0_hg', '1.0_p1'],
        ['1.0_p1', '1.0_p2'],
        ['1.0', '1.0a'],
        ['1.0a', '1.0b'],
        ['1.0', '1.0.1'],
        ['1.01', '1.1'],
        ['1.0', '1.0-r0'],
        ['1.99.99-r99', '2.0'],
        ['1.2.4_git20230717-r4', '1.2.4_git20230717-r5'],
        ['1.2.4-r2', '1.2.4_git20230717-r4'],
        ['3.1.4-r5', '3.1.4-r6'],
      ],
      [
        ['1.2.3-r1', '1.2.3-r1'],
        ['1.0_p01', '1.0_p1'],
      ],
    );
    expect(compareApk('abc', '1.0')).toBeNull();
    expect(compareApk('1.0_bogus', '1.0_rc1')).toBeNull();
  });

  it('rpm: rpmvercmp and EVR', () => {
    const less: [string, string][] = [
      ['1.0', '2.0'],
      ['2.0', '2.0.1'],
      ['2.0.1', '2.0.1a'],
      ['5.5p1', '5.5p2'],
      ['5.5p1', '5.5p10'],
      ['10xyz', '10.1xyz'],
      ['xyz10', 'xyz10.1'],
      ['1.0~rc1', '1.0'],
      ['1.0~rc1', '1.0~rc2'],
      ['1.0~rc1~git123', '1.0~rc1'],
      ['1.0', '1.0^'],
      ['1.0^git1', '1.0^git2'],
      ['1.0^git1', '1.01'],
      ['1.0^20160101', '1.0.1'],
      ['1.0~rc1', '1.0~rc1^git1'],
      ['2a', '2.0'],
      ['1.0a', '1.0aa'],
      ['6.0', '6.0.rc1'],
    ];
    for (const [a, b] of less) {
      expect(rpmvercmp(a, b), `${a} < ${b}`).toBe(-1);
      expect(rpmvercmp(b, a), `${b} > ${a}`).toBe(1);
    }
    expect(rpmvercmp('1.0010', '1.10')).toBe(0);
    ordered(compareRpm, [
      ['2.0-1', '1:1.0-1'],
      ['3.0.7-24.el9', '3.0.7-25.el9'],
      ['1:3.0.7-24.el9', '1:3.0.7-25.el9'],
    ]);
    expect(compareRpm('3.0.7-24.el9', '3.0.7')).toBe(0);
  });

  it('semver (npm): prereleases before the release', () => {
    ordered(compareSemver, [
      ['1.0.0-alpha', '1.0.0'],
      ['1.0.0-alpha', '1.0.0-alpha.1'],
      ['1.0.0-alpha.1', '1.0.0-beta'],
      ['1.0.0-beta', '1.0.0-rc.1'],
      ['1.0.0-rc.1', '1.0.0'],
      ['4.17.20', '4.17.21'],
      ['1.9.0', '1.10.0'],
    ]);
    expect(compareSemver('1.0.0+build.1', '1.0.0')).toBe(0);
    expect(compareSemver('not-a-version', '1.0.0')).toBeNull();
  });

  it('PEP 440 (PyPI): dev < a < rc < final < post, epochs, local versions', () => {
    ordered(
      comparePep440,
      [
        ['1.0a1', '1.0'],
        ['1.0', '1.0.post1'],
        ['1.0rc1', '1.0'],
        ['1.0.dev1', '1.0a1'],
        ['1.0a1', '1.0b1'],
        ['2.0', '1!0.5'],
        ['1.0', '1.0+local.1'],
        ['2.30.0', '2.31.0'],
      ],
      [
        ['1.0', '1.0.0'],
        ['1!1.0', '1!1.0.0'],
      ],
    );
    expect(comparePep440('not a version', '1.0')).toBeNull();
  });
});

describe('CVSS v3 base scores', () => {
  it('scores published vectors', () => {
    const known: [string, number][] = [
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10.0],
      ['CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H', 7.2],
      ['CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:C/C:H/I:N/A:N', 6.1],
      ['CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.8],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1],
      ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N', 5.9],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L', 5.3],
      ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
      ['CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 1.6],
      ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:L/I:L/A:N', 6.4],
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0],
      // Temporal metrics after the base ones do not change the base score.
      ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:U/RL:O', 9.8],
    ];
    for (const [v, score] of known) expect(cvss3BaseScore(v), v).toBe(score);
    for (const bad of [
      'AV:N/AC:L/Au:N/C:P/I:P/A:P',
      'CVSS:3.1/AV:N/AC:L',
      'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N',
      'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    ])
      expect(cvss3BaseScore(bad), bad).toBeNull();
    expect([0, 0.1, 3.9, 4, 6.9, 7, 8.9, 9, 10].map(severityOfScore)).toEqual([
      'info',
      'low',
      'low',
      'medium',
      'medium',
      'high',
      'high',
      'critical',
      'critical',
    ]);
  });
});

const rec = (r: Partial<OsvRecord> & { affected: OsvRecord['affected'] }): OsvRecord =>
  osvRecordSchema.parse({ id: 'TEST-1', ...r });
const npmRange = (events: Record<string, string>[], extra: Record<string, unknown> = {}) =>
  rec({ affected: [{ package: { ecosystem: 'npm', name: 'pkg' }, ranges: [{ type: 'SEMVER', events }], ...extra }] });
const npmPkg = (version: string) => ({ ecosystem: 'npm', name: 'pkg', version });

describe('OSV evaluation', () => {
  it('introduced 0 / fixed', () => {
    const r = npmRange([{ introduced: '0' }, { fixed: '1.5.0' }]);
    expect(matchAdvisory(r, npmPkg('1.4.9'))).toMatchObject({ fixed: '1.5.0' });
    expect(matchAdvisory(r, npmPkg('0.0.1'))).not.toBeNull();
    expect(matchAdvisory(r, npmPkg('1.5.0'))).toBeNull();
    expect(matchAdvisory(r, npmPkg('1.5.0-rc.1'))).not.toBeNull();
  });

  it('last_affected includes the version named, and gives no fixed version', () => {
    const r = npmRange([{ introduced: '1.0.0' }, { last_affected: '1.2.0' }]);
    expect(matchAdvisory(r, npmPkg('0.9.0'))).toBeNull();
    const m = matchAdvisory(r, npmPkg('1.2.0'));
    expect(m).not.toBeNull();
    expect(m!.fixed).toBeUndefined();
    expect(matchAdvisory(r, npmPkg('1.2.1'))).toBeNull();
  });

  it('limit bounds the range from above; * is no bound', () => {
    const r = npmRange([{ introduced: '0' }, { limit: '2.0.0' }]);
    expect(matchAdvisory(r, npmPkg('1.9.9'))).not.toBeNull();
    expect(matchAdvisory(r, npmPkg('2.0.0'))).toBeNull();
    expect(matchAdvisory(r, npmPkg('3.0.0'))).toBeNull();
    expect(matchAdvisory(npmRange([{ introduced: '1.0.0' }, { limit: '*' }]), npmPkg('99.0.0'))).not.toBeNull();
  });

  it('several introduced/fixed pairs in one range; the lowest fix above the version', () => {
    const r = npmRange([{ fixed: '2.1.0' }, { introduced: '2.0.0' }, { introduced: '0' }, { fixed: '1.0.0' }]);
    expect(matchAdvisory(r, npmPkg('0.5.0'))?.fixed).toBe('1.0.0');
    expect(matchAdvisory(r, npmPkg('1.5.0'))).toBeNull();
    expect(matchAdvisory(r, npmPkg('2.0.5'))?.fixed).toBe('2.1.0');
    expect(matchAdvisory(r, npmPkg('3.0.0'))).toBeNull();
  });

  it('the explicit versions list, and GIT ranges ignored', () => {
    const listed = rec({
      affected: [
        {
          package: { ecosystem: 'npm', name: 'pkg' },
          versions: ['1.0.0', '1.0.1'],
          ranges: [{ type: 'GIT', repo: 'https://example.test/r.git', events: [{ introduced: 'abc' }] }],
        },
      ],
    });
    expect(matchAdvisory(listed, npmPkg('1.0.1'))).not.toBeNull();
    expect(matchAdvisory(listed, npmPkg('1.0.2'))).toBeNull();
    const gitOnly = rec({
      affected: [
        {
          package: { ecosystem: 'npm', name: 'pkg' },
          ranges: [{ type: 'GIT', repo: 'https://example.test/r.git', events: [{ introduced: '0' }] }],
        },
      ],
    });
    expect(matchAdvisory(gitOnly, npmPkg('1.0.0'))).toBeNull();
  });

  it('ECOSYSTEM ranges use the ecosystem order: dpkg epochs and ~, PEP 440 prereleases', () => {
    const deb = rec({
      affected: [
        {
          package: { ecosystem: 'Debian:12', name: 'zlib' },
          ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '1:1.2.13.dfsg-2' }] }],
        },
      ],
    });
    expect(matchAdvisory(deb, { ecosystem: 'Debian:12', name: 'zlib', version: '1.3-1' })).not.toBeNull();
    expect(
      matchAdvisory(deb, { ecosystem: 'Debian:12', name: 'zlib', version: '1:1.2.13.dfsg-2~bpo1' }),
    ).not.toBeNull();
    expect(matchAdvisory(deb, { ecosystem: 'Debian:12', name: 'zlib', version: '1:1.2.13.dfsg-2' })).toBeNull();
    const py = rec({
      affected: [
        {
          package: { ecosystem: 'PyPI', name: 'Requests' },
          ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '2.3.0' }, { fixed: '2.31.0' }] }],
        },
      ],
    });
    expect(matchAdvisory(py, { ecosystem: 'PyPI', name: 'requests', version: '2.31.0rc1' })?.fixed).toBe('2.31.0');
    expect(matchAdvisory(py, { ecosystem: 'PyPI', name: 'requests', version: '2.31.0.post1' })).toBeNull();
    expect(matchAdvisory(py, { ecosystem: 'PyPI', name: 'requests', version: '2.2.9' })).toBeNull();
  });

  it('evaluateRange refuses versions the ecosystem cannot order', () => {
    expect(evaluateRange([{ introduced: '0' }], 'junk version', compareSemver)).toBeNull();
  });

  it('matches ecosystems with and without a release, and names per ecosystem', () => {
    expect(ecosystemMatches('Debian:12', 'Debian:12')).toBe(true);
    expect(ecosystemMatches('Debian', 'Debian:12')).toBe(true);
    expect(ecosystemMatches('Debian:11', 'Debian:12')).toBe(false);
    expect(ecosystemMatches('Debian:12', 'Debian')).toBe(false);
    expect(ecosystemMatches('Ubuntu:22.04:LTS', 'Ubuntu:22.04')).toBe(true);
    expect(ecosystemMatches('Ubuntu:Pro:18.04:LTS', 'Ubuntu:18.04')).toBe(false);
    expect(ecosystemMatches('Alpine:v3.19', 'Alpine:v3.19')).toBe(true);
    expect(ecosystemMatches('Alpine:v3.18', 'Alpine:v3.19')).toBe(false);
    expect(ecosystemMatches('npm', 'PyPI')).toBe(false);
    const py = rec({ affected: [{ package: { ecosystem: 'PyPI', name: 'Typing.Extensions' }, versions: ['4.9.0'] }] });
    expect(matchAdvisory(py, { ecosystem: 'PyPI', name: 'typing-extensions', version: '4.9.0' })).not.toBeNull();
    const npmCase = rec({ affected: [{ package: { ecosystem: 'npm', name: 'Lodash' }, versions: ['4.17.20'] }] });
    expect(matchAdvisory(npmCase, { ecosystem: 'npm', name: 'lodash', version: '4.17.20' })).toBeNull();
    const withdrawn = rec({
      withdrawn: '2024-01-01T00:00:00Z',
      affected: [{ package: { ecosystem: 'npm', name: 'pkg' }, versions: ['1.0.0'] }],
    });
    expect(matchAdvisory(withdrawn, npmPkg('1.0.0'))).toBeNull();
  });

  it('severity: a curated label first, then the CVSS v3 score, else medium; CVE ids from aliases and upstream', () => {
    const v = 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L';
    expect(
      advisorySeverity(
        rec({ affected: [], severity: [{ type: 'CVSS_V3', score: v }], database_specific: { severity: 'HIGH' } }),
      ),
    ).toEqual({ severity: 'high', cvss: { score: 5.3, vector: v } });
    expect(advisorySeverity(rec({ affected: [], severity: [{ type: 'CVSS_V3', score: v }] }))).toEqual({
      severity: 'medium',
      cvss: { score: 5.3, vector: v },
    });
    expect(
      advisorySeverity(
        rec({ affected: [], severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }] }),
      ).severity,
    ).toBe('critical');
    expect(advisorySeverity(rec({ affected: [], severity: [{ type: 'Ubuntu', score: 'negligible' }] })).severity).toBe(
      'info',
    );
    expect(advisorySeverity(rec({ affected: [], database_specific: { severity: 'MODERATE' } }))).toEqual({
      severity: 'medium',
    });
    expect(advisorySeverity(rec({ affected: [], severity: [{ type: 'CVSS_V4', score: 'CVSS:4.0/AV:N' }] }))).toEqual({
      severity: 'medium',
    });
    expect(advisorySeverity(rec({ affected: [] }))).toEqual({ severity: 'medium' });
    const debian = (urgency: string) => {
      const r = rec({
        affected: [{ package: { ecosystem: 'Debian:12', name: 'x' }, ecosystem_specific: { urgency } }],
      });
      return advisorySeverity(r, r.affected![0]).severity;
    };
    expect(['unimportant', 'low**', 'high', 'not yet assigned'].map(debian)).toEqual(['low', 'low', 'high', 'medium']);
    expect(cveIds(rec({ id: 'DEBIAN-CVE-2023-4911', affected: [] }))).toEqual(['CVE-2023-4911']);
    expect(
      cveIds(
        rec({
          id: 'GHSA-35jh-r3h4-6jhm',
          aliases: ['CVE-2021-23337', 'PYSEC-1'],
          upstream: ['cve-2020-12345'],
          affected: [],
        }),
      ),
    ).toEqual(['CVE-2020-12345', 'CVE-2021-23337']);
  });
});

describe('OSV database', () => {
  it('imports a dump (directory of JSON, JSON lines, arrays) into an indexed database', async () => {
    const src = join(work, 'dump');
    mkdirSync(join(src, 'npm'), { recursive: true });
    const r = (id: string, modified: string, name: string, fixed: string) => ({
      id,
      modified,
      affected: [
        { package: { ecosystem: 'npm', name }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed }] }] },
      ],
    });
    writeFileSync(
      join(src, 'npm', 'GHSA-aaaa.json'),
      JSON.stringify(r('GHSA-aaaa', '2024-01-01T00:00:00Z', 'left-pad', '1.3.0')),
    );
    writeFileSync(
      join(src, 'more.jsonl'),
      [
        JSON.stringify(r('GHSA-bbbb', '2024-01-01T00:00:00Z', 'express', '4.0.0')),
        '{ not json',
        JSON.stringify({
          id: 'BAD-1',
          affected: [
            {
              package: { ecosystem: 'npm', name: 'x' },
              ranges: [{ type: 'SEMVER', events: [{ introduced: '0', fixed: '1' }] }],
            },
          ],
        }),
        JSON.stringify({
          ...r('GHSA-gone', '2024-01-01T00:00:00Z', 'express', '1.0.0'),
          withdrawn: '2024-02-01T00:00:00Z',
        }),
        // An older and a newer copy of GHSA-aaaa: the newest modified wins.
        JSON.stringify(r('GHSA-aaaa', '2023-01-01T00:00:00Z', 'left-pad', '0.0.1')),
        JSON.stringify(r('GHSA-aaaa', '2025-01-01T00:00:00Z', 'left-pad', '1.3.1')),
        '',
      ].join('\n'),
    );
    writeFileSync(join(src, 'README.txt'), 'not a record');
    const db = join(work, 'osv.db');
    const summary = await importOsvDump(src, db);
    expect(summary).toMatchObject({ imported: 2, invalid: 2, withdrawn: 1, superseded: 2, ecosystems: { npm: 2 } });
    expect(summary.invalidExamples).toHaveLength(2);
    const opened = await openOsvDb(db);
    expect(opened.info).toMatchObject({ format: 'rampart-osv/1', advisories: 2 });
    const leftPad = opened.lookup('npm', 'left-pad');
    expect(leftPad.map((x) => x.id)).toEqual(['GHSA-aaaa']);
    expect(matchAdvisory(leftPad[0]!, { ecosystem: 'npm', name: 'left-pad', version: '1.3.0' })?.fixed).toBe('1.3.1');
    expect(opened.lookup('npm', 'express').map((x) => x.id)).toEqual(['GHSA-bbbb']);
    expect(opened.lookup('npm', 'nothing')).toEqual([]);
    opened.close();
  });

  it('imports the bundled sample and finds the same advisories as reading it as JSON', async () => {
    const db = join(work, 'sample.db');
    const summary = await importOsvDump(SAMPLE, db);
    expect(summary).toMatchObject({ imported: 9, invalid: 0, ecosystems: { debian: 4, alpine: 1, npm: 2, pypi: 2 } });
    const sqlite = await openOsvDb(db);
    const json = await openOsvDb(SAMPLE);
    for (const [eco, name] of [
      ['debian', 'openssl'],
      ['pypi', 'requests'],
      ['npm', 'lodash'],
      ['alpine', 'musl'],
    ] as const) {
      expect(
        sqlite
          .lookup(eco, name)
          .map((r) => r.id)
          .sort(),
        `${eco}/${name}`,
      ).toEqual(
        json
          .lookup(eco, name)
          .map((r) => r.id)
          .sort(),
      );
    }
    expect(
      sqlite
        .lookup('debian', 'openssl')
        .map((r) => r.id)
        .sort(),
    ).toEqual(['DSA-5532-1', 'RAMPART-SAMPLE-0001']);
    sqlite.close();
  });

  it('refuses a SQLite file that is not an OSV database, and invalid JSON sets', async () => {
    const other = join(work, 'other.db');
    const d = new DatabaseSync(other);
    d.exec('create table t (x)');
    d.close();
    await expect(openOsvDb(other)).rejects.toBeInstanceOf(OsvDbError);
    const bad = join(work, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify([
        { id: 'X', affected: [{ package: { ecosystem: 'npm', name: 'x' }, ranges: [{ type: 'SEMVER', events: [] }] }] },
      ]),
    );
    await expect(openOsvDb(bad)).rejects.toThrow(/did not validate/);
    await expect(openOsvDb(join(work, 'missing.db'))).rejects.toBeInstanceOf(OsvDbError);
  });
});
