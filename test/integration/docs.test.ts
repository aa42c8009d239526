// Documentation that must stay true: every error code documented, the operations document's
// version in step with the constant and the changelog.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/lib/errors.ts';
import { OPERATIONS_DOC_VERSION } from '../../src/ops/version.ts';
import { EDGE_RULES } from '../../src/agent/scanners/edge/findings.ts';
import { builtinTemplates } from '../../src/agent/scanners/template/index.ts';
import { RULES as WEBAPP_RULES } from '../../src/agent/scanners/webapp/rules.ts';

const root = join(import.meta.dirname, '../..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'web' ? [] : sourceFiles(p);
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [p] : [];
  });
}

describe('docs/errors.md', () => {
  const doc = read('docs/errors.md');

  it('documents every code in the error table', () => {
    const missing = Object.keys(ERROR_STATUS).filter((code) => !doc.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it('documents every error code written anywhere in the server code', () => {
    const codes = new Set<string>();
    for (const file of sourceFiles(join(root, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:appError|new AppError)\(\s*'([a-z_]+)'/g)) codes.add(m[1]!);
      for (const m of text.matchAll(/\berror: '([A-Za-z_]+)'/g)) codes.add(m[1]!);
      for (const m of text.matchAll(/\bcode: '([a-z_]+)'/g)) codes.add(m[1]!);
    }
    expect(codes.size).toBeGreaterThan(5);
    const undocumented = [...codes].filter((c) => !doc.includes(`\`${c}\``));
    expect(undocumented).toEqual([]);
  });
});

describe('operations document version', () => {
  it('keeps OPERATIONS_DOC_VERSION, the document header and the newest changelog entry equal', () => {
    const header = /^Version:\s*(\d+\.\d+\.\d+)\s*$/m.exec(read('docs/operations.md'));
    expect(header?.[1]).toBe(OPERATIONS_DOC_VERSION);
    const versions = [
      ...read('docs/operations-changelog.md').matchAll(/^\|?\s*(\d{4}-\d{2}-\d{2})\s*\|\s*(\d+\.\d+\.\d+)\s*\|/gm),
    ].map((m) => m[2]);
    expect(versions.length).toBeGreaterThan(0);
    expect(versions.at(-1)).toBe(OPERATIONS_DOC_VERSION);
    expect(OPERATIONS_DOC_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('docs/mesh.md', () => {
  it('publishes known-answer vectors that our signer reproduces', async () => {
    const { signDispatch } = await import('../../src/mesh/mesh-signing.ts');
    const doc = read('docs/mesh.md');
    const rows = [...doc.matchAll(/^\| (empty|`(\{.+\})`[^|]*) \| `([0-9a-f]{64})` \|$/gm)];
    expect(rows).toHaveLength(3);
    for (const [, label, body, signature] of rows) {
      const bytes = label === 'empty' ? '' : body!;
      expect(
        signDispatch('test-secret-outbound-billing', {
          caller: 'billing',
          timestamp: '2025-01-01T00:00:00Z',
          method: 'POST',
          path: '/api/public/svc/dispatch',
          body: bytes,
        }),
      ).toBe(signature);
    }
  });
});

describe('docs/scanners.md', () => {
  it('lists every built-in scanner rule', () => {
    const doc = read('docs/scanners.md');
    const ids = [...Object.keys(WEBAPP_RULES), ...Object.keys(EDGE_RULES), ...builtinTemplates().map((t) => t.id)];
    expect(ids.filter((id) => !doc.includes(`| \`${id}\` |`))).toEqual([]);
  });
});
