// ssl templates against real TLS servers on loopback (a test CA's leaves, expired, self-signed,
// mismatched, TLS 1.2 only with a legacy suite) and a fake SSL 3.0 endpoint, read the way the
// public templates read them: `expired == true`, kval `not_after`, json `.tls_version` per version
// range, words on `cipher`, json on the response.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTemplatesAt, validTemplate } from '../../../../test/helpers/templates.ts';
import { createServers, createTestPki, fakeTlsServer, type Servers } from '../../../../test/fixtures/tls-servers.ts';
import { SSL3 } from '../edge/hello.ts';
import { validateTemplate, type Template } from './index.ts';
import { opensslSuiteName } from './ssl.ts';

const DAY_MS = 86_400_000;
let servers: Servers;
const port: Record<string, number> = {};

beforeAll(async () => {
  const pki = createTestPki();
  servers = createServers();
  const now = Date.now();
  port.good = await servers.https(pki.leaf({ name: 'good', to: new Date(now + 365 * DAY_MS) }), {});
  port.expired = await servers.https(
    pki.leaf({ name: 'expired', from: new Date(now - 40 * DAY_MS), to: new Date(now - 10 * DAY_MS) }),
    {},
  );
  port.self = await servers.https(pki.selfSigned('self'), {});
  port.mismatch = await servers.https(
    pki.leaf({
      name: 'other',
      cn: 'other.example',
      san: 'DNS:other.example,DNS:*.other.example',
      to: new Date(now + DAY_MS * 90),
    }),
    {},
  );
  port.legacy = await servers.https(
    {
      ...pki.leaf({ name: 'legacy', key: 'rsa2048', to: new Date(now + 365 * DAY_MS) }),
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.2',
      ciphers: 'AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0',
    },
    {},
  );
  // Answers SSL 3.0 hellos with a ServerHello choosing TLS_RSA_WITH_3DES_EDE_CBC_SHA.
  port.ssl3 = await servers.tcp(fakeTlsServer({ versions: [SSL3], suites: [0x000a] }));
}, 60_000);

afterAll(() => servers.close());

const tpl = validTemplate;
const run = async (t: Template, p: number) =>
  (await runTemplatesAt(`https://127.0.0.1:${p}`, [t], { timeoutMs: 5_000 })).matches;

const head = (id: string) => `id: ${id}\ninfo: {name: ${id}, severity: low}\n`;
const block = (body: string) => `ssl:\n  - address: "{{Host}}:{{Port}}"\n${body}`;

describe('ssl templates', () => {
  it('find an expired certificate and extract its end date, as the public expired-ssl template does', async () => {
    const t = tpl(
      `${head('expired-ssl')}${block('    matchers:\n      - type: dsl\n        dsl:\n          - "expired == true"\n    extractors:\n      - type: kval\n        kval:\n          - "not_after"\n')}`,
    );
    expect(await run(t, port.good!)).toEqual([]);
    const [m] = await run(t, port.expired!);
    expect(m!.url).toBe(`tls://127.0.0.1:${port.expired}`);
    expect(m!.extracted[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(new Date(m!.extracted[0]!).getTime()).toBeLessThan(Date.now());
  });

  it('tell self-signed, untrusted, mismatched and wildcard certificates apart', async () => {
    const verdicts = (name: string) =>
      tpl(`${head(name)}${block(`    matchers:\n      - {type: dsl, dsl: ["${name} == true"]}\n`)}`);
    const fired = async (name: string) => {
      const out: string[] = [];
      for (const k of ['good', 'self', 'mismatch']) if ((await run(verdicts(name), port[k]!)).length) out.push(k);
      return out;
    };
    expect(await fired('self_signed')).toEqual(['self']);
    // The test CA is in no trust store: every certificate here is untrusted.
    expect(await fired('untrusted')).toEqual(['good', 'self', 'mismatch']);
    expect(await fired('mismatched')).toEqual(['mismatch']);
    expect(await fired('wildcard_certificate')).toEqual(['mismatch']);
  });

  it('reads names and the issuer from the response JSON and by name', async () => {
    const t = tpl(
      `${head('names')}${block('    extractors:\n      - {type: json, name: issuer, json: [" .issuer_cn"]}\n      - {type: json, name: names, json: [".subject_an[]"]}\n      - {type: dsl, name: cn, dsl: [\'"CN: " + subject_cn\']}\n      - {type: kval, name: dn, kval: [subject_dn, issuer_dn]}\n')}`,
    );
    const got = Object.fromEntries((await run(t, port.mismatch!)).map((m) => [m.extractor, m.extracted]));
    expect(got).toEqual({
      issuer: ['Rampart Edge Test CA'],
      names: ['other.example', '*.other.example'],
      cn: ['CN: other.example'],
      dn: ['CN=other.example', 'CN=Rampart Edge Test CA'],
    });
  });

  it('runs one handshake per version range, as deprecated-tls and tls-version do', async () => {
    const range = (v: string) =>
      `  - address: "{{Host}}:{{Port}}"\n    min_version: ${v}\n    max_version: ${v}\n    extractors:\n      - {type: json, name: v_${v}, json: [" .tls_version"]}\n`;
    const t = tpl(`${head('versions')}ssl:\n${range('tls11')}${range('tls12')}${range('tls13')}`);
    expect((await run(t, port.legacy!)).map((m) => [m.extractor, m.extracted])).toEqual([['v_tls12', ['tls12']]]);
    expect((await run(t, port.good!)).map((m) => m.extracted[0])).toEqual(['tls12', 'tls13']);
  });

  it('matches the negotiated suite by its IANA name and offers only the suites asked for', async () => {
    const weak = tpl(
      `${head('weak')}${block('    matchers:\n      - type: word\n        part: cipher\n        words:\n          - "TLS_RSA_WITH_AES_128_CBC_SHA"\n          - "TLS_RSA_WITH_3DES_EDE_CBC_SHA"\n')}`,
    );
    // The server prefers its own order: the legacy suite first.
    expect(await run(weak, port.legacy!)).toHaveLength(1);
    expect(await run(weak, port.good!)).toEqual([]);
    const offered = tpl(
      `${head('offered')}${block('    cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n    extractors:\n      - {type: json, json: [".cipher"]}\n')}`,
    );
    expect((await run(offered, port.legacy!)).map((m) => m.extracted)).toEqual([
      ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
    ]);
    const notOffered = tpl(
      `${head('not-offered')}${block('    cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n    max_version: tls12\n    matchers:\n      - {type: dsl, dsl: ["probe_status"]}\n')}`,
    );
    expect(await run(notOffered, port.legacy!)).toEqual([]);
  });

  it('finds SSL 3.0 with a hand-built hello, and enumerates versions', async () => {
    const t = tpl(
      `${head('ssl3')}${block('    min_version: ssl30\n    max_version: ssl30\n    extractors:\n      - {type: json, json: [".tls_version", ".cipher"]}\n')}`,
    );
    expect((await run(t, port.ssl3!)).map((m) => m.extracted)).toEqual([['ssl30', 'TLS_RSA_WITH_3DES_EDE_CBC_SHA']]);
    expect(await run(t, port.good!)).toEqual([]);
    const e = tpl(
      `${head('enum')}${block('    tls_version_enum: true\n    extractors:\n      - {type: json, json: [".version_enum[]"]}\n')}`,
    );
    expect((await run(e, port.legacy!)).map((m) => m.extracted)).toEqual([['tls12']]);
  });
});

describe('ssl template validation', () => {
  const errors = (yaml: string) => {
    const v = validateTemplate(yaml);
    return v.ok ? [] : v.errors.map((x) => `${x.path}: ${x.message}`);
  };

  it('refuses what could never be true or would reach another host', () => {
    expect(errors(`${head('rev')}${block('    matchers: [{type: dsl, dsl: ["revoked == true"]}]\n')}`)).toEqual([
      'ssl[0]: revoked: certificate revocation (OCSP, CRL) is not checked, so this value is never known',
    ]);
    expect(
      errors(
        `${head('far')}ssl:\n  - address: "example.com:443"\n    matchers: [{type: dsl, dsl: ["probe_status"]}]\n`,
      )[0],
    ).toMatch(/^ssl\[0\]\.address: must be/);
    expect(
      errors(
        `${head('enum')}${block('    tls_cipher_enum: true\n    extractors: [{type: json, json: [".cipher"]}]\n')}`,
      )[0],
    ).toMatch(/^ssl\[0\]\.tls_cipher_enum: cipher enumeration is not supported/);
    expect(
      errors(
        `${head('suite')}${block('    cipher_suites: [TLS_MADE_UP]\n    extractors: [{type: json, json: [".cipher"]}]\n')}`,
      )[0],
    ).toMatch(/^ssl\[0\]\.cipher_suites\[0\]: TLS_MADE_UP is not a cipher suite/);
    expect(
      errors(
        `${head('range')}${block('    min_version: tls13\n    max_version: tls10\n    extractors: [{type: json, json: [".cipher"]}]\n')}`,
      ),
    ).toEqual(['ssl[0].min_version: is above max_version']);
  });

  it('names IANA suites the way OpenSSL does', () => {
    expect(
      [
        'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
        'TLS_RSA_WITH_AES_128_CBC_SHA',
        'TLS_RSA_WITH_AES_256_CBC_SHA256',
        'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
        'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
        'TLS_AES_128_GCM_SHA256',
        'TLS_PSK_WITH_AES_128_CBC_SHA',
      ].map(opensslSuiteName),
    ).toEqual([
      'ECDHE-RSA-AES128-GCM-SHA256',
      'AES128-SHA',
      'AES256-SHA256',
      'ECDHE-ECDSA-CHACHA20-POLY1305',
      'DES-CBC3-SHA',
      'TLS_AES_128_GCM_SHA256',
      null,
    ]);
  });
});
