// Pulling an image by reference (`registry/name:tag@digest`) through the OCI distribution API, into
// an OCI image layout directory that readImage() then reads like any other: the manifest (an
// index or manifest list picks linux/amd64), the config and every layer as stored (gzip, zstd or
// plain: readImage tells them apart), each streamed to disk with its digest and size checked.
// Auth: anonymous, or the bearer tokens of the registry token protocol that Docker Hub, GHCR and
// the distribution registry use (a 401 names the token realm; the token is asked for anonymously).
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { egressRefusalMessage, guardedDispatcher, isEgressRefusal, type EgressPolicy } from '../../../lib/egress.ts';
import { ScannerError } from '../types.ts';

export interface ImageReference {
  /** Registry host[:port] as written, `docker.io` when none was. */
  registry: string;
  repository: string;
  tag?: string;
  digest?: string;
}

// [registry[:port]/]repository[:tag][@sha256:digest], as the asset form accepts it.
const REFERENCE_RE =
  /^(?:(?<registry>[a-z0-9.-]+(?::\d{1,5})?|\[[0-9a-f:]+\](?::\d{1,5})?)\/)?(?<repo>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::(?<tag>[\w][\w.-]{0,127}))?(?:@(?<digest>sha256:[a-f0-9]{64}))?$/;

/** A registry reference, or null when the target is not one (a path, an uploaded archive). */
export function parseImageReference(target: string): ImageReference | null {
  // An archive's file name is never an image name, although `debian.tar` would parse as one.
  if (/\.(?:tar|tgz|tar\.gz|tar\.zst)$/i.test(target.trim())) return null;
  const m = REFERENCE_RE.exec(target.trim());
  if (!m?.groups) return null;
  let registry = m.groups.registry;
  let repo = m.groups.repo!;
  // The first segment is a registry only when it looks like a host (a dot, a port, localhost).
  if (registry && !/[.:[]/.test(registry) && registry !== 'localhost') {
    repo = `${registry}/${repo}`;
    registry = undefined;
  }
  if (!registry || registry === 'docker.io' || registry === 'index.docker.io') {
    return {
      registry: 'docker.io',
      repository: repo.includes('/') ? repo : `library/${repo}`,
      ...(m.groups.tag ? { tag: m.groups.tag } : {}),
      ...(m.groups.digest ? { digest: m.groups.digest } : {}),
    };
  }
  return {
    registry,
    repository: repo,
    ...(m.groups.tag ? { tag: m.groups.tag } : {}),
    ...(m.groups.digest ? { digest: m.groups.digest } : {}),
  };
}

/** Loopback registries speak plain HTTP (as Docker allows); every other one HTTPS unless listed. */
export function registryBaseUrl(registry: string, insecure: readonly string[] = []): string {
  if (registry === 'docker.io') return 'https://registry-1.docker.io';
  const host = registry.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  const loopback = host === 'localhost' || (net.isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
  return `${loopback || insecure.includes(registry) ? 'http' : 'https'}://${registry}`;
}

const INDEX_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
];
const MANIFEST_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export interface PullOptions {
  signal: AbortSignal;
  /** The platform an index is narrowed to (default linux/amd64). */
  platform?: { os: string; architecture: string };
  /** Registries (host:port) reached over plain HTTP although not on loopback. */
  insecureRegistries?: readonly string[];
  /** Most bytes pulled for one image, layers and all (default 16 GiB). */
  maxBytes?: number;
  onProgress?: (p: { bytes: number; layers: number; of: number }) => void;
  /** The hosted worker's policy: every request (redirects and token services too) goes through it. */
  egress?: EgressPolicy;
}

export interface PulledImage {
  /** The manifest's digest (the image's identity). */
  digest: string;
  platform: string;
  layers: number;
  bytes: number;
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size: number;
  platform?: { os?: string; architecture?: string; variant?: string };
}

const fail = (message: string, retryable = false) =>
  new ScannerError(`Pulling the image failed: ${message}`, retryable);
const isDescriptor = (d: unknown): d is Descriptor =>
  typeof d === 'object' &&
  d !== null &&
  typeof (d as Descriptor).digest === 'string' &&
  /^sha256:[a-f0-9]{64}$/.test((d as Descriptor).digest) &&
  Number.isSafeInteger((d as Descriptor).size) &&
  (d as Descriptor).size >= 0;

/** A client of one repository on one registry: requests with the token dance done once. */
function registryClient(ref: ImageReference, o: PullOptions) {
  const base = registryBaseUrl(ref.registry, o.insecureRegistries);
  let auth: string | null = null;
  const dispatcher = o.egress ? guardedDispatcher(o.egress) : undefined;

  async function token(challenge: string): Promise<string> {
    const params = Object.fromEntries(
      [...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]),
    );
    if (!/^bearer\b/i.test(challenge) || !params.realm)
      throw fail(
        `the registry ${ref.registry} asks for credentials (${challenge.split(' ')[0]} authentication), and this worker has none`,
      );
    const url = new URL(params.realm);
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw fail(`the token realm ${params.realm} is not an http(s) URL`);
    if (params.service) url.searchParams.set('service', params.service);
    url.searchParams.set('scope', params.scope ?? `repository:${ref.repository}:pull`);
    const res = await send(url.href, {}, false);
    if (!res.ok) throw fail(`the token service ${url.origin} answered ${res.status}`, res.status >= 500);
    const body = (await res.json().catch(() => null)) as { token?: unknown; access_token?: unknown } | null;
    const t = body?.token ?? body?.access_token;
    if (typeof t !== 'string' || !t) throw fail(`the token service ${url.origin} gave no token`);
    return t;
  }

  async function send(url: string, headers: Record<string, string>, withAuth = true): Promise<Response> {
    try {
      return await fetch(url, {
        headers: { ...headers, ...(withAuth && auth ? { authorization: auth } : {}) },
        signal: o.signal,
        redirect: 'follow',
        ...(dispatcher ? { dispatcher } : {}),
      } as RequestInit);
    } catch (e) {
      if (o.signal.aborted) throw e;
      if (isEgressRefusal(e)) throw fail(egressRefusalMessage(new URL(url).hostname));
      throw fail(
        `${new URL(url).origin} could not be reached (${(e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message})`,
        true,
      );
    }
  }

  /** GET under /v2/<repository>/, answering a bearer challenge once. */
  async function get(path: string, accept?: string): Promise<Response> {
    const url = `${base}/v2/${ref.repository}/${path}`;
    const headers: Record<string, string> = accept ? { accept } : {};
    let res = await send(url, headers);
    if (res.status === 401 && !auth) {
      await res.body?.cancel();
      auth = `Bearer ${await token(res.headers.get('www-authenticate') ?? '')}`;
      res = await send(url, headers);
    }
    return res;
  }
  return { get, base };
}

/** Reads a manifest (at most 4 MiB), checking its digest when one is expected. */
async function readManifest(
  res: Response,
  what: string,
  expect?: string,
): Promise<{ json: Record<string, unknown>; digest: string; mediaType: string }> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_MANIFEST_BYTES) throw fail(`the ${what} is over ${MAX_MANIFEST_BYTES} bytes`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length > MAX_MANIFEST_BYTES) throw fail(`the ${what} is over ${MAX_MANIFEST_BYTES} bytes`);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (expect && digest !== expect) throw fail(`the ${what} does not match its digest ${expect} (got ${digest})`);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw fail(`the ${what} is not JSON`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw fail(`the ${what} is not a JSON object`);
  const o = json as Record<string, unknown>;
  const mediaType =
    typeof o.mediaType === 'string' ? o.mediaType : (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  return { json: o, digest, mediaType };
}

/**
 * Pulls `reference` into `dir` as an OCI image layout (oci-layout, index.json naming the one
 * manifest pulled, blobs/sha256/*). Throws ScannerError: retryable when the registry could not be
 * reached or answered 5xx, not when the image does not exist or cannot be read.
 */
export async function pullImage(reference: string, dir: string, o: PullOptions): Promise<PulledImage> {
  const ref = parseImageReference(reference);
  if (!ref) throw fail(`${JSON.stringify(reference.slice(0, 200))} is not an image reference`);
  const want = o.platform ?? { os: 'linux', architecture: 'amd64' };
  const maxBytes = o.maxBytes ?? 16 * 1024 ** 3;
  const client = registryClient(ref, o);
  const accept = [...MANIFEST_TYPES, ...INDEX_TYPES].join(', ');
  const what = `${ref.registry}/${ref.repository}${ref.digest ? `@${ref.digest}` : `:${ref.tag ?? 'latest'}`}`;

  const manifestAt = async (at: string, expect?: string) => {
    const res = await client.get(`manifests/${at}`, accept);
    if (res.status === 404) throw fail(`${what} was not found on ${client.base}`);
    if (res.status === 401 || res.status === 403)
      throw fail(`${client.base} refused to serve ${what} (${res.status}): the image is private or the name is wrong`);
    if (!res.ok)
      throw fail(
        `${client.base} answered ${res.status} for the manifest of ${what}`,
        res.status >= 500 || res.status === 429,
      );
    return readManifest(res, `manifest of ${what}`, expect);
  };

  let m = await manifestAt(ref.digest ?? ref.tag ?? 'latest', ref.digest);
  let platform = `${want.os}/${want.architecture}`;
  if (INDEX_TYPES.includes(m.mediaType) || Array.isArray(m.json.manifests)) {
    const list = (Array.isArray(m.json.manifests) ? m.json.manifests : []).filter(isDescriptor);
    const pick = list.find((d) => d.platform?.os === want.os && d.platform?.architecture === want.architecture);
    if (!pick) {
      const offered =
        list.map((d) => `${d.platform?.os ?? '?'}/${d.platform?.architecture ?? '?'}`).join(', ') || 'none';
      throw fail(`${what} has no ${platform} image (it offers: ${offered})`);
    }
    m = await manifestAt(pick.digest, pick.digest);
  } else platform = '';
  if (!MANIFEST_TYPES.includes(m.mediaType) && !(m.json.schemaVersion === 2 && m.json.config)) {
    throw fail(
      `${what} has a manifest of type ${m.mediaType || 'unknown'}; OCI and Docker v2 image manifests are read (schema 1 manifests are not)`,
    );
  }
  const config = m.json.config;
  const layers = Array.isArray(m.json.layers) ? m.json.layers : [];
  if (!isDescriptor(config) || !layers.every(isDescriptor))
    throw fail(`the manifest of ${what} has an invalid config or layer descriptor`);
  const total = config.size + layers.reduce((s, l) => s + l.size, 0);
  if (total > maxBytes) throw fail(`${what} is ${total} bytes, over the ${maxBytes}-byte limit`);

  const blobs = join(dir, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  let bytes = 0;
  const fetchBlob = async (d: Descriptor, n: number) => {
    const res = await client.get(`blobs/${d.digest}`);
    if (!res.ok || !res.body)
      throw fail(
        `${client.base} answered ${res.status} for the blob ${d.digest}`,
        res.status >= 500 || res.status === 429,
      );
    const hash = createHash('sha256');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > d.size) return cb(fail(`the blob ${d.digest} is longer than its ${d.size} bytes`));
        hash.update(chunk);
        bytes += chunk.length;
        o.onProgress?.({ bytes, layers: n, of: layers.length });
        cb(null, chunk);
      },
    });
    const tmp = join(blobs, `${d.digest.slice(7)}.part`);
    await pipeline(
      Readable.fromWeb(res.body as Parameters<typeof Readable.fromWeb>[0]),
      count,
      createWriteStream(tmp),
      { signal: o.signal },
    );
    const got = `sha256:${hash.digest('hex')}`;
    if (size !== d.size || got !== d.digest)
      throw fail(`the blob ${d.digest} arrived as ${got} (${size} of ${d.size} bytes)`);
    renameSync(tmp, join(blobs, d.digest.slice(7)));
  };
  await fetchBlob(config, 0);
  for (const [i, l] of layers.entries()) await fetchBlob(l, i + 1);

  // The layout: the manifest as pulled, and an index naming it with its platform.
  const manifestBytes = Buffer.from(JSON.stringify(m.json));
  const localDigest = `sha256:${createHash('sha256').update(manifestBytes).digest('hex')}`;
  writeFileSync(join(blobs, localDigest.slice(7)), manifestBytes);
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: localDigest,
          size: manifestBytes.length,
          platform: { os: want.os, architecture: want.architecture },
        },
      ],
    }),
  );
  return { digest: m.digest, platform: platform || `${want.os}/${want.architecture}`, layers: layers.length, bytes };
}
