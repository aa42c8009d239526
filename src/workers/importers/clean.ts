// Values from untrusted reports that PostgreSQL cannot store, or that would cost unbounded work,
// are cleaned instead of failing the import: NUL characters (text and jsonb refuse U+0000), lone
// UTF-16 surrogates (jsonb refuses them; XML character references and JSON escapes produce them),
// other C0 controls in keys, and structures nested deeper than MAX_NESTING. Every cleaning is
// counted, so the import's result page can say what was changed.

/** Nesting kept in structured evidence; deeper parts are replaced by a marker. */
export const MAX_NESTING = 16;
export const DROPPED_DEEP = '[nested too deep: dropped by Rampart]';

export type CleanKind = 'nul' | 'surrogate' | 'deep' | 'control';

export const CLEAN_LABELS: Record<CleanKind, string> = {
  nul: 'NUL characters replaced by U+FFFD',
  surrogate: 'unpaired UTF-16 surrogates replaced by U+FFFD',
  deep: `structures nested deeper than ${MAX_NESTING} levels dropped`,
  control: 'control characters removed from names',
};

/** Counts of what was cleaned, with the first few places where it happened. */
export class CleanLog {
  readonly counts: Record<CleanKind, number> = { nul: 0, surrogate: 0, deep: 0, control: 0 };
  readonly samples: { kind: CleanKind; where: string }[] = [];
  where = '';

  note(kind: CleanKind): void {
    this.counts[kind] += 1;
    if (this.samples.length < 20 && !this.samples.some((s) => s.kind === kind && s.where === this.where)) {
      this.samples.push({ kind, where: this.where });
    }
  }

  get total(): number {
    return this.counts.nul + this.counts.surrogate + this.counts.deep + this.counts.control;
  }
}

// eslint-disable-next-line no-control-regex
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** The string with NUL and unpaired surrogates replaced by U+FFFD (counted in `log`). */
export function cleanString(s: string, log?: CleanLog): string {
  if (!SUSPECT.test(s)) return s;
  let out = '';
  let nul = 0;
  let lone = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) {
      out += '\uFFFD';
      nul += 1;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i += 1;
      } else {
        out += '\uFFFD';
        lone += 1;
      }
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      out += '\uFFFD';
      lone += 1;
    } else {
      out += s[i]!;
    }
  }
  if (log) {
    if (nul) log.note('nul');
    if (lone) log.note('surrogate');
  }
  return out;
}

/** A name (an object key): cleaned like text, and without control characters. */
function cleanKey(k: string, log?: CleanLog): string {
  const s = cleanString(k, log);
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(s)) return s;
  log?.note('control');
  return s.replace(CONTROL, '');
}

/**
 * A JSON-like value fit for jsonb: strings and keys cleaned, nesting cut at `maxDepth` (the cut
 * part becomes a marker string), non-finite numbers and other non-JSON values dropped.
 */
export function cleanValue(v: unknown, log?: CleanLog, depth = 0, maxDepth = MAX_NESTING): unknown {
  if (typeof v === 'string') return cleanString(v, log);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v !== 'object') return null;
  if (depth >= maxDepth) {
    log?.note('deep');
    return DROPPED_DEEP;
  }
  if (Array.isArray(v)) return v.map((x) => cleanValue(x, log, depth + 1, maxDepth));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[cleanKey(k, log)] = cleanValue(x, log, depth + 1, maxDepth);
  return out;
}

/**
 * Text safe to store and show as an error message: no control characters but tab and newline,
 * no unpaired surrogates, at most `max` characters. Parser messages can quote the input.
 */
export function safeMessage(s: string, max = 1_000): string {
  // eslint-disable-next-line no-control-regex
  const t = cleanString(s).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\uFFFD]/g, '?');
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}
