// One rule for every piece of text a caller sends (body, query string, path parameters, multipart
// fields, mesh and worker payloads): no NUL character and no unpaired UTF-16 surrogate, and JSON
// nested at most MAX_JSON_DEPTH levels. PostgreSQL cannot store either character in text or
// jsonb, and nothing a person types needs them; deep nesting costs stack in every recursive
// consumer (serialisers, jsonb). Refused with 400 `invalid_characters` / `json_too_deep` at the
// edge, before any route logic, instead of a 500 from deep inside.
import { AppError } from './errors.ts';

/** Objects and arrays nested deeper than this are refused. */
export const MAX_JSON_DEPTH = 32;

export type InputProblem = { code: 'invalid_characters' | 'json_too_deep'; path: string };

/** True when `s` holds no NUL and no unpaired surrogate (it can be stored and encoded as UTF-8). */
export function isCleanText(s: string): boolean {
  return !s.includes('\u0000') && s.isWellFormed();
}

/** NUL and surrogates of a key written as \uXXXX, so a path in a message is printable. */
const escapeBad = (k: string): string =>
  k.replaceAll('\u0000', '\\u0000').replace(/[\uD800-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

/** A dotted path for messages (`body.data.items.3.name`), offending characters escaped. */
function pathOf(parents: number[], keys: (string | number)[], at: number): string {
  const parts: string[] = [];
  for (let i = at; ; i = parents[i]!) {
    const k = keys[i]!;
    parts.push(typeof k === 'number' ? String(k) : isCleanText(k) ? k : escapeBad(k));
    if (i === 0) break;
  }
  return parts.reverse().join('.');
}

/**
 * True when a URL component's percent-escapes do not decode to well-formed UTF-8 (a lone surrogate
 * written as `%ED%A0%80`, an overlong `%C0%80`, a cut sequence). Query parsers keep such escapes as
 * literal text; they are refused like the characters they try to smuggle. A `%` not followed by two
 * hex digits is ordinary text.
 */
export function hasMalformedEscapes(component: string): boolean {
  if (!component.includes('%')) return false;
  try {
    decodeURIComponent(component.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    return false;
  } catch {
    return true;
  }
}

/**
 * The first problem in a parsed value (strings, object keys, nesting), or null. Iterative, so a
 * value nested thousands of levels deep costs no stack; stops at the first problem.
 */
export function findInputProblem(value: unknown, root = 'body', maxDepth = MAX_JSON_DEPTH): InputProblem | null {
  if (typeof value === 'string') return isCleanText(value) ? null : { code: 'invalid_characters', path: root };
  if (value === null || typeof value !== 'object') return null;
  // Node n: its value, depth (the root object is 1), parent and key, for the path of a problem.
  const values: object[] = [value];
  const depths: number[] = [1];
  const parents: number[] = [0];
  const keys: (string | number)[] = [root];
  const stack: number[] = [0];
  while (stack.length > 0) {
    const i = stack.pop()!;
    const depth = depths[i]!;
    const visit = (key: string | number, child: unknown): InputProblem | null => {
      const bad = (typeof key === 'string' && !isCleanText(key)) || (typeof child === 'string' && !isCleanText(child));
      const nested = child !== null && typeof child === 'object';
      if (!bad && !nested) return null;
      values.push(nested ? child : values[i]!);
      depths.push(depth + 1);
      parents.push(i);
      keys.push(key);
      const n = values.length - 1;
      if (bad) return { code: 'invalid_characters', path: pathOf(parents, keys, n) };
      if (depth + 1 > maxDepth) return { code: 'json_too_deep', path: pathOf(parents, keys, n) };
      stack.push(n);
      return null;
    };
    const v = values[i]!;
    if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++) {
        const p = visit(k, v[k]);
        if (p) return p;
      }
    } else {
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        const p = visit(k, (v as Record<string, unknown>)[k]);
        if (p) return p;
      }
    }
  }
  return null;
}

export function inputProblemError(p: InputProblem): AppError {
  const details = [
    {
      path: p.path,
      message:
        p.code === 'json_too_deep'
          ? `Nested more than ${MAX_JSON_DEPTH} levels deep.`
          : 'Contains a NUL character or an unpaired surrogate.',
    },
  ];
  return p.code === 'json_too_deep'
    ? new AppError('json_too_deep', `The JSON is nested more than ${MAX_JSON_DEPTH} levels deep.`, { details })
    : new AppError('invalid_characters', 'Text may not contain NUL characters (U+0000) or unpaired surrogates.', {
        details,
      });
}

/** Throws 400 `invalid_characters` / `json_too_deep` for the first problem in `value`. */
export function assertCleanInput(value: unknown, root = 'body'): void {
  const p = findInputProblem(value, root);
  if (p) throw inputProblemError(p);
}

/**
 * The same rule for one part of a multipart body: its field name, a text field's value, a file's
 * name. Routes that read multipart bodies call it for every part, fields they ignore included.
 */
export function assertCleanPart(part: {
  type: 'field' | 'file';
  fieldname: string;
  value?: unknown;
  filename?: string;
}): void {
  if (!isCleanText(part.fieldname)) throw inputProblemError({ code: 'invalid_characters', path: 'fields' });
  if (part.type === 'field') assertCleanInput(part.value, `fields.${part.fieldname}`);
  else if (typeof part.filename === 'string' && !isCleanText(part.filename))
    throw inputProblemError({ code: 'invalid_characters', path: `fields.${part.fieldname}.filename` });
}
