// Citation checking for streamed (prose) answers. The prompt numbers each piece of evidence
// ("F1", "C3", "E12") and asks the model to cite them in square brackets, e.g. "[F1]" or
// "[C2, C5]". After the answer ended, every cited id must be one the prompt gave; an answer that
// cites anything else invented evidence and is replaced by the offline analysis. Also used by the
// mesh "ask operations" answer (src/llm/index.ts exports it).

const ID = '[A-Z]{1,3}\\d{1,4}';
const BRACKETS = new RegExp(`\\[(${ID}(?:\\s*[,;]\\s*${ID})*)\\]`, 'g');

/** The evidence ids cited in a text, in order of first appearance. */
export function citedIds(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(BRACKETS)) for (const id of m[1]!.split(/\s*[,;]\s*/)) out.add(id);
  return [...out];
}

export type CitationCheck = { ok: true; cited: string[] } | { ok: false; cited: string[]; unknown: string[]; reason: string };

/**
 * Checks that every citation names an allowed evidence id. `requireCitation`: an answer with no
 * citation at all is refused too (use it when the evidence is not empty and the prompt asked for
 * citations).
 */
export function checkCitations(text: string, allowed: Iterable<string>, opts: { requireCitation?: boolean } = {}): CitationCheck {
  const known = new Set(allowed);
  const cited = citedIds(text);
  const unknown = cited.filter((id) => !known.has(id));
  if (unknown.length) return { ok: false, cited, unknown, reason: `it cites evidence that does not exist (${unknown.slice(0, 5).join(', ')})` };
  if (opts.requireCitation && known.size > 0 && cited.length === 0) return { ok: false, cited, unknown: [], reason: 'it cites none of the evidence' };
  return { ok: true, cited };
}
