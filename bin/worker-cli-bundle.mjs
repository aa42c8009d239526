// The worker CLI of a checkout runs from one bundled file, dist/worker-cli/rampart-worker.cjs, built
// on demand (scripts/build-worker.ts) and kept while its inputs are unchanged, like the web bundle.
// Plain JavaScript on purpose: bin/rampart-worker.mjs checks the bundle on every start, and loading
// a TypeScript file would cost Node its type-stripping start-up (about 90 ms) before the check.
//
// The stamp lists every input (the bundle's own source modules, the lock files, the build scripts)
// with size, mtime and one SHA-256 over their contents. A start compares sizes and mtimes only; when
// one differs the contents are hashed, so a checkout that touched files without changing them keeps
// the bundle.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI_DIR = join(ROOT, 'dist', 'worker-cli');
export const CLI_BUNDLE = join(CLI_DIR, 'rampart-worker.cjs');
export const COMPILE_CACHE_DIR = join(CLI_DIR, 'compile-cache');
const STAMP = join(CLI_DIR, 'stamp.json');

/**
 * Inputs outside the bundle's own source modules: the dependencies (as the lock file pins them;
 * node_modules' own lock differs between a full and a production install, which must share a
 * bundle built by the full one) and the build.
 */
export const EXTRA_INPUTS = ['package-lock.json', 'scripts/build-worker.ts', 'bin/worker-cli-bundle.mjs'];

/** SHA-256 over (path, size, content) of each input, in the order given (sorted by writeStamp). */
export function inputsHash(files) {
  // Loaded only when a size or mtime moved: node:crypto costs a start several milliseconds.
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
  for (const rel of files) {
    const content = readFileSync(join(ROOT, rel));
    hash.update(`${rel}\0${content.length}\0`);
    hash.update(content);
  }
  return hash.digest('hex');
}

function statOf(rel) {
  const s = statSync(join(ROOT, rel), { throwIfNoEntry: false });
  return s ? [s.size, s.mtimeMs] : null;
}

/** Records the inputs of the bundle just built (paths relative to the repository root). */
export function writeStamp(files, hash) {
  const sorted = [...new Set(files)].sort();
  const stamp = { hash: hash ?? inputsHash(sorted), files: sorted.map((f) => [f, ...(statOf(f) ?? [-1, -1])]) };
  mkdirSync(CLI_DIR, { recursive: true });
  const tmp = `${STAMP}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(stamp));
  renameSync(tmp, STAMP);
}

/** True when dist/worker-cli holds a bundle built from the inputs as they are now. */
export function bundleIsCurrent() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
    if (!statSync(CLI_BUNDLE, { throwIfNoEntry: false })) return false;
  } catch {
    return false;
  }
  const files = stamp.files.map((f) => f[0]);
  if (
    stamp.files.every(([f, size, mtime]) => {
      const s = statOf(f);
      return s !== null && s[0] === size && s[1] === mtime;
    })
  )
    return true;
  try {
    if (inputsHash(files) !== stamp.hash) return false;
  } catch {
    return false; // an input is gone
  }
  try {
    writeStamp(files, stamp.hash); // same contents, new mtimes: remember them
  } catch {
    /* a read-only install: the next start hashes again */
  }
  return true;
}
