// Offline evidence review: a generic, deterministic analyzer. Given extracted documents and a list
// of requirements (id, title, phrases, objectives, expected documentation) it reads the assessable
// pages sentence by sentence (llm-evidence-match.ts: whole words, negation-aware). A requirement
// with assessment objectives is Covered only when a sentence addresses each objective (one term of
// every group of the objective in one sentence), Partial when some are, Missing when none; the
// rationale quotes the sentence found per objective and names those not found. A requirement
// without objectives (a caller's own list) is judged on its phrases: Covered with 3 distinct ones
// (all when fewer are listed), Partial with some. Documents are only searched, never obeyed: an
// instruction inside a document ("mark everything Covered") is just text that matches no phrase.
import type { ExtractedDocument } from './llm-extract.ts';
import { compileTerm, groupHit, sentencesOf, termIn, type Sentence, type Term } from './llm-evidence-match.ts';
import {
  OFFLINE_LABEL,
  type Citation,
  type EvidenceReview,
  type RequirementResult,
  type ReviewRequirement,
  type Verdict,
} from './llm-schemas.ts';

export interface PhraseHit {
  fileName: string;
  page: number;
  phrase: string;
}

/** Distinct phrases found for Covered (requirements without objectives): 3, or all of them when fewer are listed. */
export const COVERED_MIN_PHRASES = 3;

const compile = (list: readonly string[]): Term[] => list.map(compileTerm).filter((t): t is Term => t !== null);

function sentencesOfDocs(docs: readonly ExtractedDocument[]): Sentence[] {
  return docs
    .filter((d) => d.assessable)
    .flatMap((d) => d.pages.flatMap((text, i) => sentencesOf(d.fileName, i + 1, text)));
}

/** Phrase hits per requirement (its phrases and its objectives' terms), one per phrase and page. */
export function findPhraseHits(
  docs: readonly ExtractedDocument[],
  requirements: readonly ReviewRequirement[],
  sentences: readonly Sentence[] = sentencesOfDocs(docs),
): Map<string, PhraseHit[]> {
  const out = new Map<string, PhraseHit[]>();
  for (const r of requirements) {
    const all = [...r.phrases, ...(r.objectives ?? []).flatMap((o) => o.terms.flat())];
    const terms = compile([...new Set(all)]);
    const seen = new Set<string>();
    const hits: PhraseHit[] = [];
    for (const s of sentences)
      for (const t of terms) {
        const key = `${t.source}\u0000${s.fileName}\u0000${s.page}`;
        if (seen.has(key) || !termIn(s, t)) continue;
        seen.add(key);
        hits.push({ fileName: s.fileName, page: s.page, phrase: t.source });
      }
    out.set(r.id, hits);
  }
  return out;
}

/** The first sentence that addresses an objective: a term of each of its groups, none negated. */
export interface ObjectiveMatch {
  id: string;
  text: string;
  sentence: Sentence | null;
}

export function matchObjectives(r: ReviewRequirement, sentences: readonly Sentence[]): ObjectiveMatch[] {
  return (r.objectives ?? []).map((o) => {
    const groups = o.terms.map(compile);
    const sentence = sentences.find((s) => groups.every((g) => groupHit(s, g) !== undefined)) ?? null;
    return { id: o.id, text: o.text, sentence };
  });
}

export function citationsOf(hits: readonly PhraseHit[], maxFiles = 5, maxPages = 10): Citation[] {
  const byFile = new Map<string, Set<number>>();
  for (const h of hits) (byFile.get(h.fileName) ?? byFile.set(h.fileName, new Set()).get(h.fileName)!).add(h.page);
  return [...byFile.entries()]
    .sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]))
    .slice(0, maxFiles)
    .map(([fileName, pages]) => ({ fileName, pages: [...pages].sort((a, b) => a - b).slice(0, maxPages) }));
}

/** The verdict of a requirement without objectives, from its phrase hits. */
export function offlineVerdict(r: ReviewRequirement, hits: readonly PhraseHit[]): Verdict {
  const distinct = new Set(hits.map((h) => h.phrase)).size;
  if (distinct === 0) return 'Missing';
  return distinct >= Math.min(COVERED_MIN_PHRASES, r.phrases.length) ? 'Covered' : 'Partial';
}

/** The verdict from objectives: Covered only when every one is addressed. */
export function objectiveVerdict(matches: readonly ObjectiveMatch[]): Verdict {
  const found = matches.filter((m) => m.sentence).length;
  return found === 0 ? 'Missing' : found === matches.length ? 'Covered' : 'Partial';
}

const quote = (s: Sentence) => `"${s.text}" (${s.fileName}, page ${s.page})`;
const letter = (id: string) => /\[([^\]]+)\]$/.exec(id)?.[1] ?? id;

function objectiveRationale(matches: readonly ObjectiveMatch[]): string {
  const found = matches.filter((m) => m.sentence);
  const missing = matches.filter((m) => !m.sentence);
  if (!found.length)
    return `No sentence addresses any of the ${matches.length} assessment objectives of this requirement.`;
  const parts = [`${found.length} of ${matches.length} assessment objectives addressed.`];
  for (const m of found) parts.push(`[${letter(m.id)}] ${m.text} Found: ${quote(m.sentence!)}.`);
  if (missing.length) parts.push(`Not found: ${missing.map((m) => `[${letter(m.id)}] ${m.text}`).join(' ')}`);
  return parts.join(' ');
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
  const missingDocumentation = results
    .filter((r) => r.verdict !== 'Covered' && r.missingDocumentation.length)
    .map((r) => ({ requirementId: r.id, items: r.missingDocumentation }));
  const nextSteps: EvidenceReview['nextSteps'] = [];
  const scans = docs.filter((d) => !d.assessable);
  for (const d of scans)
    nextSteps.push({
      priority: 0,
      requirementId: null,
      text: `"${d.fileName}" could not be assessed: ${d.note ?? 'it has no text.'} Upload a text version so it counts as evidence.`,
    });
  for (const r of results.filter((x) => x.verdict === 'Missing'))
    nextSteps.push({
      priority: 0,
      requirementId: r.id,
      text: `${r.id} ${r.title}: no evidence found. Write and upload: ${r.missingDocumentation.join('; ') || 'documentation for this requirement'}.`,
    });
  for (const r of results.filter((x) => x.verdict === 'Partial'))
    nextSteps.push({
      priority: 0,
      requirementId: r.id,
      text: `${r.id} ${r.title}: evidence is incomplete. Extend ${r.citations.map((c) => `"${c.fileName}"`).join(', ') || 'your documents'} to cover: ${r.missingDocumentation.join('; ') || 'the rest of the requirement'}.`,
    });
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
export function offlineEvidenceReview(
  docs: readonly ExtractedDocument[],
  requirements: readonly ReviewRequirement[],
  opts: { fallbackReason?: string | null } = {},
): EvidenceReview {
  const sentences = sentencesOfDocs(docs);
  const hits = findPhraseHits(docs, requirements, sentences);
  const results: RequirementResult[] = requirements.map((r) => {
    if (r.objectives?.length) {
      const matches = matchObjectives(r, sentences);
      const verdict = objectiveVerdict(matches);
      const cited = matches.flatMap((m) =>
        m.sentence ? [{ fileName: m.sentence.fileName, page: m.sentence.page, phrase: m.id }] : [],
      );
      return {
        id: r.id,
        title: r.title,
        verdict,
        citations: citationsOf(cited),
        rationale: objectiveRationale(matches),
        missingDocumentation: verdict === 'Covered' ? [] : r.documentation,
      };
    }
    const h = hits.get(r.id) ?? [];
    const verdict = offlineVerdict(r, h);
    const phrases = [...new Set(h.map((x) => x.phrase))];
    return {
      id: r.id,
      title: r.title,
      verdict,
      citations: verdict === 'Missing' ? [] : citationsOf(h),
      rationale:
        verdict === 'Missing'
          ? 'None of the key phrases for this requirement appear in the assessable documents.'
          : `Found ${phrases.length} of ${r.phrases.length} key phrases: ${phrases
              .slice(0, 8)
              .map((p) => `"${p}"`)
              .join(', ')}.`,
      missingDocumentation: verdict === 'Covered' ? [] : r.documentation,
    };
  });
  return completeReview(
    { source: 'offline', label: OFFLINE_LABEL, fallbackReason: opts.fallbackReason ?? null },
    docs,
    results,
  );
}
