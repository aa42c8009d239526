// Hand-built ClientHellos over a plain socket. OpenSSL 3 (Node's TLS) cannot speak SSLv2 or SSLv3
// and has dropped RC4, DES, 3DES, IDEA and export suites, so the scanner asks in raw bytes and reads
// the server's choice from its first answer (ServerHello or alert) without finishing the handshake.
import { randomBytes } from 'node:crypto';
import net from 'node:net';

export const SSL3 = 0x0300;
export const TLS10 = 0x0301;
export const TLS11 = 0x0302;
export const TLS12 = 0x0303;

export type HelloAnswer =
  /** The server accepted: the version and suite of its ServerHello. */
  | { kind: 'server-hello'; version: number; cipher: number }
  /** An SSLv2 SERVER-HELLO and the cipher kinds it lists (3-byte SSLv2 codes). */
  | { kind: 'sslv2-server-hello'; ciphers: number[] }
  /** A TLS alert: the server speaks TLS but refused this hello. */
  | { kind: 'alert'; description: number }
  /** Bytes that are not TLS (an HTTP error page, a banner). */
  | { kind: 'not-tls'; first: string }
  /** Closed without a word (many servers refuse an unwanted version this way). */
  | { kind: 'closed' }
  | { kind: 'timeout' }
  | { kind: 'unreachable'; code: string };

const u16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u24 = (n: number) => Buffer.from([(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
const vec16 = (b: Buffer) => Buffer.concat([u16(b.length), b]);
const ext = (type: number, body: Buffer) => Buffer.concat([u16(type), vec16(body)]);

// x25519, secp256r1, secp384r1, secp521r1, x448, secp224r1, secp256k1
const GROUPS = [0x001d, 0x0017, 0x0018, 0x0019, 0x001e, 0x0015, 0x0016];
// ECDSA and RSA-PSS/PKCS#1 with SHA-2, Ed25519/Ed448, then the SHA-1 and DSA schemes old servers need.
const SIGNATURE_SCHEMES = [
  0x0403, 0x0503, 0x0603, 0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601, 0x0807, 0x0808, 0x0303, 0x0301, 0x0402,
  0x0203, 0x0201, 0x0202,
];

/**
 * A TLS ClientHello (SSLv3 when `version` is 0x0300: no extensions, which SSLv3 servers may choke on).
 * `serverName` adds SNI; a hello of 256–511 bytes is padded to 512 (RFC 7685) because some load
 * balancers hang on that size.
 */
export function clientHello(version: number, suites: readonly number[], serverName?: string): Buffer {
  const parts = [
    u16(version),
    randomBytes(32),
    Buffer.from([0]),
    vec16(Buffer.concat(suites.map(u16))),
    Buffer.from([1, 0]),
  ];
  if (version > SSL3) {
    const exts: Buffer[] = [];
    if (serverName && !net.isIP(serverName)) {
      const name = Buffer.from(serverName, 'ascii');
      exts.push(ext(0x0000, vec16(Buffer.concat([Buffer.from([0]), vec16(name)]))));
    }
    exts.push(ext(0x000a, vec16(Buffer.concat(GROUPS.map(u16)))));
    exts.push(ext(0x000b, Buffer.from([1, 0])));
    if (version >= TLS12) exts.push(ext(0x000d, vec16(Buffer.concat(SIGNATURE_SCHEMES.map(u16)))));
    exts.push(ext(0xff01, Buffer.from([0])));
    let body = Buffer.concat(exts);
    const size = 4 + Buffer.concat(parts).length + 2 + body.length;
    if (size >= 256 && size < 512) body = Buffer.concat([body, ext(0x0015, Buffer.alloc(Math.max(0, 512 - size - 4)))]);
    parts.push(vec16(body));
  }
  const hello = Buffer.concat(parts);
  const handshake = Buffer.concat([Buffer.from([1]), u24(hello.length), hello]);
  // The record version stays at TLS 1.0 for TLS hellos: some servers drop records claiming more.
  return Buffer.concat([Buffer.from([0x16]), u16(version === SSL3 ? SSL3 : TLS10), u16(handshake.length), handshake]);
}

/** SSLv2 cipher kinds: RC4, RC2, IDEA, DES, 3DES and their export variants. */
const SSL2_CIPHERS = [0x010080, 0x020080, 0x030080, 0x040080, 0x050080, 0x060040, 0x0700c0];

/** An SSLv2 CLIENT-HELLO (2-byte record header, version 0x0002). */
export function sslv2ClientHello(): Buffer {
  const specs = Buffer.concat(SSL2_CIPHERS.map((c) => u24(c)));
  const challenge = randomBytes(16);
  const body = Buffer.concat([
    Buffer.from([1]),
    u16(0x0002),
    u16(specs.length),
    u16(0),
    u16(challenge.length),
    specs,
    challenge,
  ]);
  return Buffer.concat([Buffer.from([0x80 | (body.length >> 8), body.length & 0xff]), body]);
}

/** Reads a server's first answer to a hello; null while more bytes are needed. */
export function parseAnswer(buf: Buffer): HelloAnswer | null {
  if (buf.length === 0) return null;
  // SSLv2 record: high bit set, then MSG-SERVER-HELLO (4) with server version 0x0002.
  if (buf[0]! & 0x80 && buf.length >= 3 && buf[2] === 4) {
    if (buf.length < 13) return null;
    if (buf.readUInt16BE(5) !== 0x0002) return { kind: 'not-tls', first: printableStart(buf) };
    const certLength = buf.readUInt16BE(7);
    const specLength = buf.readUInt16BE(9);
    const start = 13 + certLength;
    const ciphers: number[] = [];
    for (let i = start; i + 3 <= Math.min(buf.length, start + specLength); i += 3) ciphers.push(buf.readUIntBE(i, 3));
    if (buf.length < start + specLength) return null;
    return { kind: 'sslv2-server-hello', ciphers };
  }
  const handshake: Buffer[] = [];
  let offset = 0;
  while (offset < buf.length) {
    if (buf.length - offset < 5) return null;
    const type = buf[offset]!;
    const length = buf.readUInt16BE(offset + 3);
    if ((type !== 0x15 && type !== 0x16) || buf[offset + 1] !== 3 || length > 18_432)
      return { kind: 'not-tls', first: printableStart(buf) };
    if (buf.length - offset - 5 < length) {
      if (type === 0x16) handshake.push(buf.subarray(offset + 5));
      break;
    }
    const payload = buf.subarray(offset + 5, offset + 5 + length);
    if (type === 0x15) {
      if (!handshake.length) return { kind: 'alert', description: payload[1] ?? 0 };
      break;
    }
    handshake.push(payload);
    offset += 5 + length;
  }
  const hs = Buffer.concat(handshake);
  if (hs.length < 4) return null;
  if (hs[0] !== 2) return { kind: 'not-tls', first: printableStart(buf) };
  const length = hs.readUIntBE(1, 3);
  // version (2) + random (32) + session id length (1) are enough to find the suite.
  if (hs.length < 4 + 35) return null;
  const sidLength = hs[4 + 34]!;
  const at = 4 + 35 + sidLength;
  if (hs.length < at + 2 || length < at - 4 + 2) return null;
  return { kind: 'server-hello', version: hs.readUInt16BE(4), cipher: hs.readUInt16BE(at) };
}

function printableStart(buf: Buffer): string {
  return buf
    .subarray(0, 40)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
}

export interface HelloTarget {
  address: string;
  port: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Connects, sends `hello`, and returns the server's first answer. Never rejects. */
export function sendHello(t: HelloTarget, hello: Buffer): Promise<HelloAnswer> {
  return new Promise((resolve) => {
    if (t.signal?.aborted) return resolve({ kind: 'timeout' });
    const socket = net.connect({ host: t.address, port: t.port });
    let received = Buffer.alloc(0);
    const finish = (a: HelloAnswer) => {
      clearTimeout(timer);
      t.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(a);
    };
    const timer = setTimeout(
      () => finish(received.length ? { kind: 'not-tls', first: printableStart(received) } : { kind: 'timeout' }),
      t.timeoutMs,
    );
    const onAbort = () => finish({ kind: 'timeout' });
    t.signal?.addEventListener('abort', onAbort, { once: true });
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      socket.write(hello);
    });
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      const answer = parseAnswer(received);
      if (answer) finish(answer);
      else if (received.length > 65_536) finish({ kind: 'not-tls', first: printableStart(received) });
    });
    socket.once('end', () =>
      finish(received.length ? (parseAnswer(received) ?? { kind: 'closed' }) : { kind: 'closed' }),
    );
    socket.once('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? 'ERR';
      // A reset after the hello is a refusal; one before the connect is a closed port.
      finish(connected ? { kind: 'closed' } : { kind: 'unreachable', code });
    });
  });
}
