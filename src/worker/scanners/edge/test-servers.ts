// Loopback servers for the edge scanner's tests: a test CA and leaf certificates made with the
// openssl CLI (`openssl ca` for arbitrary validity dates), HTTPS servers that are good, expired,
// self-signed, for the wrong name, weak, or close to expiry, plain-HTTP companions that redirect
// (or not), and a fake TLS endpoint speaking just enough raw SSLv2/SSLv3/TLS to answer hellos with
// what Node's OpenSSL 3 can no longer serve (SSLv2, SSLv3, RC4, 3DES, export suites).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type tls from 'node:tls';

const DAY_MS = 86_400_000;

/** UTCTime for `openssl ca -startdate/-enddate`. */
const utc = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';

export interface TestPki {
  dir: string;
  caPem: string;
  /** A leaf signed by the test CA: key and certificate PEM. */
  leaf(o: { name: string; cn?: string; san?: string; from?: Date; to: Date; key?: 'ec' | 'rsa1024'; md?: 'sha256' | 'sha1' }): { key: string; cert: string };
  /** Self-signed for localhost/127.0.0.1; rsa512 with md5 makes the insecure kind. */
  selfSigned(name: string, o?: { key?: 'ec' | 'rsa512'; md?: 'sha256' | 'md5' }): { key: string; cert: string };
  cleanup(): void;
}

export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-edge-pki-'));
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', env: { ...process.env, ...env } });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  run(['req', '-x509', ...ecKey, '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3650', '-subj', '/CN=Rampart Edge Test CA']);
  mkdirSync(join(dir, 'issued'));
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), `${randomBytes(8).toString('hex')}\n`);
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = test',
      '[test]',
      `dir = ${dir}`,
      'database = $dir/index.txt',
      'new_certs_dir = $dir/issued',
      'serial = $dir/serial',
      'certificate = $dir/ca.pem',
      'private_key = $dir/ca.key',
      'default_md = sha256',
      'policy = any',
      'unique_subject = no',
      '[any]',
      'commonName = supplied',
      '[leaf]',
      'basicConstraints = CA:FALSE',
      'keyUsage = digitalSignature, keyEncipherment',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = $ENV::LEAF_SAN',
      '',
    ].join('\n'),
  );
  return {
    dir,
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    leaf({ name, cn = 'localhost', san = 'DNS:localhost,IP:127.0.0.1', from = new Date(Date.now() - DAY_MS), to, key = 'ec', md = 'sha256' }) {
      const keyArgs = key === 'ec' ? ecKey : ['-newkey', 'rsa:1024'];
      run(['req', '-new', ...keyArgs, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
      run(['ca', '-batch', '-config', 'ca.cnf', '-in', `${name}.csr`, '-out', `${name}.pem`, '-startdate', utc(from), '-enddate', utc(to), '-md', md, '-extensions', 'leaf', '-notext'], { LEAF_SAN: san });
      return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
    },
    selfSigned(name, { key = 'ec', md = 'sha256' } = {}) {
      run(['req', '-x509', ...(key === 'ec' ? ecKey : ['-newkey', 'rsa:512']), `-${md}`, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '365', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1']);
      return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const GOOD_HEADERS = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

type Closable = { close(): unknown; closeAllConnections?(): void };

export interface Servers {
  /** Listens on 127.0.0.1 and returns the port. */
  https(o: tls.TlsOptions, headers: Record<string, string>): Promise<number>;
  /** Plain HTTP answering every request with `status` and `headers`. */
  http(status: number, headers: Record<string, string>): Promise<number>;
  /** Any TCP server (the fake TLS endpoints, a non-TLS listener). */
  tcp(server: net.Server): Promise<number>;
  /** A port that was just free: connections are refused. */
  closedPort(): Promise<number>;
  close(): void;
}

export function createServers(): Servers {
  const open: Closable[] = [];
  const listen = async (s: net.Server) => {
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    open.push(s as Closable);
    return (s.address() as net.AddressInfo).port;
  };
  return {
    https(o, headers) {
      const s = https.createServer(o, (_req, res) => res.writeHead(200, { 'content-type': 'text/html', ...headers }).end('<html>edge test</html>'));
      s.on('tlsClientError', () => undefined);
      return listen(s);
    },
    http(status, headers) {
      return listen(http.createServer((_req, res) => res.writeHead(status, headers).end('plain')));
    },
    tcp: listen,
    async closedPort() {
      const s = net.createServer();
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
      const port = (s.address() as net.AddressInfo).port;
      await new Promise<void>((r) => s.close(() => r()));
      return port;
    },
    close() {
      for (const s of open) {
        s.closeAllConnections?.();
        s.close();
      }
    },
  };
}

export interface FakeTlsOptions {
  /** Protocol versions answered with a ServerHello (0x0300 SSLv3 … 0x0303 TLS 1.2). */
  versions: number[];
  /** Suites the fake accepts, in its order of preference. */
  suites: number[];
  /** Answer SSLv2 CLIENT-HELLOs with a SERVER-HELLO. */
  sslv2?: boolean;
  /** Pick the client's first acceptable suite instead of the fake's own first. */
  clientOrder?: boolean;
}

/**
 * A fake TLS endpoint: reads one ClientHello and answers with a ServerHello (a version it knows, the
 * first of its suites the client offered, or the client's first it knows) or a handshake_failure
 * alert. No handshake follows.
 */
export function fakeTlsServer(o: FakeTlsOptions): net.Server {
  return net.createServer((socket) => {
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf[0]! & 0x80) {
        const length = ((buf[0]! & 0x7f) << 8) | buf[1]!;
        if (buf.length < length + 2) return;
        if (!o.sslv2) return void socket.end();
        // SERVER-HELLO: no session hit, X.509 type, version 2, no certificate, one cipher (RC4-MD5), 16-byte connection id.
        const body = Buffer.concat([Buffer.from([4, 0, 1, 0x00, 0x02, 0, 0, 0, 3, 0, 16, 0x01, 0x00, 0x80]), randomBytes(16)]);
        return void socket.end(Buffer.concat([Buffer.from([0x80 | (body.length >> 8), body.length & 0xff]), body]));
      }
      if (buf.length < 5 || buf.length < 5 + buf.readUInt16BE(3)) return;
      const hello = buf.subarray(9);
      const version = hello.readUInt16BE(0);
      const sidLength = hello[34]!;
      const suitesLength = hello.readUInt16BE(35 + sidLength);
      const offered: number[] = [];
      for (let i = 0; i < suitesLength; i += 2) offered.push(hello.readUInt16BE(37 + sidLength + i));
      const pick = o.clientOrder ? offered.find((s) => o.suites.includes(s)) : o.suites.find((s) => offered.includes(s));
      if (!o.versions.includes(version) || pick === undefined) return void socket.end(Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28]));
      const body = Buffer.concat([Buffer.from([version >> 8, version & 0xff]), randomBytes(32), Buffer.from([0, pick >> 8, pick & 0xff, 0])]);
      const handshake = Buffer.concat([Buffer.from([2, 0, body.length >> 8, body.length & 0xff]), body]);
      socket.end(Buffer.concat([Buffer.from([0x16, version >> 8, version & 0xff, handshake.length >> 8, handshake.length & 0xff]), handshake]));
    });
  });
}

/**
 * A TCP relay to `targetPort` that drops connections whose first bytes lack `marker`: with the
 * extended_master_secret extension as marker, Node's handshakes pass and raw hellos do not.
 */
export function helloGate(targetPort: number, marker: Buffer): net.Server {
  return net.createServer((client) => {
    client.on('error', () => undefined);
    client.once('data', (first: Buffer) => {
      if (!first.includes(marker)) return void client.destroy();
      const upstream = net.connect({ host: '127.0.0.1', port: targetPort }, () => upstream.write(first));
      upstream.on('error', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
}
