// The DSL of `dsl` matchers: syntax, types, functions, and hostile input (deep nesting, huge
// expressions, long strings, unknown functions) refused at validation, never thrown at run time.
import { describe, expect, it } from 'vitest';
import { DSL_LIMITS, DslError, evaluateDsl, parseDsl, type DslLookup } from './dsl.ts';

const HEAD =
  'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Powered-By: PHP/8.1\r\nStrict-Transport-Security: max-age=1';

function ctx(body = '<html>Hello World</html>', status = 200): DslLookup {
  const vars: Record<string, string | number> = {
    content_type: 'text/html',
    x_powered_by: 'PHP/8.1',
    strict_transport_security: 'max-age=1',
    status_code: status,
    content_length: body.length,
    body,
    header: HEAD,
    all_headers: HEAD,
    response: `${HEAD}\r\n\r\n${body}`,
  };
  return (n) => vars[n];
}

const run = (expr: string, c = ctx()) => evaluateDsl(parseDsl(expr), c);

describe('dsl', () => {
  it.each([
    ['status_code == 200', true],
    ['status_code != 200', false],
    // govaluate compares values with their types: a number is not the text "200".
    ['status_code == "200"', false],
    ['status_code >= 200 && status_code < 300', true],
    ['status_code > 200 || status_code <= 199', false],
    ['!(status_code == 404)', true],
    ['!!true', true],
    ['true && false || true', true],
    ['true || false && false', true],
    ['(true || false) && false', false],
    ['content_length == 24', true],
    ['len(body) > 10', true],
    ['contains(body, "Hello")', true],
    ["contains(body, 'hello')", false],
    ["contains(tolower(body), 'hello')", true],
    ["toupper('ab') == 'AB'", true],
    ["contains_any(body, 'zzz', 'World')", true],
    ["contains_all(body, 'Hello', 'zzz')", false],
    ["starts_with(body, '<html>')", true],
    ["ends_with(body, 'nope', '</html>')", true],
    ["regex('(?i)^x-powered-by: php', header)", false],
    ["regex('(?im)^x-powered-by: php', header)", true],
    ["regex('W[a-z]+d', body)", true],
    ["x_powered_by == 'PHP/8.1'", true],
    // Names are case-sensitive, as in nuclei.
    ["X_Powered_By == 'PHP/8.1'", false],
    // A name the answer lacks is an error, so the expression is false (nuclei's govaluate).
    ['len(missing_header) == 0', false],
    ["content_type == 'text/html' && contains(response, 'World')", true],
    ['"a\\"b" == \'a"b\'', true],
    ['1.5 < 2', true],
    ["'abc' < 2", false],
  ])('%s → %s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });

  it.each([
    ["md5('abc') == '900150983cd24fb0d6963f7d28e17f72'", true],
    ["sha256('abc') == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'", true],
    ["base64('hello') == 'aGVsbG8=' && base64_decode('aGVsbG8=') == 'hello'", true],
    ["hex_encode('AB') == '4142' && hex_decode('4142') == 'AB'", true],
    ["url_encode('a b&c') == 'a+b%26c'", true],
    ["to_lower('ABC') == 'abc' && to_upper('abc') == 'ABC'", true],
    ["contains_any(body, 'nope', 'Hello') && contains_all(body, 'Hello', 'World')", true],
    ['len(rand_base(8)) == 8 && len(rand_text_alpha(5)) == 5', true],
    ["compare_versions('2.4.49', '< 2.4.50', '>= 2.4.0')", true],
    ["compare_versions('2.4.51', '< 2.4.50')", false],
    ["compare_versions('v1.2.3-beta', '~> 1.2')", false],
    ["compare_versions('1.2.9', '~> 1.2.3')", true],
    ["date_time('%Y-%M-%D', 0) == '1970-01-01'", true],
    ['unix_time() > 1700000000', true],
    ["mmh3('hello') == '613153351'", true],
    ["base64_py('a') == 'YQ==\n'", true],
    ["concat('a', 1, true) == 'a1true'", true],
    ['2 + 3 * 4 == 14 && 2 ** 3 == 8 && 7 % 4 == 3', true],
    ["'a' + 'b' == 'ab'", true],
    ["body =~ 'W[a-z]+d' && !(body !~ 'Hello')", true],
    ['status_code in (200, 301)', true],
    ['status_code == 200 ? true : false', true],
    ['nosuch ?? true', true],
    ["to_number('42') == 42", true],
    ["replace('aXbX', 'X', '-') == 'a-b-'", true],
    ["trim_space('  x ') == 'x'", true],
  ])('helper %s → %s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });

  it.each([
    ['nosuch(body) == "x"', /unknown function nosuch\(\)/],
    ['contains(body)', /contains\(\) takes 2 arguments, not 1/],
    ['len(body, body)', /len\(\) takes 1 argument, not 2/],
    ["regex('(?=a)', body)", /lookahead/],
    ['status_code ==', /ends too early/],
    ['(status_code == 200', /missing \)/],
    ['status_code == 200)', /after the end/],
    ['status_code = 200', /unexpected character "="/],
    ["'unterminated", /unterminated string/],
    ['a; b', /unexpected character ";"/],
    ['', /empty/],
  ])('refuses %s', (expr, why) => {
    expect(() => parseDsl(expr)).toThrow(DslError);
    expect(() => parseDsl(expr)).toThrow(why);
  });

  it('refuses deep nesting and oversized expressions instead of overflowing the stack', () => {
    const deep = `${'('.repeat(10_000)}true${')'.repeat(10_000)}`;
    expect(() => parseDsl(deep)).toThrow(/characters long/);
    const nested = `${'('.repeat(DSL_LIMITS.depth + 1)}true${')'.repeat(DSL_LIMITS.depth + 1)}`;
    expect(() => parseDsl(nested)).toThrow(/nests deeper than 32/);
    expect(() => parseDsl(`${'!'.repeat(DSL_LIMITS.depth + 1)}true`)).toThrow(/nests deeper/);
    expect(() => parseDsl(Array(300).fill('true').join(' && '))).toThrow(/more than 512 parts/);
    expect(parseDsl(`${'('.repeat(DSL_LIMITS.depth - 1)}true${')'.repeat(DSL_LIMITS.depth - 1)}`)).toBeDefined();
  });

  it('evaluates hostile responses without throwing', () => {
    const big = 'A'.repeat(1024 * 1024);
    const exprs = [
      "contains(body, 'B')",
      "regex('A+B', body)",
      "len(body) == 1048576 && starts_with(body, 'AAA')",
      'content_length > 1000',
      'tolower(body) == toupper(body)',
      "status_code == 'x'",
    ];
    const results = exprs.map((e) => run(e, ctx(big, Number.NaN)));
    expect(results).toEqual([false, false, true, true, false, false]);
  });

  it('treats non-boolean operands of && || ! as false', () => {
    // Type checking cannot see a header variable's value; evaluation must stay total anyway.
    expect(run("!contains(body, 'x') && len(x_powered_by) > 0")).toBe(true);
    expect(run("x_powered_by == 'PHP/8.1' || 1 == 2")).toBe(true);
  });
});
