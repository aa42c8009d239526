// The CAGE code rule, shared by the server's validation (cmmc-schemas.ts) and the web app's Scope
// form (src/web/lib/cmmc-api.ts), so both say the same thing. No imports: the web bundle includes
// this file (scripts/build-web.ts hashes it with the bundle's inputs).

/**
 * CAGE code: exactly 5 characters, digits and upper-case letters except I and O (CAGE codes never
 * use those two letters: they read as 1 and 0). Input is trimmed and upper-cased. No rule per
 * position: no published rule gives one, and NATO (NCAGE) codes of foreign suppliers put letters
 * where US codes have digits.
 */
export const CAGE_CODE_RE = /^[0-9A-HJ-NP-Z]{5}$/;
export const CAGE_CODE_MESSAGE =
  'A CAGE code is exactly 5 letters or digits, e.g. 1ABC2 (the letters I and O are never used: type 1 and 0).';

/**
 * What is wrong with a CAGE code, naming it when it is one of the codes saved before I and O were
 * refused (e.g. "1ABO2 uses the letter O: … probably 1AB02."), so Scope and the SPRS confirmation
 * can say which stored code to correct; null for a valid code.
 */
export function cageCodeProblem(code: string): string | null {
  const c = code.trim().toUpperCase();
  if (CAGE_CODE_RE.test(c)) return null;
  if (/^[0-9A-Z]{5}$/.test(c)) {
    const letters = [...new Set(c.match(/[IO]/g) ?? [])].join(' and ');
    return `${c} uses the letter ${letters}: CAGE codes never use the letters I and O (they are the digits 1 and 0), so it is probably ${c.replace(/I/g, '1').replace(/O/g, '0')}.`;
  }
  return CAGE_CODE_MESSAGE;
}
