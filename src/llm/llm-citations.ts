// Citation checking for streamed (prose) answers, shared by every helper that streams one (the
// result-file explainer, the CMMC evidence review, the mesh "ask operations" answer; src/llm/index.ts
// exports it). The prompt numbers each piece of evidence ("F1", "C3", "E12") and asks the model to
// cite them in square brackets. After the answer ended, every cited id must be one the prompt gave;
// an answer that cites anything else invented evidence and is replaced by the offline analysis.
//
// What counts as a citation, inside one pair of square brackets:
//   [E3]            one id
//   [E3, E7] [E3; E7]   a list (comma or semicolon)
//   [E3, 7]         a bare number in a list takes the letters of the id before it (E7)
//   [E1-E3] [E2–E9] [E2 — E9] [E4-6]   a range (hyphen, en or em dash, minus sign): every id from
//                   one end to the other is cited, so a range reaching past the evidence is caught
//   [E1, E3–E5]     lists and ranges mixed
// A range between different letters ([E1-F3]) is not a valid citation and counts as unknown, as
// written. Text in brackets that is not of this form (a Markdown link, "[note]") is not a citation.

const ID = '[A-Z]{1,3}\\d{1,4}';
const DASH = '[-\u2010-\u2015\u2212]';
const ITEM = `(?:${ID}|\\d{1,4})(?:\\s*${DASH}\\s*(?:${ID}|\\d{1,4}))?`;
const BRACKETS = new RegExp(`\\[(${ID}(?:\\s*${DASH}\\s*(?:${ID}|\\d{1,4}))?(?:\\s*[,;]\\s*${ITEM})*)\\]`, 'g');
const ITEM_RE = new RegExp(`^(?:([A-Z]{1,3})?(\\d{1,4}))(?:\\s*${DASH}\\s*(?:([A-Z]{1,3})?(\\d{1,4})))?$`);

/** At most this many ids of one range are listed by citedIds (a range only names ids; this bounds the list). */
const MAX_RANGE_LISTED = 1_000;

type Cite = { kind: 'id'; id: string } | { kind: 'range'; letters: string; from: number; to: number } | { kind: 'invalid'; text: string };

/** The citations of a text, in order, ranges not expanded. */
function citations(text: string): Cite[] {
  const out: Cite[] = [];
  for (const m of text.matchAll(BRACKETS)) {
    let letters = '';
    for (const raw of m[1]!.split(/\s*[,;]\s*/)) {
      const p = ITEM_RE.exec(raw.trim());
      if (!p) {
        out.push({ kind: 'invalid', text: raw.trim() });
        continue;
      }
      const [, l1, n1, l2, n2] = p;
      letters = l1 ?? letters;
      const a = Number(n1);
      if (n2 === undefined) {
        out.push({ kind: 'id', id: `${letters}${a}` });
        continue;
      }
      if (l2 !== undefined && l2 !== letters) {
        out.push({ kind: 'invalid', text: raw.trim().replace(/\s+/g, '') });
        continue;
      }
      const b = Number(n2);
      out.push({ kind: 'range', letters, from: Math.min(a, b), to: Math.max(a, b) });
    }
  }
  return out;
}

/** The evidence ids cited in a text, in order of first appearance; a range gives each id in it (at most 1,000 per range). */
export function citedIds(text: string): string[] {
  const out = new Set<string>();
  for (const c of citations(text)) {
    if (c.kind === 'id') out.add(c.id);
    else if (c.kind === 'invalid') out.add(c.text);
    else for (let n = c.from; n <= c.to && n - c.from < MAX_RANGE_LISTED; n++) out.add(`${c.letters}${n}`);
  }
  return [...out];
}

export type CitationCheck = { ok: true; cited: string[] } | { ok: false; cited: string[]; unknown: string[]; reason: string };

/**
 * Checks that every citation names an allowed evidence id; every id a range spans must exist.
 * `cited` lists the allowed ids cited, `unknown` what was cited that does not exist (for a range,
 * its first few missing ids). `requireCitation`: an answer with no citation at all is refused too
 * (use it when the evidence is not empty and the prompt asked for citations).
 */
export function checkCitations(text: string, allowed: Iterable<string>, opts: { requireCitation?: boolean } = {}): CitationCheck {
  const known = new Set(allowed);
  const cited = new Set<string>();
  const unknown = new Set<string>();
  const see = (id: string) => (known.has(id) ? cited.add(id) : unknown.add(id));
  for (const c of citations(text)) {
    if (c.kind === 'id') see(c.id);
    else if (c.kind === 'invalid') unknown.add(c.text);
    else {
      // Walks the range until a few missing ids are found: bounded by the evidence size, however wide the range.
      let missing = 0;
      for (let n = c.from; n <= c.to && missing < 3; n++) {
        const id = `${c.letters}${n}`;
        see(id);
        if (!known.has(id)) missing += 1;
      }
    }
  }
  const citedList = [...cited];
  const unknownList = [...unknown];
  if (unknownList.length) return { ok: false, cited: citedList, unknown: unknownList, reason: `it cites evidence that does not exist (${unknownList.slice(0, 5).join(', ')})` };
  if (opts.requireCitation && known.size > 0 && citedList.length === 0) return { ok: false, cited: citedList, unknown: [], reason: 'it cites none of the evidence' };
  return { ok: true, cited: citedList };
}
