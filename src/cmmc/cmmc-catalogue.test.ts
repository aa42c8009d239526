import { describe, expect, it } from 'vitest';
import {
  ATTESTATION_ITEMS,
  checksForRequirement,
  findRequirement,
  OBJECTIVES,
  REQUIREMENTS,
} from './cmmc-catalogue.ts';
import { checkIdsFor, DEVICE_CHECKS } from './cmmc-checks.ts';

describe('CMMC Level 1 catalogue', () => {
  it('has the 15 FAR 52.204-21(b)(1) requirements in order, with 2024 ids and v2.0 aliases', () => {
    expect(REQUIREMENTS).toHaveLength(15);
    const romans = ['i', 'ii', 'iii', 'iv', 'v', 'vi', 'vii', 'viii', 'ix', 'x', 'xi', 'xii', 'xiii', 'xiv', 'xv'];
    expect(REQUIREMENTS.map((r) => r.far)).toEqual(romans);
    for (const r of REQUIREMENTS) expect(r.id).toBe(`${r.domain}.L1-b.1.${r.far}`);
    expect(REQUIREMENTS[0]!.id).toBe('AC.L1-b.1.i');
    expect(REQUIREMENTS[14]!.id).toBe('SI.L1-b.1.xv');
    // (ix) was three practices in CMMC 2.0: 15 + 2 = 17 aliases.
    expect(REQUIREMENTS.flatMap((r) => r.aliases)).toHaveLength(17);
    expect(findRequirement('AC.L1-3.1.1')?.id).toBe('AC.L1-b.1.i');
    expect(findRequirement('PE.L1-3.10.4')?.id).toBe('PE.L1-b.1.ix');
    expect(findRequirement('SI.L1-3.14.5')?.id).toBe('SI.L1-b.1.xv');
    expect(findRequirement('XX.L1-3.1.1')).toBeUndefined();
  });

  it('has the 59 assessment objectives with the per-requirement counts of the L1 guide', () => {
    expect(OBJECTIVES).toHaveLength(59);
    expect(REQUIREMENTS.map((r) => r.objectives.length)).toEqual([6, 2, 6, 5, 3, 3, 2, 4, 6, 8, 2, 6, 2, 1, 3]);
    expect(new Set(OBJECTIVES.map((o) => o.id)).size).toBe(59);
    for (const r of REQUIREMENTS)
      expect(r.objectives.map((o) => o.letter)).toEqual('abcdefgh'.slice(0, r.objectives.length).split(''));
  });

  it('maps every objective to at least one device check or attestation item, all of which exist', () => {
    const items = new Set(ATTESTATION_ITEMS.map((i) => i.id));
    expect(items.size).toBe(ATTESTATION_ITEMS.length);
    for (const r of REQUIREMENTS) {
      for (const o of r.objectives) {
        expect(o.checks.length + o.items.length, o.id).toBeGreaterThan(0);
        for (const c of o.checks) expect(DEVICE_CHECKS[c], `${o.id} → ${c}`).toBeDefined();
        // An objective's items belong to its own requirement.
        for (const i of o.items)
          expect(
            r.items.some((x) => x.id === i),
            `${o.id} → ${i}`,
          ).toBe(true);
      }
      // Every item of a requirement evidences at least one of its objectives.
      for (const i of r.items)
        expect(
          r.objectives.some((o) => o.items.includes(i.id)),
          i.id,
        ).toBe(true);
    }
  });

  it('ties every device check to the requirements whose objectives reference it', () => {
    const reqIds = new Set(REQUIREMENTS.map((r) => r.id));
    for (const c of Object.values(DEVICE_CHECKS)) {
      expect(c.requirementIds.length).toBeGreaterThan(0);
      for (const id of c.requirementIds) {
        expect(reqIds.has(id), `${c.id} → ${id}`).toBe(true);
        expect(checksForRequirement(id), `${id} lists ${c.id}`).toContain(c.id);
      }
      for (const field of ['title', 'meaning', 'fix', 'recheck', 'passWhen', 'unknownWhen'] as const)
        expect(c[field].length, `${c.id}.${field}`).toBeGreaterThan(10);
    }
    // Checks cannot evidence iv, viii, ix or xi (no script can read them; docs/cmmc.md).
    for (const id of ['AC.L1-b.1.iv', 'PE.L1-b.1.viii', 'PE.L1-b.1.ix', 'SC.L1-b.1.xi'])
      expect(checksForRequirement(id)).toEqual([]);
    expect(checkIdsFor('windows').length).toBeGreaterThanOrEqual(14);
    expect(checkIdsFor('macos').length).toBeGreaterThanOrEqual(14);
  });
});
