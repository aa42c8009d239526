// Matching of the offline evidence review: documents split into sentences and clauses, terms
// matched as whole words (a term ending in `*` is a stem: "vulnerabilit*" matches its endings),
// and a term that a negation governs ("we do not use a VPN", "no visitor log", "the firewall is not
// enabled") does not count. Deterministic and plain: an assessor can follow why a sentence counted.

/** Lower-cased word tokens; possessives and apostrophes dropped ("router's" → "router", "don't" → "dont"). */
export function tokens(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/[\u2019']s\b/g, '')
      .replace(/[\u2019']/g, '')
      .match(/[\p{L}\p{N}]+(?:[-.][\p{L}\p{N}]+)*/gu) ?? []
  );
}

/**
 * A term as tokens; `stem` when its last token is a prefix (written with a trailing `*`);
 * `eitherPolarity` (a leading `~`) for a term whose negation is the point ("no FCI on the website").
 */
export interface Term {
  source: string;
  words: string[];
  stem: boolean;
  eitherPolarity: boolean;
}

export function compileTerm(source: string): Term | null {
  const t = source.trim();
  const eitherPolarity = t.startsWith('~');
  const stem = t.endsWith('*');
  const words = tokens(t.replace(/^~/, '').replace(/\*+$/, ''));
  return words.length ? { source: t.replace(/^~/, ''), words, stem, eitherPolarity } : null;
}

/** Words that negate what follows them in the clause. */
const NEGATIONS = new Set([
  'not',
  'never',
  'without',
  'cannot',
  'cant',
  'dont',
  'doesnt',
  'didnt',
  'isnt',
  'arent',
  'wasnt',
  'werent',
  'wont',
  'neither',
  'nor',
  'lack',
  'lacks',
  'lacking',
  'none',
]);
/** "no X" negates X, but not a noun after a preposition ("no FCI on personal devices" still speaks of personal devices). */
const PREPOSITIONS = new Set(['on', 'in', 'to', 'from', 'with', 'at', 'for', 'of', 'by', 'into', 'onto', 'via']);
/** "<term> is not enabled": a negated state after the term. A rule such as "FCI is never posted" stays a rule. */
const COPULAS = new Set(['is', 'are', 'was', 'were', 'has', 'have', 'been', 'be', 'being']);
const STATES = new Set([
  'enabled',
  'configured',
  'used',
  'installed',
  'implemented',
  'in',
  'on',
  'kept',
  'maintained',
  'defined',
  'documented',
  'performed',
  'required',
  'reviewed',
  'monitored',
  'identified',
  'escorted',
  'logged',
  'tracked',
  'updated',
  'patched',
  'scanned',
  'encrypted',
  'changed',
  'locked',
  'limited',
  'restricted',
  'verified',
  'controlled',
  'separated',
  'sanitized',
  'destroyed',
  'wiped',
  'listed',
  'named',
  'approved',
  'yet',
  'available',
  'active',
  'running',
  'set',
]);
const NEGATION_WINDOW = 4;

function negatedAt(words: readonly string[], start: number, end: number): boolean {
  for (let j = start - 1; j >= Math.max(0, start - NEGATION_WINDOW); j--) {
    const w = words[j]!;
    if (w === 'no') {
      if (!words.slice(j + 1, start).some((x) => PREPOSITIONS.has(x))) return true;
    } else if (NEGATIONS.has(w)) return true;
  }
  // "<term> is not enabled", "<term> has never been reviewed", "<term>: none".
  let k = end;
  if (words[k] === 'none') return true;
  while (k < words.length && COPULAS.has(words[k]!)) k++;
  if (k > end && (words[k] === 'not' || words[k] === 'never')) {
    k++;
    while (k < words.length && COPULAS.has(words[k]!)) k++;
    return k >= words.length || STATES.has(words[k]!);
  }
  return false;
}

/** A sentence of a page, with its clauses tokenized. */
export interface Sentence {
  fileName: string;
  page: number;
  text: string;
  clauses: string[][];
}

const MAX_QUOTE = 240;

/** Sentences of a page: split at . ! ? followed by a space, at blank lines and at list items. */
export function sentencesOf(fileName: string, page: number, text: string): Sentence[] {
  const out: Sentence[] = [];
  for (const raw of text.split(/(?<=[.!?])\s+|\n\s*\n|\n(?=\s*(?:[-*\u2022]|\d+[.)])\s)/)) {
    const s = raw.replace(/\s+/g, ' ').trim();
    if (!s) continue;
    const clauses = s
      .split(/[,;:()]|\s[\u2013\u2014-]\s|\b(?:but|however|although|except)\b/i)
      .map(tokens)
      .filter((c) => c.length > 0);
    if (clauses.length)
      out.push({ fileName, page, text: s.length > MAX_QUOTE ? `${s.slice(0, MAX_QUOTE - 1)}…` : s, clauses });
  }
  return out;
}

/** Whether the term occurs in the sentence, whole-word, in a clause where no negation governs it. */
export function termIn(s: Sentence, t: Term): boolean {
  for (const words of s.clauses)
    for (let i = 0; i + t.words.length <= words.length; i++) {
      let ok = true;
      for (let k = 0; k < t.words.length && ok; k++) {
        const w = words[i + k]!;
        const want = t.words[k]!;
        ok = k === t.words.length - 1 && t.stem ? w.startsWith(want) : w === want;
      }
      if (ok && (t.eitherPolarity || !negatedAt(words, i, i + t.words.length))) return true;
    }
  return false;
}

/** The first term of a group found in the sentence (the group is a set of alternatives). */
export const groupHit = (s: Sentence, group: readonly Term[]): Term | undefined => group.find((t) => termIn(s, t));
