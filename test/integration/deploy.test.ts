// The deployment files cannot be run here (no container engine, no cluster), so they are checked
// with what can run: their parsers, the server's own configuration schema, and the source tree.
// - Dockerfile: multi-stage, production dependencies only, non-root, health check, and every
//   package the server imports is a runtime dependency (so `npm ci --omit=dev` is enough).
// - deploy/compose.yaml: PostgreSQL, an S3-compatible store, a migration, two replicas behind the
//   proxy, one worker; every required variable is in .env.example and every Rampart variable is
//   one the server knows; `docker-compose config` (Compose v1 from Debian, which validates
//   against the compose-spec JSON schema and checks references without a container engine)
//   accepts it with .env.example's variables filled in.
// - deploy/k8s: every manifest validates against the Kubernetes API schema (kubernetes-models);
//   Deployment with probes on /healthz and /readyz, Service, migration Job, secrets by reference;
//   the ConfigMap parses with the server's configuration schema and names shared S3 storage.
// - deploy/proxy/nginx.conf: balances over exactly the replicas and replaces X-Forwarded-For
//   (run by a real nginx in deploy-proxy.test.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/lib/config.ts';

const root = join(import.meta.dirname, '../..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const readme = read('README.md');
/** Variables documented in the README's configuration table (the server reads no others). */
const knownVars = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));

/** Bare package imports reachable from a source file (static and dynamic imports). */
function packagesImportedFrom(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const found = new Map<string, string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '');
    for (const m of src.matchAll(
      /^\s*(?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm,
    )) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) {
        const p = resolve(dirname(file), spec);
        if (existsSync(p)) walk(p);
      } else if (!spec.startsWith('node:')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!found.has(name)) found.set(name, file.slice(root.length + 1));
      }
    }
  };
  walk(join(root, entry));
  return found;
}

describe('Dockerfile', () => {
  const lines = read('Dockerfile')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages = lines.filter((l) => /^FROM /i.test(l));

  it('builds in one stage and runs production dependencies only, as a non-root user, with a health check', () => {
    expect(stages).toHaveLength(2);
    const runtime = lines.slice(lines.indexOf(stages[1]!));
    expect(runtime.some((l) => /^RUN npm ci --omit=dev\b/.test(l))).toBe(true);
    expect(runtime.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER node');
    expect(runtime.some((l) => l.startsWith('HEALTHCHECK ') && l.includes('/healthz'))).toBe(true);
    // The embedded database's V8 crash mitigation is on every server start command (wasm-code-gc.ts).
    expect(runtime.at(-1)).toBe('CMD ["node", "--no-wasm-code-gc", "src/server/main.ts"]');
    expect(pkg.scripts['start:prod']).toBe('node --no-wasm-code-gc src/server/main.ts');
    for (const script of ['start', 'dev', 'migrate', 'admin'])
      expect(pkg.scripts[script], script).toContain('--no-wasm-code-gc');
    // And on every benchmark and the stress test, which run the embedded database too.
    const others = Object.keys(pkg.scripts).filter((s) => s.startsWith('bench:') || s === 'stress:pglite');
    expect(others.length).toBeGreaterThan(10);
    for (const script of others) expect(pkg.scripts[script], script).toMatch(/^node --no-wasm-code-gc /);
    // Everything the runtime stage copies from the build stage exists there: sources or the build's output.
    for (const l of runtime.filter((x) => x.startsWith('COPY --from=build'))) {
      const from = l.split(/\s+/)[2]!.replace(/^\/app\//, '');
      expect(from === 'dist/web' || from === 'dist/worker-cli' || existsSync(join(root, from)), l).toBe(true);
    }
    expect(pkg.scripts.build).toContain('build-web');
    expect(pkg.scripts.build).toContain('build-worker.ts --cli');
  });

  it('needs no dev dependency at run time: every package the server and the worker import is a dependency', () => {
    for (const entry of ['src/server/main.ts', 'src/db/migrate-cli.ts', 'src/agent/main.ts']) {
      const dev = [...packagesImportedFrom(entry)].filter(([name]) => !pkg.dependencies[name]);
      expect(dev, entry).toEqual([]);
    }
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml')) as { services: Record<string, Record<string, unknown>> };
  const s = compose.services;

  it('runs PostgreSQL, an S3-compatible store, a migration, two replicas behind a proxy, and one worker', () => {
    expect(Object.keys(s).sort()).toEqual([
      'migrate',
      'minio',
      'minio-setup',
      'postgres',
      'proxy',
      'rampart-1',
      'rampart-2',
      'worker',
    ]);
    for (const r of ['rampart-1', 'rampart-2'])
      expect(s[r]!.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
    expect(s.migrate!.command).toEqual(['node', 'src/db/migrate-cli.ts']);
    expect((s.worker!.command as string[])[0]).toContain('rampart-worker.mjs run');
    // The proxy balances over exactly the replicas.
    const nginx = read('deploy/proxy/nginx.conf');
    expect([...nginx.matchAll(/server (rampart-\d):3000/g)].map((m) => m[1])).toEqual(['rampart-1', 'rampart-2']);
    // TRUST_PROXY=true takes the left-most address: an appended header would let clients pick theirs.
    expect(s['rampart-1']!.environment).toMatchObject({ TRUST_PROXY: 'true' });
    expect([...nginx.matchAll(/proxy_set_header\s+X-Forwarded-For\s+([^;]+);/gi)].map((m) => m[1])).toEqual([
      '$remote_addr',
    ]);
  });

  it('uses only variables the server knows, shares the secrets between replicas, and lists every required one in .env.example', () => {
    const env = s['rampart-1']!.environment as Record<string, string>;
    expect(s['rampart-2']!.environment).toEqual(env);
    for (const k of Object.keys(env)) expect(knownVars.has(k), k).toBe(true);
    for (const k of ['DATABASE_URL', 'APP_ENCRYPTION_KEY', 'AUTH_SECRET', 'STORAGE_S3_ENDPOINT', 'STORAGE_S3_BUCKET'])
      expect(env[k], k).toBeTruthy();
    const example = read('deploy/.env.example');
    const required = [...read('deploy/compose.yaml').matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1]!);
    for (const k of new Set(required)) expect(example, k).toMatch(new RegExp(`^${k}=`, 'm'));
  });
});

/** Debian's docker-compose 1.29 (.ci/run installs it); its validation needs no container engine. */
const composeV1 = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!composeV1)('deploy/compose.yaml with docker-compose config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rampart-compose-'));
  // Every variable of .env.example given a value, as an operator's deploy/.env would.
  const envFile = join(dir, '.env');
  writeFileSync(envFile, read('deploy/.env.example').replace(/^([A-Z_]+)=$/gm, '$1=example-value'));
  // Compose v1's schema predates the top-level `name` (compose-spec 2022); everything else is checked.
  const composeText = read('deploy/compose.yaml').replace(/^name: .*$/m, '');
  const check = (text: string) => {
    const file = join(dir, 'compose.yaml');
    writeFileSync(file, text);
    return spawnSync('docker-compose', ['-f', file, '--env-file', envFile, 'config', '-q'], { encoding: 'utf8' });
  };

  it('accepts the file, and refuses an unknown option or a reference to a missing service', () => {
    try {
      const ok = check(composeText);
      expect(ok.stderr).toBe('');
      expect(ok.status).toBe(0);
      const unknown = check(composeText.replace(/^(\s+)restart: /m, '$1restrat: '));
      expect(unknown.status).not.toBe(0);
      expect(unknown.stderr).toContain('Unsupported config option');
      const dangling = check(
        composeText.replace(/(\n\s+depends_on:\n)/, '$1      nonexistent: { condition: service_started }\n'),
      );
      expect(dangling.status).not.toBe(0);
      expect(dangling.stderr).toContain("depends on service 'nonexistent' which is undefined");
      // Without a required secret the file does not even resolve.
      writeFileSync(envFile, read('deploy/.env.example'));
      const missing = check(composeText);
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toMatch(/set [A-Z_]+/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/k8s', () => {
  const kustomization = parse(read('deploy/k8s/kustomization.yaml')) as { resources: string[] };
  // Parsed YAML: its shape is what the assertions below check.
  const docs = kustomization.resources.flatMap((f) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    parseAllDocuments(read(`deploy/k8s/${f}`)).map((d) => d.toJS() as Record<string, any>),
  );
  const byKind = (kind: string) => docs.filter((d) => d.kind === kind);

  it('validates every manifest against the Kubernetes API schema of its kind', async () => {
    expect(docs.length).toBeGreaterThanOrEqual(4);
    for (const d of docs) {
      const [group, version] = String(d.apiVersion).includes('/')
        ? String(d.apiVersion).split('/')
        : ['', String(d.apiVersion)];
      const mod = (await import(`kubernetes-models/${group ? `${group}/` : ''}${version}/${d.kind}`)) as Record<
        string,
        new (o: unknown) => { validate(): void }
      >;
      expect(() => new mod[d.kind]!(d).validate(), `${d.kind} ${d.metadata?.name}`).not.toThrow();
    }
    // The validation is real: a wrongly typed field of the same Deployment is refused.
    const [dep] = byKind('Deployment');
    const broken = structuredClone(dep!);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    const { Deployment } = await import('kubernetes-models/apps/v1/Deployment');
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/);
  });

  it('lists every manifest of the directory in the kustomization', () => {
    const files = readdirSync(join(root, 'deploy/k8s')).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });

  it('has a Deployment with probes on /healthz and /readyz, non-root, and secrets by reference; a Service; a migration Job', () => {
    const [dep] = byKind('Deployment');
    const c = dep!.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(dep!.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(c.envFrom).toContainEqual({ secretRef: { name: 'rampart-secrets' } });
    expect(JSON.stringify(docs)).not.toMatch(/AUTH_SECRET|APP_ENCRYPTION_KEY|postgres:\/\//);
    const [svc] = byKind('Service');
    expect(svc!.spec.selector).toEqual(dep!.spec.selector.matchLabels);
    const [job] = byKind('Job');
    expect(job!.spec.template.spec.containers[0].command).toEqual(['node', 'src/db/migrate-cli.ts']);
    expect(job!.spec.template.spec.restartPolicy).toBe('Never');
  });

  it('has a ConfigMap the server accepts (with the secrets it takes from the Secret), with shared S3 storage', () => {
    const [cm] = byKind('ConfigMap');
    for (const k of Object.keys(cm!.data)) expect(knownVars.has(k), k).toBe(true);
    // Replicas must share stored files: pod volumes are per replica and lost on restart.
    for (const k of ['STORAGE_S3_ENDPOINT', 'STORAGE_S3_BUCKET']) expect(cm!.data[k], k).toBeTruthy();
    const secrets = {
      DATABASE_URL: 'postgres://rampart@db:5432/rampart',
      STORAGE_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      STORAGE_S3_SECRET_ACCESS_KEY: 'example-secret-key',
    };
    expect(loadConfig({ ...cm!.data, ...secrets }).STORAGE_S3_BUCKET).toBe(cm!.data.STORAGE_S3_BUCKET);
    // Without the keys from the Secret the server refuses to start rather than run without shared storage.
    expect(() => loadConfig({ ...cm!.data, DATABASE_URL: secrets.DATABASE_URL })).toThrow(/STORAGE_S3/);
    // The Secret's documented contents name the storage keys.
    const header = read('deploy/k8s/deployment.yaml');
    for (const k of [
      'STORAGE_S3_ACCESS_KEY_ID',
      'STORAGE_S3_SECRET_ACCESS_KEY',
      'DATABASE_URL',
      'APP_ENCRYPTION_KEY',
      'AUTH_SECRET',
    ])
      expect(header, k).toContain(k);
  });
});
