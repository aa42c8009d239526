import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from './errors.ts';
import { assertCleanInput, findInputProblem, isCleanText, MAX_JSON_DEPTH } from './input-hygiene.ts';

const nest = (levels: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
};

describe('input hygiene: one rule for every piece of caller text', () => {
  it('refuses NUL and unpaired surrogates, keeps everything else a person can type', () => {
    expect(isCleanText('plain, ÜNÏCÖDÉ, 中文, emoji 🛡️, tab\tnewline\n')).toBe(true);
    expect(isCleanText('a\u0000b')).toBe(false);
    expect(isCleanText('\uD800')).toBe(false); // lone high surrogate
    expect(isCleanText('x\uDC00')).toBe(false); // lone low surrogate
    expect(isCleanText('\uDC00\uD800')).toBe(false); // reversed pair
    expect(isCleanText('\uD83D\uDEE1')).toBe(true); // a pair
  });

  it('finds the first bad string or key anywhere, with its path', () => {
    expect(findInputProblem({ a: [{ b: 'ok' }, { c: 'x\u0000' }] })).toEqual({
      code: 'invalid_characters',
      path: 'body.a.1.c',
    });
    expect(findInputProblem({ ['k\u0000']: 1 }, 'query')).toEqual({
      code: 'invalid_characters',
      path: 'query.k\\u0000',
    });
    expect(findInputProblem({ name: '\uD800' })).toEqual({ code: 'invalid_characters', path: 'body.name' });
    expect(findInputProblem('\u0000', 'params.id')).toEqual({ code: 'invalid_characters', path: 'params.id' });
    expect(findInputProblem({ a: 1, b: null, c: true, d: 'fine', e: [1, 'two'] })).toBeNull();
    expect(findInputProblem(undefined)).toBeNull();
  });

  it('allows nesting up to MAX_JSON_DEPTH and refuses one level more, without recursion', () => {
    expect(findInputProblem(nest(MAX_JSON_DEPTH))).toBeNull();
    expect(findInputProblem(nest(MAX_JSON_DEPTH + 1))).toMatchObject({ code: 'json_too_deep' });
    // 100,000 levels: JSON.parse handles it, and so must the check (no stack overflow).
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    expect(findInputProblem(deep)).toMatchObject({ code: 'json_too_deep' });
  });

  it('throws 400 with a stable code and the path in details', () => {
    const err = (() => {
      try {
        assertCleanInput({ data: { title: 'a\u0000' } });
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'invalid_characters', status: 400, details: [{ path: 'body.data.title' }] });
    expect(() => assertCleanInput(nest(40))).toThrow(expect.objectContaining({ code: 'json_too_deep', status: 400 }));
  });

  it('agrees with PostgreSQL-storable text for any string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 24 }), (s) => {
        const storable = !s.includes('\u0000') && Buffer.from(s, 'utf8').toString('utf8') === s;
        expect(isCleanText(s)).toBe(storable);
      }),
    );
  });
});

describe('percent-escapes of URL components', () => {
  it('refuses escapes that do not decode to well-formed UTF-8, keeps the rest', async () => {
    const { hasMalformedEscapes } = await import('./input-hygiene.ts');
    expect(hasMalformedEscapes('q=%ED%A0%80')).toBe(true); // a surrogate, as WTF-8
    expect(hasMalformedEscapes('q=%C0%80')).toBe(true); // overlong NUL
    expect(hasMalformedEscapes('q=%F0%9F')).toBe(true); // cut short
    expect(hasMalformedEscapes('q=%FF')).toBe(true);
    expect(hasMalformedEscapes('q=%F0%9F%9B%A1%EF%B8%8F&x=%C3%BC')).toBe(false);
    expect(hasMalformedEscapes('q=100%&r=%zz')).toBe(false); // a bare % is text
    expect(hasMalformedEscapes('plain=1')).toBe(false);
  });
});
