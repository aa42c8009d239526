// Template regexes are written for Go's RE2 (nuclei), which matches in linear time. Only the
// common ground of RE2 and JavaScript is accepted (no lookarounds, no backreferences), and the
// result runs on V8's linear-time engine, so neither a tenant's template nor a crafted response
// can stall a worker with catastrophic backtracking. Where that engine is missing, nested
// unbounded repetition such as (a+)+ is refused instead. Leading inline flags (?i), (?m), (?s)
// become JavaScript flags.

import v8 from 'node:v8';

export const MAX_REGEX_LENGTH = 1_000;

export type RegexCheck = { ok: true; re: RegExp } | { ok: false; message: string };

const RE2_HINT = '(templates use RE2 syntax)';

// V8 ships a linear-time (automaton) engine for regexps with the `l` flag, RE2's guarantee, but
// only recognises the flag when asked; it must be on before the first such regexp is compiled.
// It lacks the `i` flag and counts above 16, so those are rewritten into equivalent forms.
export const LINEAR_REGEX = (() => {
  try {
    v8.setFlagsFromString('--enable-experimental-regexp-engine');
    // eslint-disable-next-line no-invalid-regexp -- `l` is V8's flag for its linear-time engine
    return new RegExp('a', 'l').flags.includes('l');
  } catch {
    return false;
  }
})();

/** Compiles a template regex, or says in one sentence why it is refused. */
export function compileTemplateRegex(pattern: string): RegexCheck {
  if (pattern.length > MAX_REGEX_LENGTH)
    return {
      ok: false,
      message: `the pattern is ${pattern.length} characters long; at most ${MAX_REGEX_LENGTH} are allowed`,
    };
  let source = pattern;
  let flags = '';
  const lead = /^\(\?([imsU]+)\)/.exec(source);
  if (lead) {
    if (lead[1]!.includes('U')) return { ok: false, message: `the ungreedy flag (?U) is not supported ${RE2_HINT}` };
    flags = [...new Set(lead[1]!)].join('');
    source = source.slice(lead[0].length);
  }
  const problem = unsupportedSyntax(source, !LINEAR_REGEX);
  if (problem) return { ok: false, message: problem };
  source = source.replace(/\(\?P</g, '(?<');
  let re: RegExp;
  try {
    re = new RegExp(source, flags);
  } catch (e) {
    return {
      ok: false,
      message: `invalid regular expression: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`,
    };
  }
  if (!LINEAR_REGEX) return { ok: true, re };
  try {
    return { ok: true, re: new RegExp(linearForm(source, flags.includes('i')), `${flags.replace('i', '')}l`) };
  } catch {
    return {
      ok: false,
      message:
        'the pattern cannot be matched in linear time (nested counted repetition such as (a{20}){20} is too large)',
    };
  }
}

const MAX_COUNT = 16;

function otherCase(c: string): string {
  const u = c.toUpperCase();
  return u === c ? c.toLowerCase() : u;
}

/** A character class with both cases of its ASCII letters and letter ranges. */
function foldClass(cls: string): string {
  const neg = cls.startsWith('[^');
  const body = cls.slice(neg ? 2 : 1, -1);
  let extra = '';
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') {
      i += 1;
      continue;
    }
    const range = /^([A-Za-z])-([A-Za-z])/.exec(body.slice(i));
    if (range && range[1]! <= 'Z' === range[2]! <= 'Z') {
      extra += `${otherCase(range[1]!)}-${otherCase(range[2]!)}`;
      i += 2;
    } else if (/[A-Za-z]/.test(body[i]!) && body[i + 1] !== '-') extra += otherCase(body[i]!);
  }
  return `[${neg ? '^' : ''}${body}${extra}]`;
}

/**
 * The same language for the linear engine: letters folded when case-insensitive, and counts
 * above 16 split into chained groups (X{40} → (?:X){16}(?:X){16}(?:X){8}).
 */
function linearForm(p: string, fold: boolean): string {
  const out: string[] = [];
  const opens: number[] = [];
  let atomStart = -1;
  for (let i = 0; i < p.length;) {
    const c = p[i]!;
    if (c === '\\') {
      const len =
        p[i + 1] === 'x'
          ? 4
          : p[i + 1] === 'u'
            ? p[i + 2] === '{'
              ? p.indexOf('}', i) + 1 - i
              : 6
            : p[i + 1] === 'c'
              ? 3
              : 2;
      atomStart = out.length;
      out.push(p.slice(i, i + len));
      i += len;
    } else if (c === '[') {
      let j = i + 1;
      while (j < p.length && p[j] !== ']') j += p[j] === '\\' ? 2 : 1;
      const cls = p.slice(i, j + 1);
      atomStart = out.length;
      out.push(fold ? foldClass(cls) : cls);
      i = j + 1;
    } else if (c === '(') {
      const head = /^\((?:\?:|\?<[A-Za-z_][A-Za-z0-9_]*>)?/.exec(p.slice(i))![0];
      opens.push(out.length);
      out.push(head);
      i += head.length;
    } else if (c === ')') {
      out.push(')');
      atomStart = opens.pop() ?? 0;
      i += 1;
    } else if (c === '{' && /^\{\d+(?:,\d*)?\}/.test(p.slice(i))) {
      const q = /^\{(\d+)(?:(,)(\d*))?\}(\??)/.exec(p.slice(i))!;
      const min = Number(q[1]);
      const max = q[2] ? (q[3] ? Number(q[3]) : Infinity) : min;
      i += q[0].length;
      if ((min <= MAX_COUNT && (max <= MAX_COUNT || max === Infinity)) || atomStart < 0) {
        out.push(q[0]);
        continue;
      }
      const atom = `(?:${out.splice(atomStart).join('')})`;
      const parts: string[] = [];
      for (let n = min; n > 0; n -= MAX_COUNT) parts.push(`${atom}{${Math.min(n, MAX_COUNT)}}`);
      if (max === Infinity) parts.push(`${atom}*${q[4]}`);
      else for (let n = max - min; n > 0; n -= MAX_COUNT) parts.push(`${atom}{0,${Math.min(n, MAX_COUNT)}}${q[4]}`);
      atomStart = out.length;
      out.push(parts.join(''));
    } else {
      if (c === '|' || c === '^' || c === '$') atomStart = -1;
      else if (c !== '*' && c !== '+' && c !== '?') atomStart = out.length;
      out.push(fold && /[A-Za-z]/.test(c) ? `[${c}${otherCase(c)}]` : c);
      i += 1;
    }
  }
  return out.join('');
}

/** The first construct outside the RE2/JavaScript common ground, or null. */
function unsupportedSyntax(p: string, refuseNesting: boolean): string | null {
  // One entry per open group: whether it holds an unbounded quantifier.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      const n = p[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(n)) return `backreference \\${n} is not supported ${RE2_HINT}`;
      if (!inClass && n === 'k' && p[i + 2] === '<') return `named backreference \\k<…> is not supported ${RE2_HINT}`;
      if (n === 'Q' || n === 'E') return `\\Q…\\E quoting is not supported; escape each character instead`;
      if (n === 'A' || n === 'z') return `\\${n} is not supported; use ^ or $ without the m flag`;
      if (n === 'p' || n === 'P') return `Unicode classes \\${n}{…} are not supported`;
      i += 1;
      continue;
    }
    if (inClass) {
      if (c === '[' && p[i + 1] === ':')
        return `POSIX classes such as [[:alpha:]] are not supported; use an explicit class such as [a-zA-Z]`;
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (p[i + 1] === '^') i += 1;
      if (p[i + 1] === ']')
        return 'a ] right after [ or [^ must be escaped as \\] (RE2 and JavaScript read it differently)';
      continue;
    }
    if (c === '(') {
      if (p.startsWith('(?=', i)) return `lookahead (?=…) is not supported ${RE2_HINT}`;
      if (p.startsWith('(?!', i)) return `negative lookahead (?!…) is not supported ${RE2_HINT}`;
      if (p.startsWith('(?<=', i)) return `lookbehind (?<=…) is not supported ${RE2_HINT}`;
      if (p.startsWith('(?<!', i)) return `negative lookbehind (?<!…) is not supported ${RE2_HINT}`;
      if (p[i + 1] === '?' && !p.startsWith('(?:', i) && !p.startsWith('(?P<', i) && !p.startsWith('(?<', i)) {
        return /^\(\?[imsU]+[):]/.test(p.slice(i))
          ? 'inline flags are only supported at the very start of the pattern, e.g. (?i)abc'
          : `unsupported group syntax ${p.slice(i, i + 4)}…`;
      }
      groups.push(false);
      continue;
    }
    if (c === ')') {
      if (!groups.length) return 'unbalanced parenthesis )';
      const innerUnbounded = groups.pop()!;
      if (refuseNesting && innerUnbounded && isUnboundedQuantifierAt(p, i + 1))
        return `nested repetition such as (a+)+ is not allowed: it can take exponential time on crafted input`;
      if (groups.length && innerUnbounded) groups[groups.length - 1] = true;
      continue;
    }
    if (isUnboundedQuantifierAt(p, i) && groups.length) groups[groups.length - 1] = true;
  }
  return null;
}

function isUnboundedQuantifierAt(p: string, i: number): boolean {
  const c = p[i];
  if (c === '*' || c === '+') return true;
  return c === '{' && /^\{\d+,\}/.test(p.slice(i, i + 12));
}

const runtimeCache = new Map<string, RegExp | null>();
/** A regex built at run time (a DSL argument from a variable): same rules, cached; null when refused. */
export function runtimeRegex(pattern: string): RegExp | null {
  let re = runtimeCache.get(pattern);
  if (re !== undefined) return re;
  const c = compileTemplateRegex(pattern);
  re = c.ok ? c.re : null;
  if (runtimeCache.size > 1_000) runtimeCache.clear();
  runtimeCache.set(pattern, re);
  return re;
}
