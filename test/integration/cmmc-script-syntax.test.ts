// The issued device-check scripts are valid programs: the Windows script is parsed by a real
// PowerShell grammar (tree-sitter-powershell's WebAssembly build through web-tree-sitter; no
// PowerShell runtime can be installed here), the macOS script passes `bash -n` and shellcheck (Debian
// package `shellcheck`). The grammar is first shown to refuse broken PowerShell, so a pass means
// something. Scripts are issued through the API, on PGlite and, with DATABASE_URL, on PostgreSQL.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Language, Parser, type Node } from 'web-tree-sitter';
import type { IssuedTokenDto } from '../../src/cmmc/index.ts';
import { setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { tenantWithProfile } = setupCmmcProgramApp();
const require = createRequire(import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'rampart-script-syntax-'));
let parser: Parser;
let issued: IssuedTokenDto;

/** Syntax errors of a PowerShell text: tree-sitter's ERROR and MISSING nodes, with line:column. */
function psErrors(src: string): string[] {
  const tree = parser.parse(src);
  if (!tree) throw new Error('the parser gave no tree');
  const out: string[] = [];
  const walk = (n: Node) => {
    if (n.isError || n.isMissing)
      out.push(`${n.isMissing ? 'missing' : 'error'} at ${n.startPosition.row + 1}:${n.startPosition.column + 1}`);
    for (const c of n.children) if (c) walk(c);
  };
  walk(tree.rootNode);
  tree.delete();
  return out;
}

const hasTool = (cmd: string, arg: string) => spawnSync(cmd, [arg]).status === 0;

beforeAll(async () => {
  await Parser.init();
  const wasm = join(require.resolve('tree-sitter-powershell/package.json'), '..', 'tree-sitter-powershell.wasm');
  parser = new Parser();
  parser.setLanguage(await Language.load(wasm));
  const { owner, base } = await tenantWithProfile('script-syntax');
  const res = await owner.post(`${base}/device-token`);
  expect(res.statusCode, res.body).toBe(201);
  issued = res.json() as IssuedTokenDto;
});
afterAll(() => {
  parser?.delete();
  rmSync(work, { recursive: true, force: true });
});

describe('device-check script syntax', () => {
  it('the PowerShell grammar refuses broken PowerShell (so that its pass means something)', () => {
    for (const bad of [
      'if ($x -eq 1 { "a" }',
      '$x = @{ a = 1',
      "Write-Host 'abc",
      'foreach ($i in $list) ',
      '$h = @(1, 2,)',
      'param([string]$A,)',
    ])
      expect(psErrors(bad), bad).not.toEqual([]);
    expect(psErrors('if ($x -eq 1) { "a" } else { Write-Host \'b\' }')).toEqual([]);
  });

  it('the Windows script parses without an error, and a one-character break in it is caught', () => {
    const ps = issued.scripts.find((s) => s.os === 'windows')!.content;
    expect(ps.length).toBeGreaterThan(5000);
    expect(psErrors(ps)).toEqual([]);
    // The test app's address (http://rampart.test) is a public-looking name: no warning.
    expect(issued.baseUrlWarning).toBeNull();
    expect(ps).not.toContain('# WARNING');
    // Drop the last closing brace of the first function: the parser must notice.
    const fn = ps.indexOf('function Write-Check');
    const close = ps.indexOf('\n}\n', fn);
    expect(fn).toBeGreaterThan(0);
    expect(psErrors(ps.slice(0, close + 1) + ps.slice(close + 2))).not.toEqual([]);
    // An unterminated string in the token line, likewise.
    expect(psErrors(ps.replace(/^\$RampartToken = '/m, "$RampartToken = ''"))).not.toEqual([]);
  });

  it('the macOS script passes bash -n', () => {
    const file = join(work, 'check.sh');
    writeFileSync(file, issued.scripts.find((s) => s.os === 'macos')!.content);
    const r = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    writeFileSync(join(work, 'broken.sh'), 'if true; then\n  echo x\n');
    expect(spawnSync('bash', ['-n', join(work, 'broken.sh')]).status).not.toBe(0);
  });

  it('the macOS script has no shellcheck finding of any severity', (ctx) => {
    if (!hasTool('shellcheck', '--version')) {
      if (process.env.CI === 'true') throw new Error('shellcheck is not installed; .ci/run installs it');
      ctx.skip('shellcheck is not installed (Debian package shellcheck)');
      return;
    }
    const file = join(work, 'check.sh');
    writeFileSync(file, issued.scripts.find((s) => s.os === 'macos')!.content);
    const r = spawnSync('shellcheck', ['--shell=bash', '--severity=style', '--format=gcc', file], { encoding: 'utf8' });
    expect(r.stdout).toBe('');
    expect(r.status).toBe(0);
    // shellcheck does report: an unquoted variable in a test.
    writeFileSync(join(work, 'lint.sh'), '#!/bin/bash\nx=$1\nif [ $x = a ]; then echo "$x"; fi\n');
    const bad = spawnSync('shellcheck', ['--shell=bash', '--format=gcc', join(work, 'lint.sh')], { encoding: 'utf8' });
    expect(bad.stdout).toMatch(/SC2086/);
  });
});
