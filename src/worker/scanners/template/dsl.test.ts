// The DSL of `dsl` matchers: syntax, types, functions, and hostile input (deep nesting, huge
// expressions, long strings, unknown functions) refused at validation, never thrown at run time.
import { describe, expect, it } from 'vitest';
import { DSL_LIMITS, DslError, evaluateDsl, parseDsl, type DslContext } from './dsl.ts';

const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Powered-By: PHP/8.1\r\nStrict-Transport-Security: max-age=1';

function ctx(body = '<html>Hello World</html>', status = 200): DslContext {
  const headers: Record<string, string> = { content_type: 'text/html', x_powered_by: 'PHP/8.1', strict_transport_security: 'max-age=1' };
  return {
    vars: { status_code: status, content_length: body.length, body, header: HEAD, all_headers: HEAD, response: `${HEAD}\r\n\r\n${body}`, content_type: 'text/html' },
    header: (n) => headers[n] ?? '',
  };
}

const run = (expr: string, c = ctx()) => evaluateDsl(parseDsl(expr), c);

describe('dsl', () => {
  it.each([
    ['status_code == 200', true],
    ['status_code != 200', false],
    ['status_code == "200"', true],
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
    ["X_Powered_By == 'PHP/8.1'", true],
    ['len(missing_header) == 0', true],
    ["content_type == 'text/html' && contains(response, 'World')", true],
    ['"a\\"b" == \'a"b\'', true],
    ['1.5 < 2', true],
    ["'abc' < 2", false],
  ])('%s → %s', (expr, want) => {
    expect(run(expr)).toBe(want);
  });

  it.each([
    ['md5(body) == "x"', /unknown function md5\(\); available: contains/],
    ['contains(body)', /contains\(\) takes 2 arguments, not 1/],
    ['len(body, body)', /len\(\) takes 1 argument, not 2/],
    ['regex(body, body)', /needs a quoted pattern/],
    ["regex('(?=a)', body)", /lookahead/],
    ['len(body)', /must be a condition/],
    ['body', /must be a condition/],
    ['status_code ==', /ends too early/],
    ['(status_code == 200', /missing \)/],
    ['status_code == 200)', /after the end/],
    ['status_code = 200', /unexpected character "="/],
    ["'unterminated", /unterminated string/],
    ['a; b', /unexpected character ";"/],
    ['', /ends too early/],
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
    const exprs = ["contains(body, 'B')", "regex('A+B', body)", "len(body) == 1048576 && starts_with(body, 'AAA')", 'content_length > 1000', "tolower(body) == toupper(body)", "status_code == 'x'"];
    const results = exprs.map((e) => run(e, ctx(big, Number.NaN)));
    expect(results).toEqual([false, false, true, true, false, false]);
  });

  it('treats non-boolean operands of && || ! as false', () => {
    // Type checking cannot see a header variable's value; evaluation must stay total anyway.
    expect(run("!contains(body, 'x') && len(x_powered_by) > 0")).toBe(true);
    expect(run("x_powered_by == 'PHP/8.1' || 1 == 2")).toBe(true);
  });
});
