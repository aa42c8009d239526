// Offline evidence review: a generic, deterministic analyzer. Given extracted documents and a list
// of requirements (id, title, phrases, expected documentation), it finds each requirement's
// phrases in the assessable pages and gives Covered (enough distinct phrases), Partial (some) or
// Missing (none), with the files and pages it found them on, the missing documentation and
// prioritized next steps. Documents are only searched, never obeyed: an instruction inside a
// document ("mark everything Covered") is just text that matches no phrase.
import type { ExtractedDocument } from './llm-extract.ts';
import { OFFLINE_LABEL, type Citation, type EvidenceReview, type RequirementResult, type ReviewRequirement, type Verdict } from './llm-schemas.ts';

export interface PhraseHit {
  fileName: string;
  page: number;
  phrase: string;
}

/** Distinct phrases found for Covered: 3, or all of them when a requirement lists fewer. */
export const COVERED_MIN_PHRASES = 3;

const norm = (s: string) => ` ${s.toLowerCase().replace(/[^\p{L}\p{N}.-]+/gu, ' ').replace(/\s+/g, ' ')} `;

/** Phrase hits per requirement over the assessable pages. */
export function findPhraseHits(docs: readonly ExtractedDocument[], requirements: readonly ReviewRequirement[]): Map<string, PhraseHit[]> {
  const pages = docs.filter((d) => d.assessable).flatMap((d) => d.pages.map((text, i) => ({ fileName: d.fileName, page: i + 1, text: norm(text) })));
  const out = new Map<string, PhraseHit[]>();
  for (const r of requirements) {
    const hits: PhraseHit[] = [];
    for (const phrase of r.phrases) {
      const p = norm(phrase).trim();
      if (!p) continue;
      // Whole words at the start; a phrase ending in a word stem (e.g. "vulnerabilit") matches its endings.
      const needle = ` ${p}`;
      for (const pg of pages) if (pg.text.includes(needle)) hits.push({ fileName: pg.fileName, page: pg.page, phrase });
    }
    out.set(r.id, hits);
  }
  return out;
}

export function citationsOf(hits: readonly PhraseHit[], maxFiles = 5, maxPages = 10): Citation[] {
  const byFile = new Map<string, Set<number>>();
  for (const h of hits) (byFile.get(h.fileName) ?? byFile.set(h.fileName, new Set()).get(h.fileName)!).add(h.page);
  return [...byFile.entries()]
    .sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]))
    .slice(0, maxFiles)
    .map(([fileName, pages]) => ({ fileName, pages: [...pages].sort((a, b) => a - b).slice(0, maxPages) }));
}

export function offlineVerdict(r: ReviewRequirement, hits: readonly PhraseHit[]): Verdict {
  const distinct = new Set(hits.map((h) => h.phrase)).size;
  if (distinct === 0) return 'Missing';
  return distinct >= Math.min(COVERED_MIN_PHRASES, r.phrases.length) ? 'Covered' : 'Partial';
}

export const fileSummary = (d: ExtractedDocument): EvidenceReview['files'][number] => ({
  fileName: d.fileName,
  kind: d.kind,
  size: d.size,
  pageCount: d.pageCount,
  pagesRead: d.assessable ? d.pages.length : 0,
  assessable: d.assessable,
  ...(d.note ? { note: d.note } : {}),
});

/** Missing documentation, next steps and the summary, from per-requirement results (offline and validated model results alike). */
export function completeReview(
  base: Pick<EvidenceReview, 'source' | 'label' | 'fallbackReason'>,
  docs: readonly ExtractedDocument[],
  results: RequirementResult[],
): EvidenceReview {
  const missingDocumentation = results.filter((r) => r.verdict !== 'Covered' && r.missingDocumentation.length).map((r) => ({ requirementId: r.id, items: r.missingDocumentation }));
  const nextSteps: EvidenceReview['nextSteps'] = [];
  const scans = docs.filter((d) => !d.assessable);
  for (const d of scans) nextSteps.push({ priority: 0, requirementId: null, text: `"${d.fileName}" could not be assessed: ${d.note ?? 'it has no text.'} Upload a text version so it counts as evidence.` });
  for (const r of results.filter((x) => x.verdict === 'Missing'))
    nextSteps.push({ priority: 0, requirementId: r.id, text: `${r.id} ${r.title}: no evidence found. Write and upload: ${r.missingDocumentation.join('; ') || 'documentation for this requirement'}.` });
  for (const r of results.filter((x) => x.verdict === 'Partial'))
    nextSteps.push({ priority: 0, requirementId: r.id, text: `${r.id} ${r.title}: evidence is incomplete. Extend ${r.citations.map((c) => `"${c.fileName}"`).join(', ') || 'your documents'} to cover: ${r.missingDocumentation.join('; ') || 'the rest of the requirement'}.` });
  nextSteps.forEach((s, i) => (s.priority = i + 1));
  const count = (v: Verdict) => results.filter((r) => r.verdict === v).length;
  return {
    ...base,
    files: docs.map(fileSummary),
    requirements: results,
    summary: { covered: count('Covered'), partial: count('Partial'), missing: count('Missing') },
    missingDocumentation,
    nextSteps,
  };
}

/** The offline review, labelled "offline analysis". */
export function offlineEvidenceReview(docs: readonly ExtractedDocument[], requirements: readonly ReviewRequirement[], opts: { fallbackReason?: string | null } = {}): EvidenceReview {
  const hits = findPhraseHits(docs, requirements);
  const results: RequirementResult[] = requirements.map((r) => {
    const h = hits.get(r.id) ?? [];
    const verdict = offlineVerdict(r, h);
    const phrases = [...new Set(h.map((x) => x.phrase))];
    return {
      id: r.id,
      title: r.title,
      verdict,
      citations: verdict === 'Missing' ? [] : citationsOf(h),
      rationale: verdict === 'Missing' ? 'None of the key phrases for this requirement appear in the assessable documents.' : `Found ${phrases.length} of ${r.phrases.length} key phrases: ${phrases.slice(0, 8).map((p) => `"${p}"`).join(', ')}.`,
      missingDocumentation: verdict === 'Covered' ? [] : r.documentation,
    };
  });
  return completeReview({ source: 'offline', label: OFFLINE_LABEL, fallbackReason: opts.fallbackReason ?? null }, docs, results);
}
