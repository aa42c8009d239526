import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DISPATCH_PATH,
  bodyHashHex,
  canonicalString,
  checkTimestamp,
  formatTimestamp,
  parseTimestamp,
  signDispatch,
  verifyDispatchSignature,
} from './mesh-signing.ts';

const SECRET = 'test-secret-outbound-billing';
const CALLER = 'billing';
const TS = '2025-01-01T00:00:00Z';
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

// Known-answer vectors (docs/mesh-vectors.md, computed independently with Python and OpenSSL).
const VECTORS = [
  {
    label: 'ping body',
    body: '{"action":"ping","n":1}',
    bodyHash: '49bc6ea62d80d72523f41d476db2f7a9512b83322df65961662392b8341a1947',
    signature: '916b604af7df6e76bc49a4cc7a5d62e68d7b854d3c7033cc120336fb6a2ebcd7',
  },
  {
    label: 'empty body',
    body: '',
    bodyHash: EMPTY_SHA256,
    signature: '530fb7e549fe18809ff32a25d9e15fb39edce058f47d8d644d188c7274be8baf',
  },
  {
    label: 'UTF-8 body with emoji',
    body: '{"name":"Zoë 🚀"}',
    bodyHash: '9c626fa4f531cc7279c6841e0588caf37d8f3e5f4e55cab07121ee7ad3a4c47c',
    signature: 'fd2b66961592342fb30c05f2e2a002a1703a518f2522c3c6ae0f890352fc263b',
  },
] as const;

const sign = (
  body: Uint8Array | string,
  over: Partial<{ caller: string; timestamp: string; method: string; path: string }> = {},
) => signDispatch(SECRET, { caller: CALLER, timestamp: TS, method: 'POST', path: DISPATCH_PATH, body, ...over });

const canonicalFor = (body: Uint8Array | string) =>
  canonicalString({ caller: CALLER, timestamp: TS, method: 'POST', path: DISPATCH_PATH, bodyHash: bodyHashHex(body) });

// ---- independent implementations ---------------------------------------------------------------

const PY_SIGN = `
import hashlib, hmac, json, sys
req = json.load(sys.stdin)
out = []
for body_hex in req["bodies"]:
    body = bytes.fromhex(body_hex)
    body_hash = hashlib.sha256(body).hexdigest()
    canonical = "\\n".join([req["caller"], req["ts"], "POST", req["path"], body_hash])
    sig = hmac.new(req["secret"].encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256).hexdigest()
    out.append({"bodyHash": body_hash, "canonical": canonical, "signature": sig})
print(json.dumps(out))
`;

interface PyResult {
  bodyHash: string;
  canonical: string;
  signature: string;
}

function pythonSign(bodies: Uint8Array[], caller = CALLER, ts = TS): PyResult[] {
  const input = JSON.stringify({
    secret: SECRET,
    caller,
    ts,
    path: DISPATCH_PATH,
    bodies: bodies.map((b) => Buffer.from(b).toString('hex')),
  });
  const out = execFileSync('python3', ['-c', PY_SIGN], { input, encoding: 'utf8' });
  return JSON.parse(out) as PyResult[];
}

const hasOpenssl = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
if (!hasOpenssl) console.warn('[mesh-signing.test] openssl not found on PATH: skipping the OpenSSL cross-check');

function opensslHex(args: string[], input: Uint8Array | string): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-r', ...args], { input });
  const hex = /^[0-9a-f]{64}/.exec(out.toString('utf8'));
  if (!hex) throw new Error(`unexpected openssl output: ${out.toString('utf8')}`);
  return hex[0];
}

// ---- tests -------------------------------------------------------------------------------------

describe('known-answer vectors', () => {
  it.each(VECTORS)('$label: body hash, canonical string and signature', ({ body, bodyHash, signature }) => {
    expect(bodyHashHex(body)).toBe(bodyHash);
    expect(bodyHashHex(Buffer.from(body, 'utf8'))).toBe(bodyHash);
    expect(canonicalFor(body)).toBe(`billing\n2025-01-01T00:00:00Z\nPOST\n/api/public/svc/dispatch\n${bodyHash}`);
    expect(sign(body)).toBe(signature);
    expect(sign(new TextEncoder().encode(body))).toBe(signature);
    expect(verifyDispatchSignature(SECRET, canonicalFor(body), signature)).toBe(true);
  });

  it('the empty body hashes the empty byte string', () => {
    expect(bodyHashHex('')).toBe(EMPTY_SHA256);
    expect(bodyHashHex(new Uint8Array())).toBe(EMPTY_SHA256);
  });

  it('agree with an independent Python implementation (hashlib + hmac)', () => {
    const py = pythonSign(VECTORS.map((v) => Buffer.from(v.body, 'utf8')));
    VECTORS.forEach((v, i) => {
      expect(py[i]).toEqual({ bodyHash: v.bodyHash, canonical: canonicalFor(v.body), signature: v.signature });
    });
  });

  it.skipIf(!hasOpenssl)('agree with OpenSSL (openssl dgst -sha256 [-hmac])', () => {
    for (const v of VECTORS) {
      const bodyHash = opensslHex([], Buffer.from(v.body, 'utf8'));
      expect(bodyHash).toBe(v.bodyHash);
      expect(opensslHex(['-hmac', SECRET], canonicalFor(v.body))).toBe(v.signature);
    }
  });

  it('match Python on random bodies, including bytes that are not valid UTF-8', () => {
    const bodies = fc.sample(fc.uint8Array({ maxLength: 300 }), { numRuns: 60, seed: 4242 });
    bodies.push(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), Buffer.from([0xff, 0xfe, 0x00]), randomBytes(4096));
    const strings = fc.sample(fc.string({ unit: 'binary', maxLength: 80 }), { numRuns: 30, seed: 7 });
    const all = [...bodies, ...strings.map((s) => Buffer.from(s, 'utf8'))];
    const py = pythonSign(all, 'bid-portal', '2031-06-15T12:34:56.789Z');
    all.forEach((body, i) => {
      const ours = signDispatch(SECRET, {
        caller: 'bid-portal',
        timestamp: '2031-06-15T12:34:56.789Z',
        method: 'post',
        path: DISPATCH_PATH,
        body,
      });
      expect(ours).toBe(py[i]!.signature);
      expect(bodyHashHex(body)).toBe(py[i]!.bodyHash);
    });
  });
});

describe('docs/mesh-vectors.md', () => {
  const doc = readFileSync(new URL('../../docs/mesh-vectors.md', import.meta.url), 'utf8');
  const block = (lang: string): string => {
    const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(doc);
    if (!m) throw new Error(`no ${lang} block in docs/mesh-vectors.md`);
    return m[1]!;
  };

  it('lists every vector with its body hash and signature', () => {
    for (const v of VECTORS) {
      expect(doc).toContain(v.bodyHash);
      expect(doc).toContain(v.signature);
    }
  });

  it('its Python recipe prints the three signatures', () => {
    const out = execFileSync('python3', ['-c', block('python')], { encoding: 'utf8' });
    for (const v of VECTORS) expect(out).toContain(v.signature);
  });

  it.skipIf(!hasOpenssl)('its shell/openssl recipe prints the three signatures', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mesh-vectors-'));
    try {
      const script = join(dir, 'recipe.sh');
      writeFileSync(script, block('sh'));
      const out = execFileSync('bash', [script], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } });
      for (const v of VECTORS) expect(out).toContain(v.signature);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('canonicalString and signDispatch', () => {
  it('joins five fields with \\n, upper-cases the method, adds no trailing newline', () => {
    const c = canonicalString({ caller: 'a', timestamp: 't', method: 'post', path: '/p', bodyHash: 'h' });
    expect(c).toBe('a\nt\nPOST\n/p\nh');
    expect(c.endsWith('\n')).toBe(false);
  });

  it('signs the method case-insensitively and every other field exactly', () => {
    const base = sign('{"a":1}');
    expect(sign('{"a":1}', { method: 'post' })).toBe(base);
    expect(sign('{"a":1}', { method: 'PUT' })).not.toBe(base);
    expect(sign('{ "a": 1 }')).not.toBe(base); // bytes, not JSON semantics
    expect(sign('{"a":1}', { path: `${DISPATCH_PATH}/` })).not.toBe(base);
    expect(sign('{"a":1}', { caller: 'Billing' })).not.toBe(base);
    expect(sign('{"a":1}', { timestamp: '2025-01-01T00:00:00.000Z' })).not.toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches an inline node:crypto computation', () => {
    const body = Buffer.from('{"flow":"ping","payload":{"nonce":"x"}}');
    const expected = createHmac('sha256', SECRET)
      .update(`billing\n${TS}\nPOST\n${DISPATCH_PATH}\n${createHash('sha256').update(body).digest('hex')}`)
      .digest('hex');
    expect(sign(body)).toBe(expected);
  });

  it('computes the same HMAC as createHmac for any secret (longer than a block too) and any text', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 150, unit: 'grapheme' }),
        fc.string({ maxLength: 3_000, unit: 'binary' }),
        fc.string({ maxLength: 40 }),
        (secret, body, caller) => {
          const canonical = canonicalString({
            caller,
            timestamp: TS,
            method: 'POST',
            path: DISPATCH_PATH,
            bodyHash: bodyHashHex(body),
          });
          const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(canonical, 'utf8').digest('hex');
          expect(signDispatch(secret, { caller, timestamp: TS, method: 'POST', path: DISPATCH_PATH, body })).toBe(
            expected,
          );
          expect(verifyDispatchSignature(secret, canonical, expected)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    // A canonical string longer than any seen before (a long caller name), then a short one again.
    const long = canonicalString({
      caller: 'c'.repeat(5_000),
      timestamp: TS,
      method: 'POST',
      path: DISPATCH_PATH,
      bodyHash: EMPTY_SHA256,
    });
    expect(verifyDispatchSignature(SECRET, long, createHmac('sha256', SECRET).update(long).digest('hex'))).toBe(true);
    expect(sign('')).toBe(VECTORS[1].signature);
  });

  it('refuses an empty secret', () => {
    expect(() =>
      signDispatch('', { caller: 'a', timestamp: TS, method: 'POST', path: DISPATCH_PATH, body: '' }),
    ).toThrow(/empty/);
  });
});

describe('verifyDispatchSignature', () => {
  const canonical = canonicalFor(VECTORS[0].body);
  const good = VECTORS[0].signature;

  it('accepts the right signature and rejects a wrong secret or a changed canonical string', () => {
    expect(verifyDispatchSignature(SECRET, canonical, good)).toBe(true);
    expect(verifyDispatchSignature('test-secret-inbound-billing', canonical, good)).toBe(false);
    expect(verifyDispatchSignature(SECRET, `${canonical}\n`, good)).toBe(false);
    expect(
      verifyDispatchSignature(
        SECRET,
        canonical,
        good.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
      ),
    ).toBe(false);
  });

  it.each([
    ['upper-case hex', good.toUpperCase()],
    ['63 characters', good.slice(0, 63)],
    ['65 characters', `${good}0`],
    ['sha256= prefix', `sha256=${good}`],
    ['base64', Buffer.from(good, 'hex').toString('base64')],
    ['non-hex', 'z'.repeat(64)],
    ['empty', ''],
    ['surrounding space', ` ${good}`],
    ['a joined duplicate header', `${good}, ${good}`],
  ])('returns false without throwing for %s', (_label, sig) => {
    expect(verifyDispatchSignature(SECRET, canonical, sig)).toBe(false);
  });

  it('returns false for non-strings and an empty secret', () => {
    expect(verifyDispatchSignature(SECRET, canonical, undefined as unknown as string)).toBe(false);
    expect(verifyDispatchSignature(SECRET, canonical, ['a'] as unknown as string)).toBe(false);
    expect(verifyDispatchSignature('', canonical, good)).toBe(false);
    expect(verifyDispatchSignature(SECRET, null as unknown as string, good)).toBe(false);
  });
});

describe('timestamps', () => {
  it('formats as ISO 8601 UTC with Z, and parses its own output', () => {
    const d = new Date(Date.UTC(2025, 0, 1, 0, 0, 0, 5));
    expect(formatTimestamp(d)).toBe('2025-01-01T00:00:00.005Z');
    expect(parseTimestamp(formatTimestamp(d))?.getTime()).toBe(d.getTime());
  });

  it.each([
    ['2025-01-01T00:00:00Z', Date.UTC(2025, 0, 1)],
    ['2025-01-01T00:00:00.123Z', Date.UTC(2025, 0, 1, 0, 0, 0, 123)],
    ['2025-01-01T00:00:00.1Z', Date.UTC(2025, 0, 1, 0, 0, 0, 100)],
    ['2025-01-01T00:00:00.123456789Z', Date.UTC(2025, 0, 1, 0, 0, 0, 123)],
    ['2024-02-29T23:59:59Z', Date.UTC(2024, 1, 29, 23, 59, 59)],
    ['1999-12-31T23:59:59Z', Date.UTC(1999, 11, 31, 23, 59, 59)],
  ])('accepts %s', (value, ms) => {
    expect(parseTimestamp(value)?.getTime()).toBe(ms);
  });

  it.each([
    '2025-01-01T00:00:00+00:00',
    '2025-01-01T00:00:00',
    '2025-01-01',
    '2025-01-01T00:00Z',
    '1735689600',
    '1735689600000',
    '2025-13-01T00:00:00Z',
    '2025-13-45T00:00:00Z',
    '2025-04-31T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '2025-00-10T00:00:00Z',
    '2025-01-00T00:00:00Z',
    '2025-01-01T24:00:00Z',
    '2025-01-01T00:60:00Z',
    '2025-01-01T00:00:60Z',
    '2025-01-01t00:00:00z',
    '2025-01-01 00:00:00Z',
    ' 2025-01-01T00:00:00Z',
    '2025-01-01T00:00:00Z ',
    '2025-01-01T00:00:00Z\n',
    '2025-01-01T00:00:00.Z',
    '2025-01-01T00:00:00.1234567890Z',
    '+002025-01-01T00:00:00Z',
    'hello',
    '',
  ])('rejects %j', (value) => {
    expect(parseTimestamp(value)).toBeNull();
  });

  it('rejects non-strings without throwing', () => {
    expect(parseTimestamp(undefined as unknown as string)).toBeNull();
    expect(parseTimestamp(1735689600 as unknown as string)).toBeNull();
  });

  it('keeps years below 100 literal', () => {
    expect(parseTimestamp('0099-01-01T00:00:00Z')?.getUTCFullYear()).toBe(99);
  });

  it('checks a two-sided window, inclusive at exactly ±maxDriftMs', () => {
    const now = new Date('2025-01-01T00:00:00Z');
    const at = (ms: number) => new Date(now.getTime() + ms);
    const max = 300_000;
    expect(checkTimestamp(at(0), now, max)).toBe('ok');
    expect(checkTimestamp(at(max), now, max)).toBe('ok');
    expect(checkTimestamp(at(-max), now, max)).toBe('ok');
    expect(checkTimestamp(at(max + 1), now, max)).toBe('stale');
    expect(checkTimestamp(at(-max - 1), now, max)).toBe('stale');
    expect(checkTimestamp(at(600_000), now, max)).toBe('stale'); // future, the one-sided-check bug
    expect(checkTimestamp(new Date(Number.NaN), now, max)).toBe('stale');
  });
});
