// Ed25519 signature verification (RFC 8032 §5.1.7, cofactorless, as OpenSSL and WebCrypto check
// it) in plain TypeScript with BigInt, for /verify-script in browsers whose WebCrypto has no
// Ed25519. DESIGN §5.4 names @noble/ed25519 as the fallback; that package is not a dependency
// here, so this is the same algorithm, small and verify-only (public data, no secrets: constant
// time does not matter). SHA-512 comes from WebCrypto, which every browser has.

const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const mod = (a: bigint, m = P) => ((a % m) + m) % m;

function pow(base: bigint, exp: bigint): bigint {
  let r = 1n;
  let b = mod(base);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) r = (r * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return r;
}
const inv = (a: bigint) => pow(a, P - 2n);
const D = mod(-121665n * inv(121666n));
const SQRT_M1 = pow(2n, (P - 1n) / 4n);

/** Extended coordinates (X, Y, Z, T) with x = X/Z, y = Y/Z, xy = T/Z. */
type Point = readonly [bigint, bigint, bigint, bigint];
const ZERO: Point = [0n, 1n, 1n, 0n];
const BX = 15112221349535400772501151409588531511454012693041857206046113283949847762202n;
const BY = 46316835694926478169428394003475163141307993866256225615783033603165251855960n;
const BASE: Point = [BX, BY, 1n, mod(BX * BY)];

function add(p: Point, q: Point): Point {
  const [x1, y1, z1, t1] = p;
  const [x2, y2, z2, t2] = q;
  const a = mod((y1 - x1) * (y2 - x2));
  const b = mod((y1 + x1) * (y2 + x2));
  const c = mod(2n * D * t1 * t2);
  const d = mod(2n * z1 * z2);
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return [mod(e * f), mod(g * h), mod(f * g), mod(e * h)];
}

function mul(p: Point, n: bigint): Point {
  let r = ZERO;
  let q = p;
  let k = n;
  while (k > 0n) {
    if (k & 1n) r = add(r, q);
    q = add(q, q);
    k >>= 1n;
  }
  return r;
}

const leInt = (b: Uint8Array) => {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
};

/** A point from its 32-byte encoding, or null when it is not on the curve. */
function decode(bytes: Uint8Array): Point | null {
  if (bytes.length !== 32) return null;
  const copy = Uint8Array.from(bytes);
  const sign = copy[31]! >> 7;
  copy[31]! &= 0x7f;
  const y = leInt(copy);
  if (y >= P) return null;
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * pow(v, 3n) * pow(u * pow(v, 7n), (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 === mod(-u)) x = mod(x * SQRT_M1);
  else if (vx2 !== u) return null;
  if (x === 0n && sign === 1) return null;
  if (Number(x & 1n) !== sign) x = P - x;
  return [x, y, 1n, mod(x * y)];
}

const samePoint = (p: Point, q: Point) => mod(p[0] * q[2]) === mod(q[0] * p[2]) && mod(p[1] * q[2]) === mod(q[1] * p[2]);

/** True when `signature` (64 bytes) is a valid Ed25519 signature of `message` by `publicKey` (32 bytes). */
export async function ed25519Verify(publicKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Promise<boolean> {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const a = decode(publicKey);
  const r = decode(signature.subarray(0, 32));
  if (!a || !r) return false;
  const s = leInt(signature.subarray(32));
  if (s >= L) return false;
  const input = new Uint8Array(64 + message.length);
  input.set(signature.subarray(0, 32), 0);
  input.set(publicKey, 32);
  input.set(message, 64);
  const k = mod(leInt(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-512', input))), L);
  return samePoint(mul(BASE, s), add(r, mul(a, k)));
}
