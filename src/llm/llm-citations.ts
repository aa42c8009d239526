// Citation checking for streamed (prose) answers, shared by every helper that streams one (the
// result-file explainer, the device-check explainer, the staff mesh "ask operations" answer;
// src/llm/index.ts exports it). The prompt numbers each piece of evidence ("F1", "C3", "E12") and asks the model to
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
//
// Only bracket groups that start with one of the evidence's letter prefixes are citations: with
// evidence E1…E40, "[E3]" and "[E2-E99]" are, but "[P95]", "[S3]" or "[TLS13]" (a percentile, a
// storage class, a protocol version the model wrote in brackets) are ordinary text. The prefixes
// are the letters of the allowed ids, or given (`prefixes`) when the evidence may be empty.

const ID = '[A-Z]{1,3}\\d{1,4}';
const DASH = '[-\u2010-\u2015\u2212]';
const ITEM = `(?:${ID}|\\d{1,4})(?:\\s*${DASH}\\s*(?:${ID}|\\d{1,4}))?`;
const BRACKETS = new RegExp(`\\[(${ID}(?:\\s*${DASH}\\s*(?:${ID}|\\d{1,4}))?(?:\\s*[,;]\\s*${ITEM})*)\\]`, 'g');
const LETTERS = /^[A-Z]{1,3}/;
const ITEM_RE = new RegExp(`^(?:([A-Z]{1,3})?(\\d{1,4}))(?:\\s*${DASH}\\s*(?:([A-Z]{1,3})?(\\d{1,4})))?$`);

type Cite =
  | { kind: 'id'; id: string }
  | { kind: 'range'; letters: string; from: number; to: number }
  | { kind: 'invalid'; text: string };

/** The citations of a text, in order, ranges not expanded: the bracket groups that start with one of `prefixes`. */
function citations(text: string, prefixes: ReadonlySet<string>): Cite[] {
  const out: Cite[] = [];
  for (const m of text.matchAll(BRACKETS)) {
    if (!prefixes.has(LETTERS.exec(m[1]!)![0])) continue;
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

export type CitationCheck =
  { ok: true; cited: string[] } | { ok: false; cited: string[]; unknown: string[]; reason: string };

/**
 * Checks that every citation names an allowed evidence id; every id a range spans must exist.
 * `cited` lists the allowed ids cited (in order of first appearance), `unknown` what was cited
 * that does not exist (for a range, its first few missing ids). `prefixes`: the letters evidence
 * ids start with (default: those of `allowed`; give them when `allowed` may be empty, so that
 * "[F1]" against no evidence is still caught). `requireCitation`: an answer with no citation at
 * all is refused too (use it when the evidence is not empty and the prompt asked for citations).
 */
export function checkCitations(
  text: string,
  allowed: Iterable<string>,
  opts: { requireCitation?: boolean; prefixes?: readonly string[] } = {},
): CitationCheck {
  const known = new Set(allowed);
  const prefixes = new Set(
    opts.prefixes ?? [...known].map((id) => LETTERS.exec(id)?.[0]).filter((l): l is string => l !== undefined),
  );
  const cited = new Set<string>();
  const unknown = new Set<string>();
  const see = (id: string) => (known.has(id) ? cited.add(id) : unknown.add(id));
  for (const c of citations(text, prefixes)) {
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
  if (unknownList.length)
    return {
      ok: false,
      cited: citedList,
      unknown: unknownList,
      reason: `it cites evidence that does not exist (${unknownList.slice(0, 5).join(', ')})`,
    };
  if (opts.requireCitation && known.size > 0 && citedList.length === 0)
    return { ok: false, cited: citedList, unknown: [], reason: 'it cites none of the evidence' };
  return { ok: true, cited: citedList };
}
