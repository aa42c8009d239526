// Which image an archive or layout holds: docker save's manifest.json, or an OCI index (nested
// indexes followed, linux/amd64 preferred), down to the config and layer paths in stack order.
import { cleanPath, hostile } from './image-files.ts';

export type ImageFormat = 'docker-archive' | 'oci-layout';

export interface ManifestChoice {
  format: ImageFormat;
  config: string;
  layers: string[];
  repoTags: string[];
}

export function parseJson(buf: Buffer | undefined, what: string): unknown {
  if (!buf) throw hostile(`${what} is missing`);
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    throw hostile(`${what} is not valid JSON`);
  }
}

const DIGEST_RE = /^(sha256|sha512):([a-f0-9]{64}|[a-f0-9]{128})$/;
const MANIFEST_TYPES = new Set([
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
]);
const INDEX_TYPES = new Set([
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
]);

function blobPath(digest: unknown): string {
  const m = typeof digest === 'string' ? DIGEST_RE.exec(digest) : null;
  if (!m) throw hostile(`the digest ${JSON.stringify(String(digest).slice(0, 100))} is not a sha256 or sha512 digest`);
  return `blobs/${m[1]}/${m[2]}`;
}

interface Descriptor {
  mediaType?: string;
  digest?: string;
  platform?: { os?: string; architecture?: string };
  annotations?: Record<string, string>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The OCI manifest an index leads to: linux/amd64 when platforms are given, else the first image. */
function ociManifest(
  readBlob: (path: string) => Buffer | undefined,
  index: unknown,
  depth = 0,
): { manifest: Record<string, unknown>; tags: string[] } {
  if (depth > 4) throw hostile('OCI indexes nest too deeply');
  const manifests =
    isObject(index) && Array.isArray(index.manifests) ? (index.manifests.filter(isObject) as Descriptor[]) : [];
  if (manifests.length === 0) throw hostile('the OCI index lists no manifests');
  const platform = (m: Descriptor) => (isObject(m.platform) ? m.platform : {});
  const images = manifests.filter((m) => platform(m).os !== 'unknown');
  const pick =
    images.find((m) => platform(m).os === 'linux' && platform(m).architecture === 'amd64') ??
    images[0] ??
    manifests[0]!;
  const path = blobPath(pick.digest);
  const doc = parseJson(readBlob(path), `the manifest ${pick.digest}`);
  if (!isObject(doc)) throw hostile(`the manifest ${pick.digest} is not a JSON object`);
  const mediaType =
    typeof doc.mediaType === 'string' ? doc.mediaType : typeof pick.mediaType === 'string' ? pick.mediaType : undefined;
  const annotated = isObject(pick.annotations) ? pick.annotations['org.opencontainers.image.ref.name'] : undefined;
  const tag = typeof annotated === 'string' ? annotated.slice(0, 300) : undefined;
  if ((mediaType && INDEX_TYPES.has(mediaType)) || (!mediaType && Array.isArray(doc.manifests))) {
    const inner = ociManifest(readBlob, doc, depth + 1);
    return { manifest: inner.manifest, tags: tag ? [tag, ...inner.tags] : inner.tags };
  }
  if (mediaType && !MANIFEST_TYPES.has(mediaType))
    throw hostile(`the manifest media type ${mediaType} is not an image manifest`);
  return { manifest: doc, tags: tag ? [tag] : [] };
}

export function ociChoice(readBlob: (path: string) => Buffer | undefined, index: unknown): ManifestChoice {
  const { manifest, tags } = ociManifest(readBlob, index);
  const config = blobPath(isObject(manifest.config) ? manifest.config.digest : undefined);
  const layers = manifest.layers;
  if (!Array.isArray(layers)) throw hostile('the image manifest lists no layers');
  return {
    format: 'oci-layout',
    config,
    layers: layers.map((l: unknown) => blobPath(isObject(l) ? l.digest : undefined)),
    repoTags: tags,
  };
}

export function dockerChoice(manifestJson: unknown): ManifestChoice {
  const first: unknown = Array.isArray(manifestJson) ? manifestJson[0] : undefined;
  if (!isObject(first) || typeof first.Config !== 'string' || !Array.isArray(first.Layers))
    throw hostile('manifest.json does not describe an image');
  return {
    format: 'docker-archive',
    config: cleanPath(first.Config),
    layers: first.Layers.map((l) => {
      if (typeof l !== 'string') throw hostile('manifest.json names a layer that is not a path');
      return cleanPath(l);
    }),
    repoTags: Array.isArray(first.RepoTags)
      ? first.RepoTags.filter((t): t is string => typeof t === 'string').slice(0, 20)
      : [],
  };
}
