// Builds the SPA (src/web → dist/web) with Vite unless the bundle on disk was built from the same
// inputs. The stamp is a SHA-256 over every file under src/web, the shared modules it imports
// from elsewhere (src/cmmc/cage-code.ts), the Vite and PostCSS configs and package-lock.json.
// Usage: `node scripts/build-web.ts [--force]`; the server start script imports ensureWebBuilt().
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const webSrc = path.join(repoRoot, 'src', 'web');
const outDir = path.join(repoRoot, 'dist', 'web');
const stampFile = path.join(outDir, '.build-stamp');
const extraInputs = [
  // Modules outside src/web that the bundle imports values from.
  'src/cmmc/cage-code.ts',
  'vite.config.ts',
  'postcss.config.cjs',
  'postcss.config.js',
  'postcss.config.mjs',
  'package-lock.json',
];

export interface EnsureWebBuiltOptions {
  force?: boolean;
  /** Print the one-line summary (default true). */
  log?: boolean;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(full)));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

/** SHA-256 over (relative path, content) of every build input, in a stable order. */
export async function computeWebInputsHash(): Promise<string> {
  const files = existsSync(webSrc) ? await listFiles(webSrc) : [];
  for (const name of extraInputs) {
    const full = path.join(repoRoot, name);
    if (existsSync(full)) files.push(full);
  }
  const relative = files.map((f) => path.relative(repoRoot, f).split(path.sep).join('/')).sort();
  const hash = createHash('sha256');
  for (const rel of relative) {
    const content = await readFile(path.join(repoRoot, rel));
    hash.update(rel);
    hash.update('\0');
    hash.update(String(content.length));
    hash.update('\0');
    hash.update(content);
  }
  return hash.digest('hex');
}

async function readStamp(): Promise<string | null> {
  try {
    return (await readFile(stampFile, 'utf8')).trim();
  } catch {
    return null;
  }
}

export async function ensureWebBuilt(options: EnsureWebBuiltOptions = {}): Promise<{ built: boolean }> {
  const log = options.log ?? true;
  const hash = await computeWebInputsHash();
  const upToDate = !options.force && (await readStamp()) === hash && existsSync(path.join(outDir, 'index.html'));
  if (upToDate) {
    if (log) console.log('web bundle up to date');
    return { built: false };
  }
  const started = performance.now();
  // Imported lazily: the up-to-date path (every server start) must not pay for loading Vite.
  const { build } = await import('vite');
  await build({
    configFile: path.join(repoRoot, 'vite.config.ts'),
    logLevel: 'warn',
  });
  await writeFile(stampFile, `${hash}\n`);
  if (log) {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`web bundle built in ${seconds}s → ${path.relative(repoRoot, outDir)}`);
  }
  return { built: true };
}

const invokedDirectly =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  ensureWebBuilt({ force: process.argv.includes('--force') }).catch((error: unknown) => {
    console.error('web bundle build failed:', error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
