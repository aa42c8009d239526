// Container assets given as a registry reference: images pushed to a real registry (Debian's
// docker-registry on loopback, once open and once behind the token protocol) are pulled through
// the OCI distribution API and scanned like an archive: gzip and zstd layers, a multi-platform
// index narrowed to linux/amd64, a digest-pinned reference, and the failures a pull can meet.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alpineImage, debianImage, writeOciLayout, type TestImage } from '../../../../test/fixtures/image-archives.ts';
import {
  pushIndex,
  pushLayout,
  REGISTRY_BIN,
  startRegistry,
  type TestRegistry,
} from '../../../../test/helpers/registry.ts';
import type { ScanTask } from '../types.ts';
import { createContainerScanner, parseImageReference, pullImage, registryBaseUrl } from './index.ts';

const SAMPLE = join(import.meta.dirname, 'sample-osv');
const work = mkdtempSync(join(tmpdir(), 'rampart-registry-test-'));
const available = existsSync(REGISTRY_BIN);
let open: TestRegistry;
let guarded: TestRegistry;
const pushed: Record<string, { digest: string; size: number; mediaType: string }> = {};

const zstd = (image: TestImage): TestImage => ({
  ...image,
  layers: image.layers.map((l) => ({ ...l, gzip: false, zstd: true })),
});
const arm = (image: TestImage): TestImage => ({ ...image, config: { ...image.config, architecture: 'arm64' } });

async function push(registry: TestRegistry, repo: string, tag: string, image: TestImage) {
  const dir = join(work, `${repo.replace(/\//g, '_')}-${tag}-${registry.host.replace(/\W/g, '_')}`);
  await writeOciLayout(dir, image);
  return pushLayout(registry, repo, tag, dir);
}

function task(target: string, extra: Partial<ScanTask> = {}): ScanTask {
  return {
    target,
    options: {},
    chunk: null,
    signal: new AbortController().signal,
    progress: () => undefined,
    ...extra,
  };
}

beforeAll(async () => {
  if (!available) return;
  [open, guarded] = await Promise.all([startRegistry(), startRegistry({ tokenAuth: true })]);
  pushed.debian = await push(open, 'team/debian', '12', debianImage());
  pushed.debianZstd = await push(open, 'team/debian-zstd', '12', zstd(debianImage()));
  pushed.guarded = await push(guarded, 'private/debian', '12', debianImage());
  // A multi-platform image: an arm64 Alpine and an amd64 Debian (zstd) under one index.
  pushed.multiArm = await push(open, 'team/multi', 'arm64', arm(alpineImage()));
  pushed.multiAmd = await push(open, 'team/multi', 'amd64', zstd(debianImage()));
  await pushIndex(open, 'team/multi', 'latest', [
    { ...pushed.multiArm, platform: { os: 'linux', architecture: 'arm64' } },
    { ...pushed.multiAmd, platform: { os: 'linux', architecture: 'amd64' } },
  ]);
}, 120_000);

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('image references', () => {
  it('reads registry, repository, tag and digest as Docker does', () => {
    expect(parseImageReference('nginx')).toEqual({ registry: 'docker.io', repository: 'library/nginx' });
    expect(parseImageReference('bitnami/redis:7.2')).toEqual({
      registry: 'docker.io',
      repository: 'bitnami/redis',
      tag: '7.2',
    });
    expect(parseImageReference(`ghcr.io/acme/api:1.4@sha256:${'a'.repeat(64)}`)).toEqual({
      registry: 'ghcr.io',
      repository: 'acme/api',
      tag: '1.4',
      digest: `sha256:${'a'.repeat(64)}`,
    });
    expect(parseImageReference('localhost:5000/app')).toEqual({ registry: 'localhost:5000', repository: 'app' });
    expect(parseImageReference('/srv/images/app.tar')).toBeNull();
    expect(parseImageReference('archive:sha256:abc')).toBeNull();
    expect(parseImageReference('debian.tar')).toBeNull();
    expect(registryBaseUrl('docker.io')).toBe('https://registry-1.docker.io');
    expect(registryBaseUrl('127.0.0.1:5000')).toBe('http://127.0.0.1:5000');
    expect(registryBaseUrl('registry.internal:5000')).toBe('https://registry.internal:5000');
    expect(registryBaseUrl('registry.internal:5000', ['registry.internal:5000'])).toBe('http://registry.internal:5000');
  });
});

describe.skipIf(!available)('pulling from a registry', () => {
  const scanner = createContainerScanner({ osvDbPath: SAMPLE });

  it('pulls an image by tag and scans it like an archive, naming the manifest digest it read', async () => {
    const out = await scanner.run(task(`${open.host}/team/debian:12`));
    const rules = out.findings.map((f) => f.ruleId);
    expect(rules).toContain('container/runs-as-root');
    expect(rules.some((r) => /^(GHSA|CVE|DSA|DLA)-/.test(r))).toBe(true);
    expect(out.coverage?.image).toEqual({
      reference: `${open.host}/team/debian:12`,
      digest: pushed.debian!.digest,
      platform: 'linux/amd64',
    });
    expect(out.details).toMatchObject({
      pulled: { digest: pushed.debian!.digest, layers: expect.any(Number) },
      image: { osEcosystem: 'Debian:12' },
    });
  });

  it('reads zstd layers, and the same findings come out as from gzip ones', async () => {
    const [gzip, zst] = await Promise.all([
      scanner.run(task(`${open.host}/team/debian:12`)),
      scanner.run(task(`${open.host}/team/debian-zstd:12`)),
    ]);
    const ids = (o: typeof gzip) => o.findings.map((f) => `${f.ruleId} ${f.location.package ?? ''}`).sort();
    expect(ids(zst)).toEqual(ids(gzip));
  });

  it('narrows a multi-platform index to linux/amd64', async () => {
    const out = await scanner.run(task(`${open.host}/team/multi:latest`));
    expect(out.coverage?.image).toMatchObject({ digest: pushed.multiAmd!.digest, platform: 'linux/amd64' });
    expect(out.details).toMatchObject({ image: { osEcosystem: 'Debian:12' } });
  });

  it('pulls a digest-pinned reference and refuses a manifest that does not match its digest', async () => {
    const ok = await scanner.run(task(`${open.host}/team/debian@${pushed.debian!.digest}`));
    expect(ok.coverage?.image?.digest).toBe(pushed.debian!.digest);
    const err = await scanner.run(task(`${open.host}/team/debian@sha256:${'0'.repeat(64)}`)).catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'ScannerError',
      retryable: false,
      message: expect.stringMatching(/was not found/),
    });
  });

  it('asks the token service for a pull token when the registry demands one', async () => {
    expect((await fetch(`${guarded.url}/v2/`)).status).toBe(401);
    const before = guarded.tokenRequests.length;
    const out = await scanner.run(task(`${guarded.host}/private/debian:12`));
    expect(out.findings.map((f) => f.ruleId)).toContain('container/runs-as-root');
    expect(guarded.tokenRequests.slice(before)).toEqual(['repository:private/debian:pull']);
  });

  it('fails a missing image for good and an unreachable registry for a retry, leaving no pulled files behind', async () => {
    const pullDir = join(work, 'pulls');
    const s = createContainerScanner({ osvDbPath: SAMPLE, pullDir });
    const missing = await s.run(task(`${open.host}/team/nothing:1`)).catch((e: unknown) => e);
    expect(missing).toMatchObject({
      name: 'ScannerError',
      retryable: false,
      message: expect.stringMatching(/team\/nothing:1 was not found/),
    });
    const down = await s.run(task('127.0.0.1:1/team/debian:12')).catch((e: unknown) => e);
    expect(down).toMatchObject({
      name: 'ScannerError',
      retryable: true,
      message: expect.stringMatching(/could not be reached/),
    });
    const noPlatform = await pullImage(`${open.host}/team/multi:latest`, join(work, 'np'), {
      signal: new AbortController().signal,
      platform: { os: 'linux', architecture: 's390x' },
    }).catch((e: unknown) => e);
    expect(noPlatform).toMatchObject({
      message: expect.stringMatching(/has no linux\/s390x image \(it offers: linux\/arm64, linux\/amd64\)/),
    });
    expect(existsSync(pullDir) ? (await import('node:fs')).readdirSync(pullDir) : []).toEqual([]);
  });
});
