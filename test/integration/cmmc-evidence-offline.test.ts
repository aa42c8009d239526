// The offline evidence review of the 15 CMMC Level 1 requirements: Covered only when each
// assessment objective is addressed by a sentence (whole words, negation-aware), with the sentence
// quoted; near-miss texts must not be Covered. No database: the review stores nothing.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REQUIREMENTS } from '../../src/cmmc/index.ts';
import { CMMC_L1_REQUIREMENTS, extractDocuments, offlineEvidenceReview } from '../../src/llm/index.ts';

const SSP = readFileSync(fileURLToPath(new URL('../fixtures/evidence/level1-ssp.md', import.meta.url)), 'utf8');

async function review(text: string, fileName = 'policy.md') {
  const docs = await extractDocuments([{ fileName, data: Buffer.from(text) }]);
  const r = offlineEvidenceReview(docs, CMMC_L1_REQUIREMENTS);
  return { r, by: Object.fromEntries(r.requirements.map((x) => [x.id, x])) };
}

/** The SSP with one line replaced (it must be there). */
function sspWith(line: string, replacement: string): string {
  expect(SSP).toContain(line);
  return SSP.replace(line, replacement);
}

describe('offline evidence review per assessment objective', () => {
  it('gives every requirement its catalogue objectives', () => {
    for (const r of REQUIREMENTS) {
      const rr = CMMC_L1_REQUIREMENTS.find((x) => x.id === r.id)!;
      expect(rr.objectives!.map((o) => o.id)).toEqual(r.objectives.map((o) => o.id));
    }
  });

  it('says Covered for a plan that addresses every objective, quoting the sentence found for each', async () => {
    const { r, by } = await review(SSP, 'ssp.md');
    expect(r.summary).toEqual({ covered: 15, partial: 0, missing: 0 });
    expect(by['PE.L1-b.1.ix']!.rationale).toContain(
      '[a] Visitors are escorted. Found: "- Visitors are escorted at all times." (ssp.md, page 1).',
    );
    expect(by['SC.L1-b.1.x']!.citations).toEqual([{ fileName: 'ssp.md', pages: [1] }]);
    expect(by['SC.L1-b.1.x']!.missingDocumentation).toEqual([]);
  });

  it("does not mark SC.L1-b.1.x covered for a sentence about a router's firewall and a VPN", async () => {
    const { r, by } = await review(
      "Our router's firewall blocks unwanted traffic and everyone connects through a VPN.",
    );
    const sc = by['SC.L1-b.1.x']!;
    expect(sc.verdict).toBe('Partial');
    expect(sc.rationale).toMatch(/^1 of 8 assessment objectives addressed\. \[e\] /);
    expect(sc.rationale).toContain('Not found: [a] The external system boundary is defined.');
    expect(sc.missingDocumentation.length).toBeGreaterThan(0);
    expect(r.summary.covered).toBe(0);
  });

  it('reads "scans" and "scan" as different words: a website scan with real-time alerts is not malware scanning', async () => {
    // The former prefix match counted "scan" and "scans" in "scans", plus "real-time": three phrases, Covered.
    const { by } = await review(
      'Our vendor scans the website weekly and sends real-time alerts. The scanner report is filed.',
    );
    expect(by['SI.L1-b.1.xv']!.verdict).toBe('Missing');
  });

  it('does not count negated statements', async () => {
    const { by } = await review(
      'We do not have a firewall at the internet boundary. No VPN is used. The router is not configured. ' +
        'Visitors are not escorted. We have no visitor log.',
    );
    expect(by['SC.L1-b.1.x']!.verdict).toBe('Missing');
    expect(by['PE.L1-b.1.ix']!.verdict).toBe('Missing');
    // The same plan with one objective negated is only Partial, and names that objective.
    const { by: by2 } = await review(sspWith('- Visitors are escorted at all times.', '- Visitors are not escorted.'));
    expect(by2['PE.L1-b.1.ix']!.verdict).toBe('Partial');
    expect(by2['PE.L1-b.1.ix']!.rationale).toContain('Not found: [a] Visitors are escorted.');
  });

  it('says Partial when one objective of a requirement is missing from an otherwise complete plan', async () => {
    const { by } = await review(
      sspWith('- Real-time protection scans files as they are downloaded, opened or executed.', ''),
    );
    expect(by['SI.L1-b.1.xv']!.verdict).toBe('Partial');
    expect(by['SI.L1-b.1.xv']!.rationale).toMatch(/^2 of 3 assessment objectives addressed\./);
    expect(by['SI.L1-b.1.xv']!.rationale).toContain('Not found: [c] Real-time malicious code scans');
    expect(by['SI.L1-b.1.xiv']!.verdict).toBe('Covered');
  });

  it('keeps a negation-is-the-point objective: "no FCI" on the website still addresses the review for FCI', async () => {
    const { by } = await review('The public website is reviewed quarterly to make sure it holds no FCI.');
    expect(by['AC.L1-b.1.iv']!.rationale).toContain('[d] Content on publicly accessible systems is reviewed');
  });
});
