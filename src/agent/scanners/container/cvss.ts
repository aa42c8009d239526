// CVSS v3.0/v3.1 base scores from a vector (FIRST's specification, section 7): advisories often
// carry only the vector, and a severity needs the score.
import type { Severity } from '../../../findings/index.ts';

const AV: Record<string, number> = { N: 0.85, A: 0.62, L: 0.55, P: 0.2 };
const AC: Record<string, number> = { L: 0.77, H: 0.44 };
const UI: Record<string, number> = { N: 0.85, R: 0.62 };
const CIA: Record<string, number> = { H: 0.56, L: 0.22, N: 0 };
// Privileges weigh more when the scope changes.
const PR_UNCHANGED: Record<string, number> = { N: 0.85, L: 0.62, H: 0.27 };
const PR_CHANGED: Record<string, number> = { N: 0.85, L: 0.68, H: 0.5 };

/** v3.1's Roundup: the smallest one-decimal number ≥ x, computed on integers to dodge float noise. */
function roundUp31(x: number): number {
  const i = Math.round(x * 100_000);
  return i % 10_000 === 0 ? i / 100_000 : (Math.floor(i / 10_000) + 1) / 10;
}

const roundUp30 = (x: number) => Math.ceil(x * 10) / 10;

/** The base score of a `CVSS:3.x/AV:…` vector, or null when it is not a complete v3 base vector. */
export function cvss3BaseScore(vector: string): number | null {
  const parts = vector.trim().split('/');
  const version = /^CVSS:3\.([01])$/.exec(parts[0] ?? '');
  if (!version) return null;
  const m = new Map<string, string>();
  for (const p of parts.slice(1)) {
    const [k, v, extra] = p.split(':');
    if (!k || !v || extra !== undefined || m.has(k)) return null;
    m.set(k, v);
  }
  const scope = m.get('S');
  const av = AV[m.get('AV') ?? ''];
  const ac = AC[m.get('AC') ?? ''];
  const pr = (scope === 'C' ? PR_CHANGED : PR_UNCHANGED)[m.get('PR') ?? ''];
  const ui = UI[m.get('UI') ?? ''];
  const c = CIA[m.get('C') ?? ''];
  const i = CIA[m.get('I') ?? ''];
  const a = CIA[m.get('A') ?? ''];
  if (
    (scope !== 'U' && scope !== 'C') ||
    av === undefined ||
    ac === undefined ||
    pr === undefined ||
    ui === undefined ||
    c === undefined ||
    i === undefined ||
    a === undefined
  )
    return null;
  const iss = 1 - (1 - c) * (1 - i) * (1 - a);
  const impact = scope === 'U' ? 6.42 * iss : 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15);
  const exploitability = 8.22 * av * ac * pr * ui;
  if (impact <= 0) return 0;
  const roundUp = version[1] === '1' ? roundUp31 : roundUp30;
  return scope === 'U'
    ? roundUp(Math.min(impact + exploitability, 10))
    : roundUp(Math.min(1.08 * (impact + exploitability), 10));
}

/** CVSS's qualitative rating of a score; "None" (0.0) is informational. */
export function severityOfScore(score: number): Severity {
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'info';
}
