import { describe, expect, it } from 'vitest';
import { ATTESTATION_ITEMS, findRequirement, REQUIREMENTS } from './cmmc-catalogue.ts';
import { checkIdsFor, DEVICE_CHECKS, reasonCodesOf, reasonInfo } from './cmmc-checks.ts';
import {
  POLICY_KINDS,
  requiredChecks,
  scoreAll,
  scoreRequirement,
  type Answer,
  type ScoringDevice,
  type ScoringInput,
} from './cmmc-scoring.ts';

const allPass = (os: 'windows' | 'macos') => Object.fromEntries(checkIdsFor(os).map((id) => [id, 'pass' as const]));
const win = (over: Partial<ScoringDevice> = {}): ScoringDevice => ({
  hostname: 'PC-1',
  os: 'windows',
  results: allPass('windows'),
  pending: false,
  ...over,
});
const mac = (over: Partial<ScoringDevice> = {}): ScoringDevice => ({
  hostname: 'mac-1',
  os: 'macos',
  results: allPass('macos'),
  pending: false,
  ...over,
});
const yesToAll = () =>
  new Map<string, { answer: Answer; note: string | null }>(
    ATTESTATION_ITEMS.map((i) => [i.id, { answer: 'yes', note: null }]),
  );
const full = (over: Partial<ScoringInput> = {}): ScoringInput => ({
  devices: [win(), mac()],
  answers: yesToAll(),
  approvedPolicies: new Set(POLICY_KINDS),
  ...over,
});
const req = (id: string) => findRequirement(id)!;

describe('CMMC Level 1 scoring (no partial credit)', () => {
  it('scores 15/15 MET with passing devices, yes to every item and every domain policy approved', () => {
    const s = scoreAll(full());
    expect(s.met).toBe(15);
    expect(s.allMet).toBe(true);
    expect(s.requirements.every((r) => r.status === 'MET' && r.implemented)).toBe(true);
  });

  const cases: {
    name: string;
    id: string;
    input: () => ScoringInput;
    expect: 'MET' | 'NOT_MET' | 'NA';
    why?: (r: ReturnType<typeof scoreRequirement>) => unknown;
  }[] = [
    {
      name: 'one unknown device check',
      id: 'SC.L1-b.1.x',
      input: () =>
        full({ devices: [win({ results: { ...allPass('windows'), 'win.firewall_enabled': 'unknown' } }), mac()] }),
      expect: 'NOT_MET',
      why: (r) => r.failingChecks,
    },
    {
      name: 'one failing device check on one of two devices',
      id: 'SI.L1-b.1.xiii',
      input: () =>
        full({
          devices: [win(), win({ hostname: 'PC-2', results: { ...allPass('windows'), 'win.av_enabled': 'fail' } })],
        }),
      expect: 'NOT_MET',
    },
    {
      name: 'a required check missing from the run counts as unknown',
      id: 'SI.L1-b.1.xiv',
      input: () =>
        full({
          devices: [
            win({
              results: Object.fromEntries(
                Object.entries(allPass('windows')).filter(([k]) => k !== 'win.av_signatures_current'),
              ),
            }),
          ],
        }),
      expect: 'NOT_MET',
    },
    {
      name: 'a pending device (latest run older than 30 days)',
      id: 'AC.L1-b.1.i',
      input: () => full({ devices: [win(), mac({ pending: true })] }),
      expect: 'NOT_MET',
      why: (r) => r.pendingDevices,
    },
    {
      name: 'no device at all for a requirement with device checks',
      id: 'IA.L1-b.1.vi',
      input: () => full({ devices: [] }),
      expect: 'NOT_MET',
      why: (r) => r.needsDeviceRun,
    },
    {
      name: 'no device needed for a requirement without device checks',
      id: 'AC.L1-b.1.iv',
      input: () => full({ devices: [] }),
      expect: 'MET',
    },
    {
      name: 'a failing supporting check (disk encryption) is shown, not required',
      id: 'MP.L1-b.1.vii',
      input: () => full({ devices: [win({ results: { ...allPass('windows'), 'win.disk_encryption': 'fail' } })] }),
      expect: 'MET',
    },
    {
      name: 'one item answered no',
      id: 'PE.L1-b.1.ix',
      input: () => full({ answers: new Map([...yesToAll(), ['pe9.log', { answer: 'no', note: null }]]) }),
      expect: 'NOT_MET',
      why: (r) => r.noItems,
    },
    {
      name: 'one item unanswered',
      id: 'PE.L1-b.1.viii',
      input: () => full({ answers: new Map([...yesToAll()].filter(([k]) => k !== 'pe8.locked')) }),
      expect: 'NOT_MET',
      why: (r) => r.missingItems,
    },
    {
      name: 'one item not applicable with a note counts as met',
      id: 'AC.L1-b.1.iii',
      input: () =>
        full({
          answers: new Map([
            ...yesToAll(),
            ['ac3.verified', { answer: 'not_applicable', note: 'No external systems.' }],
          ]),
        }),
      expect: 'MET',
    },
    {
      name: 'not applicable without a note',
      id: 'AC.L1-b.1.iii',
      input: () =>
        full({ answers: new Map([...yesToAll(), ['ac3.verified', { answer: 'not_applicable', note: ' ' }]]) }),
      expect: 'NOT_MET',
      why: (r) => r.unjustifiedNa,
    },
    {
      name: 'every item not applicable makes the requirement NA (counts as MET)',
      id: 'SC.L1-b.1.xi',
      input: () =>
        full({
          answers: new Map([
            ...yesToAll(),
            ['sc11.public_list', { answer: 'not_applicable', note: 'No public systems.' }],
            ['sc11.separated', { answer: 'not_applicable', note: 'No website.' }],
          ]),
        }),
      expect: 'NA',
    },
    {
      name: 'domain policy still a draft',
      id: 'SI.L1-b.1.xv',
      input: () =>
        full({ approvedPolicies: new Set(POLICY_KINDS.filter((k) => k !== 'system_information_integrity')) }),
      expect: 'NOT_MET',
      why: (r) => r.missingPolicy,
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.expect}`, () => {
      const r = scoreRequirement(req(c.id), c.input());
      expect(r.status).toBe(c.expect);
      expect(r.implemented).toBe(c.expect !== 'NOT_MET');
      if (c.why) expect(c.why(r)).toBeTruthy();
    });
  }

  it('counts NA as MET in the total and one NOT MET requirement blocks 15/15', () => {
    const na = full({
      answers: new Map([
        ...yesToAll(),
        ['sc11.public_list', { answer: 'not_applicable', note: 'n/a' }],
        ['sc11.separated', { answer: 'not_applicable', note: 'n/a' }],
      ]),
    });
    expect(scoreAll(na).met).toBe(15);
    const one = full({ devices: [win({ results: { ...allPass('windows'), 'win.rdp_disabled': 'unknown' } })] });
    const s = scoreAll(one);
    expect(s.met).toBe(14);
    expect(s.allMet).toBe(false);
    expect(s.requirements.find((r) => !r.implemented)!.requirementId).toBe('AC.L1-b.1.iii');
  });

  describe('not applicable items never hide device checks', () => {
    const xivNa = () =>
      new Map([
        ...yesToAll(),
        ['si14.auto_update', { answer: 'not_applicable' as Answer, note: 'We say it does not apply.' }],
      ]);
    it('SI.L1-b.1.xiv with every item N/A while a required Windows AV check fails → NOT MET', () => {
      const r = scoreRequirement(
        req('SI.L1-b.1.xiv'),
        full({
          answers: xivNa(),
          devices: [win({ results: { ...allPass('windows'), 'win.av_signatures_current': 'fail' } })],
        }),
      );
      expect(r.status).toBe('NOT_MET');
      expect(r.implemented).toBe(false);
      expect(r.failingChecks).toEqual([{ hostname: 'PC-1', checkId: 'win.av_signatures_current', result: 'fail' }]);
    });
    it('… and while it is unknown → NOT MET', () => {
      const r = scoreRequirement(
        req('SI.L1-b.1.xiv'),
        full({
          answers: xivNa(),
          devices: [mac(), win({ results: { ...allPass('windows'), 'win.av_signatures_current': 'unknown' } })],
        }),
      );
      expect(r.status).toBe('NOT_MET');
      expect(r.failingChecks.map((f) => f.result)).toEqual(['unknown']);
    });
    it('… and with no device run at all → NOT MET', () => {
      const r = scoreRequirement(req('SI.L1-b.1.xiv'), full({ answers: xivNa(), devices: [] }));
      expect(r.status).toBe('NOT_MET');
      expect(r.needsDeviceRun).toBe(true);
    });
    it('… and with a pending device → NOT MET', () => {
      const r = scoreRequirement(
        req('SI.L1-b.1.xiv'),
        full({ answers: xivNa(), devices: [win(), mac({ pending: true })] }),
      );
      expect(r.status).toBe('NOT_MET');
      expect(r.pendingDevices).toEqual(['mac-1']);
    });
    it('… and with passing devices it is MET (checked devices show it applies), never NA', () => {
      const r = scoreRequirement(req('SI.L1-b.1.xiv'), full({ answers: xivNa() }));
      expect(r.status).toBe('MET');
      expect(r.naJustification).toBeNull();
    });
  });

  describe('third-party anti-malware: scan recency is attested (SI.L1-b.1.xv)', () => {
    const thirdParty = (
      result: 'unknown' | 'fail' = 'unknown',
      reason: string | null = 'third_party_av',
      checkId = 'win.scan_recent',
    ) =>
      win({
        results: { ...allPass('windows'), [checkId]: result },
        ...(reason ? { reasons: { [checkId]: reason } } : {}),
      });
    const withFrequency = (answer: Answer, note: string | null = null) =>
      new Map([...yesToAll(), ['si15.frequency', { answer, note }]]);

    it('unknown with reason third_party_av and si15.frequency answered yes → MET, listed as attested', () => {
      const r = scoreRequirement(req('SI.L1-b.1.xv'), full({ devices: [thirdParty(), mac()] }));
      expect(r.status).toBe('MET');
      expect(r.failingChecks).toEqual([]);
      expect(r.attestedChecks).toEqual([
        { hostname: 'PC-1', checkId: 'win.scan_recent', reason: 'third_party_av', itemId: 'si15.frequency' },
      ]);
    });
    it('a Windows PC with third-party AV reaches 15/15', () => {
      expect(scoreAll(full({ devices: [thirdParty(), mac()] })).met).toBe(15);
    });
    it('si15.frequency answered no → NOT MET, naming the item that would settle it', () => {
      const r = scoreRequirement(req('SI.L1-b.1.xv'), full({ devices: [thirdParty()], answers: withFrequency('no') }));
      expect(r.status).toBe('NOT_MET');
      expect(r.failingChecks).toEqual([
        {
          hostname: 'PC-1',
          checkId: 'win.scan_recent',
          result: 'unknown',
          reason: 'third_party_av',
          attestItem: 'si15.frequency',
        },
      ]);
    });
    it('si15.frequency not applicable (with a note) does not settle it → NOT MET', () => {
      const r = scoreRequirement(
        req('SI.L1-b.1.xv'),
        full({ devices: [thirdParty()], answers: withFrequency('not_applicable', 'n/a') }),
      );
      expect(r.status).toBe('NOT_MET');
      expect(r.attestedChecks).toEqual([]);
    });
    it('si15.frequency unanswered → NOT MET', () => {
      const r = scoreRequirement(
        req('SI.L1-b.1.xv'),
        full({ devices: [thirdParty()], answers: new Map([...yesToAll()].filter(([k]) => k !== 'si15.frequency')) }),
      );
      expect(r.status).toBe('NOT_MET');
      expect(r.failingChecks).toHaveLength(1);
    });
    it('a real fail is never overridden by the attestation (even with the reason) → NOT MET', () => {
      const r = scoreRequirement(req('SI.L1-b.1.xv'), full({ devices: [thirdParty('fail')] }));
      expect(r.status).toBe('NOT_MET');
      expect(r.failingChecks[0]).toMatchObject({ checkId: 'win.scan_recent', result: 'fail' });
    });
    it('an unknown without the reason (Defender unreadable) is not overridden → NOT MET', () => {
      const r = scoreRequirement(req('SI.L1-b.1.xv'), full({ devices: [thirdParty('unknown', null)] }));
      expect(r.status).toBe('NOT_MET');
      expect(r.attestedChecks).toEqual([]);
    });
    it('an unknown reason code is not accepted → NOT MET', () => {
      expect(scoreRequirement(req('SI.L1-b.1.xv'), full({ devices: [thirdParty('unknown', 'made_up')] })).status).toBe(
        'NOT_MET',
      );
    });
    it('the reason settles only the check it is defined for (real-time protection unknown stays NOT MET)', () => {
      const r = scoreRequirement(
        req('SI.L1-b.1.xv'),
        full({ devices: [thirdParty('unknown', 'third_party_av', 'win.realtime_protection')] }),
      );
      expect(r.status).toBe('NOT_MET');
      expect(r.failingChecks[0]).toMatchObject({ checkId: 'win.realtime_protection', result: 'unknown' });
    });
  });

  describe('administrator check: unknown reasons that no attestation settles (AC.L1-b.1.ii)', () => {
    for (const reason of ['admin_groups_unresolved', 'no_signed_in_user']) {
      it(`win.local_admins unknown with ${reason} and every item answered yes → NOT MET, no item named to settle it`, () => {
        const r = scoreRequirement(
          req('AC.L1-b.1.ii'),
          full({
            devices: [
              win({
                results: { ...allPass('windows'), 'win.local_admins': 'unknown' },
                reasons: { 'win.local_admins': reason },
              }),
              mac(),
            ],
          }),
        );
        expect(r.status).toBe('NOT_MET');
        expect(r.attestedChecks).toEqual([]);
        expect(r.failingChecks).toEqual([{ hostname: 'PC-1', checkId: 'win.local_admins', result: 'unknown', reason }]);
        expect(
          scoreAll(
            full({
              devices: [
                win({
                  results: { ...allPass('windows'), 'win.local_admins': 'unknown' },
                  reasons: { 'win.local_admins': reason },
                }),
              ],
            }),
          ).met,
        ).toBe(14);
      });
    }
    it('decision 30: third_party_av on win.scan_recent is the only reason an attestation settles', () => {
      const attestable = Object.values(DEVICE_CHECKS).flatMap((c) =>
        c.attestable ? [`${c.id}:${c.attestable.reason}`] : [],
      );
      expect(attestable).toEqual(['win.scan_recent:third_party_av']);
      expect(reasonCodesOf('win.local_admins')).toEqual(['admin_groups_unresolved', 'no_signed_in_user']);
      expect(reasonInfo('win.local_admins', 'admin_groups_unresolved')).toMatchObject({
        attestItem: null,
        explanation: expect.stringMatching(/cannot be settled by an attestation/),
      });
      expect(reasonInfo('win.local_admins', 'third_party_av')).toBeNull();
      expect(reasonInfo('win.scan_recent', 'admin_groups_unresolved')).toBeNull();
    });
  });

  it('requires only the checks of the device OS and never the supporting ones', () => {
    for (const r of REQUIREMENTS)
      for (const os of ['windows', 'macos'] as const)
        for (const id of requiredChecks(r, os)) expect(id.startsWith(os === 'windows' ? 'win.' : 'mac.')).toBe(true);
    expect(requiredChecks(req('MP.L1-b.1.vii'), 'windows')).toEqual([]);
  });

  describe('device coverage against the Scope', () => {
    const deviceReqs = () =>
      REQUIREMENTS.filter((r) => requiredChecks(r, 'windows').length + requiredChecks(r, 'macos').length > 0);
    it('counts the Scope as the denominator: 2 of 3 is NOT MET with 1 unaccounted, 3 of 3 is MET', () => {
      const short = scoreAll(full({ declaredDevices: 3 }));
      expect(short.met).toBe(15 - deviceReqs().length);
      for (const r of deviceReqs())
        expect(scoreRequirement(r, full({ declaredDevices: 3 })).coverage).toEqual({
          declared: 3,
          covered: 2,
          attested: 0,
          known: 2,
          unaccounted: 1,
        });
      expect(scoreAll(full({ declaredDevices: 3, devices: [win(), mac(), win({ hostname: 'PC-3' })] })).met).toBe(15);
      // Not declared: one covered computer is enough, as before.
      expect(scoreAll(full({ declaredDevices: null, devices: [win()] })).met).toBe(15);
    });
    it('an attestation covers a computer without a current run, never a failing one; a stale one is pending', () => {
      expect(scoreAll(full({ declaredDevices: 3, attestations: [{ hostname: 'Shop PC', current: true }] })).met).toBe(
        15,
      );
      const failing = win({ results: { ...allPass('windows'), 'win.firewall_enabled': 'fail' } });
      const s = scoreAll(
        full({ declaredDevices: 2, devices: [failing, mac()], attestations: [{ hostname: 'pc-1', current: true }] }),
      );
      expect(s.requirements.find((r) => r.requirementId === 'SC.L1-b.1.x')!.status).toBe('NOT_MET');
      // A stale run with a current attestation: covered.
      expect(
        scoreAll(
          full({
            declaredDevices: 2,
            devices: [win({ pending: true }), mac()],
            attestations: [{ hostname: 'PC-1', current: true }],
          }),
        ).coverage,
      ).toMatchObject({ covered: 2, attested: 1, unaccounted: 0 });
      const stale = scoreRequirement(
        req('SC.L1-b.1.x'),
        full({ declaredDevices: 3, attestations: [{ hostname: 'Shop PC', current: false }] }),
      );
      expect(stale).toMatchObject({ status: 'NOT_MET', pendingDevices: ['Shop PC'] });
    });
  });
});
