// `npm run stress:pglite -- [--runs N] [--seconds S] [--control]`: churns embedded databases on
// threads the way the server and the test suite do, in child processes, and fails on any abnormal
// exit. Each child opens and closes PGlite instances on several threads at once (queries that make
// V8 re-compile the hot WebAssembly functions), while plain JavaScript threads start and end beside
// them (the port sweep and PDF threads). The child runs with `--trace-wasm-code-gc`, so its output
// also tells whether V8 freed WebAssembly code: with the mitigation (wasm-code-gc.ts) it must not.
// `--control` turns the code collector back on after the first database is open, to show what the
// mitigation prevents (that run may crash: that is the V8 bug).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { WASM_CODE_GC_FLAG } from '../src/db/wasm-code-gc.ts';

export interface ChurnResult {
  /** The child's exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Databases opened and closed, as the child reported them (0 when it died before the end). */
  databases: number;
  jsThreads: number;
  /** Lines where V8 traced a collection of WebAssembly code, and the first of them. */
  codeCollections: number;
  codeCollectionLines: string[];
  /** The first lines of a V8 or Node fatal error, if one was printed. */
  fatal: string | null;
  elapsedMs: number;
}

const FATAL = /# Fatal error|Check failed:|FATAL ERROR:|Segmentation fault/;

/** Runs one child for `seconds` and reads what it printed. */
export async function runChurn(opts: { seconds: number; parallel?: number; control?: boolean }): Promise<ChurnResult> {
  const script = fileURLToPath(import.meta.url);
  const args = [
    // As every Rampart process that runs PGlite: the flag on the command line, in force before V8
    // compiles anything. The control run leaves it off to show what the mitigation removes.
    ...(opts.control ? [] : [WASM_CODE_GC_FLAG]),
    // Re-compile hot functions after little work, so code the collector could free appears fast.
    '--wasm-tiering-budget=1000',
    '--trace-wasm-code-gc',
    script,
    '--child',
    '--seconds',
    String(opts.seconds),
    '--parallel',
    String(opts.parallel ?? 3),
    ...(opts.control ? ['--control'] : []),
  ];
  const started = Date.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: string) => {
    // The trace can be long; the counts are taken as it arrives and only the tail is kept.
    out = (out + d).slice(-200_000);
  };
  let codeCollections = 0;
  const codeCollectionLines: string[] = [];
  let fatal: string | null = null;
  const scan = (d: string) => {
    for (const line of d.split('\n')) {
      if (line.startsWith('[wasm-gc]') && /Triggering GC|Freeing|Found \d+ dead code objects/.test(line)) {
        codeCollections += 1;
        if (codeCollectionLines.length < 10) codeCollectionLines.push(line);
      }
    }
    keep(d);
    if (!fatal && FATAL.test(out)) {
      const lines = out.split('\n');
      const at = lines.findIndex((l) => FATAL.test(l));
      fatal = lines.slice(at, at + 6).join('\n');
    }
  };
  child.stdout.setEncoding('utf8').on('data', scan);
  child.stderr.setEncoding('utf8').on('data', scan);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (c, s) => resolve([c, s])),
  );
  const summary = /CHURN (\{.*\})/.exec(out);
  const counts = summary
    ? (JSON.parse(summary[1]!) as { databases: number; jsThreads: number })
    : { databases: 0, jsThreads: 0 };
  return { code, signal, ...counts, codeCollections, codeCollectionLines, fatal, elapsedMs: Date.now() - started };
}

async function child(seconds: number, parallel: number, control: boolean): Promise<void> {
  const { ThreadedPGlite } = await import('../src/db/pglite-thread.ts');
  const end = Date.now() + seconds * 1000;
  let databases = 0;
  let jsThreads = 0;
  let first = true;
  const database = async () => {
    const db = await ThreadedPGlite.create({ dir: undefined, template: null, sharedBuffers: '16MB', initFirst: false });
    if (first && control) setFlagsFromString('--wasm-code-gc');
    first = false;
    try {
      await db.query('create table t (n int, s text)');
      for (let i = 0; i < 6 && Date.now() < end; i++) {
        await db.query('insert into t select g, md5(g::text) from generate_series(1, 2000) g');
        await db.query('select n % 7 as k, count(*), max(s) from t group by 1 order by 1');
      }
    } finally {
      await db.close();
    }
    databases += 1;
  };
  const jsThread = () =>
    new Promise<void>((resolve, reject) => {
      const source =
        'let x = 0; for (let i = 0; i < 2e6; i++) x += Math.sqrt(i) * (i % 7);' +
        "const f = new Function('a', 'return a * 2 + ' + Math.random()); for (let i = 0; i < 1e5; i++) x += f(i);" +
        "require('node:worker_threads').parentPort.postMessage(x);";
      const w = new Worker(source, { eval: true });
      w.once('message', () => void w.terminate().then(() => resolve(), reject));
      w.once('error', reject);
    });
  // As in the server, the first database is open before other threads start.
  await database();
  const jsChurn = (async () => {
    while (Date.now() < end) {
      await Promise.all([jsThread(), jsThread()]);
      jsThreads += 2;
    }
  })();
  while (Date.now() < end) await Promise.all(Array.from({ length: parallel }, database));
  await jsChurn;
  process.stdout.write(`CHURN ${JSON.stringify({ databases, jsThreads })}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      child: { type: 'boolean', default: false },
      control: { type: 'boolean', default: false },
      runs: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '30' },
      parallel: { type: 'string', default: '3' },
    },
  });
  const seconds = Number(values.seconds);
  const parallel = Number(values.parallel);
  if (values.child) {
    await child(seconds, parallel, values.control);
  } else {
    const runs = Number(values.runs);
    let failed = 0;
    for (let i = 1; i <= runs; i++) {
      const r = await runChurn({ seconds, parallel, control: values.control });
      const ok = r.code === 0 && !r.fatal && (values.control || r.codeCollections === 0);
      if (!ok) failed += 1;
      console.log(JSON.stringify({ run: i, ok, ...r }));
    }
    console.log(JSON.stringify({ runs, failed, control: values.control }));
    process.exit(failed ? 1 : 0);
  }
}
