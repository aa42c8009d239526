// A real OCI registry for pull tests: Debian's `docker-registry` (the distribution registry) on
// 127.0.0.1 with a generated config and a temporary storage directory, optionally behind the
// registry token protocol served by a small token server of ours (RS256 JWTs with an x5c header,
// the key's self-signed certificate given to the registry as its root bundle). pushLayout()
// uploads an OCI layout the image-archive fixtures write (blobs, then the manifest), and
// pushIndex() a multi-platform index over manifests already pushed.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, createSign, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

interface TokenServer {
  realm: string;
  /** The scopes asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Grants every token it is asked for (anonymous pull and push), signed with `key`. */
async function startTokenServer(
  key: string,
  certDer: Buffer,
  o: { service: string; issuer: string },
): Promise<TokenServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/token') return void res.writeHead(404).end();
    const scope = url.searchParams.get('scope') ?? '';
    requests.push(scope);
    const access = scope
      .split(' ')
      .filter(Boolean)
      .map((s) => {
        const [type, name, actions] = s.split(':');
        return { type, name, actions: (actions ?? '').split(',') };
      });
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', x5c: [certDer.toString('base64')] }));
    const claims = b64url(
      JSON.stringify({
        iss: o.issuer,
        sub: '',
        aud: url.searchParams.get('service'),
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access,
      }),
    );
    const signature = b64url(createSign('RSA-SHA256').update(`${header}.${claims}`).sign(key));
    const token = `${header}.${claims}.${signature}`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    realm: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/token`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export interface TestRegistry {
  /** host:port, as an image reference names the registry. */
  host: string;
  url: string;
  /** Scopes the token server was asked for (token auth only). */
  tokenRequests: string[];
  close(): Promise<void>;
}

export async function startRegistry(o: { tokenAuth?: boolean } = {}): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-registry-'));
  let port = await freePort();
  let tokens: TokenServer | null = null;
  let auth = '';
  if (o.tokenAuth) {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'token.key'),
        '-out',
        join(dir, 'token.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=rampart-test-token-issuer',
      ],
      { stdio: 'ignore' },
    );
    const der = execFileSync('openssl', ['x509', '-in', join(dir, 'token.pem'), '-outform', 'DER']);
    tokens = await startTokenServer(readFileSync(join(dir, 'token.key'), 'utf8'), der, {
      service: 'rampart-test-registry',
      issuer: 'rampart-test-issuer',
    });
    auth = `auth:\n  token:\n    realm: ${tokens.realm}\n    service: rampart-test-registry\n    issuer: rampart-test-issuer\n    rootcertbundle: ${join(dir, 'token.pem')}\n`;
  }
  // A free port can be taken by another process before the registry binds it (seen once in a
  // full run): start again on a new port, at most three times.
  let child: ReturnType<typeof spawn> | undefined;
  let url = '';
  for (let attempt = 1; ; attempt += 1) {
    try {
      ({ child, url } = await launch(port));
      break;
    } catch (e) {
      if (attempt >= 3 || !String(e).includes('address already in use')) throw e;
      port = await freePort();
    }
  }
  async function launch(at: number) {
    writeFileSync(
      join(dir, 'config.yml'),
      `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${at}\n${auth}`,
    );
    const child = spawn(REGISTRY_BIN, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString().slice(0, 2_000)));
    const url = `http://127.0.0.1:${at}`;
    for (let i = 0; ; i += 1) {
      const up = await fetch(`${url}/v2/`).then(
        (r) => r.status === 200 || r.status === 401,
        () => false,
      );
      if (up) break;
      if (i > 100 || child.exitCode !== null) {
        child.kill();
        throw new Error(`docker-registry did not start: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return { child, url };
  }
  return {
    host: `127.0.0.1:${port}`,
    url,
    tokenRequests: tokens?.requests ?? [],
    async close() {
      child.kill();
      await tokens?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Requests to the registry, answering its token challenge (as a pushing client does). */
function pusher(registry: TestRegistry, repo: string) {
  let authorization: string | null = null;
  return async function send(
    method: string,
    pathOrUrl: string,
    body?: Buffer,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${registry.url}${pathOrUrl}`;
    const go = () =>
      fetch(url, {
        method,
        headers: { ...headers, ...(authorization ? { authorization } : {}) },
        ...(body ? { body: new Uint8Array(body) } : {}),
      });
    let res = await go();
    if (res.status === 401 && !authorization) {
      const challenge = res.headers.get('www-authenticate') ?? '';
      const p = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      const t = await fetch(
        `${p.realm}?service=${encodeURIComponent(p.service ?? '')}&scope=${encodeURIComponent(`repository:${repo}:pull,push`)}`,
      ).then((r) => r.json() as Promise<{ token: string }>);
      authorization = `Bearer ${t.token}`;
      res = await go();
    }
    return res;
  };
}

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Pushes the image of an OCI layout directory as repo:tag; returns the manifest's digest, size and media type. */
export async function pushLayout(
  registry: TestRegistry,
  repo: string,
  tag: string,
  layoutDir: string,
): Promise<{ digest: string; size: number; mediaType: string }> {
  const send = pusher(registry, repo);
  const blob = (digest: string) => readFileSync(join(layoutDir, 'blobs', 'sha256', digest.slice(7)));
  const index = JSON.parse(readFileSync(join(layoutDir, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifestBytes = blob(index.manifests[0]!.digest);
  const manifest = JSON.parse(manifestBytes.toString('utf8')) as {
    mediaType: string;
    config: { digest: string };
    layers: { digest: string }[];
  };
  for (const d of [manifest.config.digest, ...manifest.layers.map((l) => l.digest)]) {
    const start = await send('POST', `/v2/${repo}/blobs/uploads/`);
    if (start.status !== 202) throw new Error(`upload start: ${start.status} ${await start.text()}`);
    const location = new URL(start.headers.get('location')!, registry.url);
    location.searchParams.set('digest', d);
    const put = await send('PUT', location.href, blob(d), { 'content-type': 'application/octet-stream' });
    if (put.status !== 201) throw new Error(`blob ${d}: ${put.status} ${await put.text()}`);
  }
  const put = await send('PUT', `/v2/${repo}/manifests/${tag}`, manifestBytes, { 'content-type': manifest.mediaType });
  if (put.status !== 201) throw new Error(`manifest: ${put.status} ${await put.text()}`);
  return { digest: sha(manifestBytes), size: manifestBytes.length, mediaType: manifest.mediaType };
}

/** Pushes an OCI image index over manifests already in the repository; returns its digest. */
export async function pushIndex(
  registry: TestRegistry,
  repo: string,
  tag: string,
  entries: { digest: string; size: number; mediaType: string; platform: { os: string; architecture: string } }[],
): Promise<string> {
  const send = pusher(registry, repo);
  const bytes = Buffer.from(
    JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: entries }),
  );
  const put = await send('PUT', `/v2/${repo}/manifests/${tag}`, bytes, {
    'content-type': 'application/vnd.oci.image.index.v1+json',
  });
  if (put.status !== 201) throw new Error(`index: ${put.status} ${await put.text()}`);
  return sha(bytes);
}
