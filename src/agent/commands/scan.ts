// `rampart-worker scan <kind> --target T`: a one-off local scan, no server involved. The command
// owns --target, --format and --help; each kind brings its own flags and output lines
// (src/agent/scanners/<kind>/cli.ts).
import { parseArgs } from 'node:util';
import { isScanKind } from '../../lib/scan-kinds.ts';
import { OUTPUT_FORMATS, progressLine, type OutputFormat } from '../output-text.ts';
import { LOCAL_SCAN_KINDS, loadScanCli, loadScanClis } from '../scanners/index.ts';
import { ScannerError } from '../scanners/types.ts';
import { EXIT, UsageError, type CliIo } from './common.ts';

/** The help of `scan`: every kind's own options (loads every scanner's command-line face). */
export async function scanHelp(): Promise<string> {
  const clis = await loadScanClis();
  return `Usage: rampart-worker scan <kind> --target T [options]

Runs one scan on this machine and prints the result; nothing is sent to a server.
Kinds: ${LOCAL_SCAN_KINDS.join(', ')}

Options (every kind):
  --target T          what to scan (see each kind)
  --format F          table (default), json or sarif
${clis.map((c) => `\nOptions (${c.kind}):\n${c.help.replace(/\n?$/, '\n')}`).join('')}`;
}

export async function scanCommand(args: string[], io: CliIo): Promise<number> {
  // The kind decides which flags exist, so find it before parsing strictly.
  const kind = args.find((a) => !a.startsWith('-'));
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(await scanHelp());
    return EXIT.ok;
  }
  if (!kind)
    throw new UsageError(
      `scan needs a kind: rampart-worker scan <kind> --target T (available: ${LOCAL_SCAN_KINDS.join(', ')})`,
    );
  const cli = await loadScanCli(kind);
  if (!cli) {
    const known = isScanKind(kind);
    throw new UsageError(
      `${known ? `The ${kind} scanner is not available in this worker` : `Unknown scanner kind ${JSON.stringify(kind)}`}; available kinds: ${LOCAL_SCAN_KINDS.join(', ')}`,
    );
  }
  const { values, positionals } = parseArgs({
    args,
    options: {
      target: { type: 'string', short: 't' },
      format: { type: 'string', short: 'f' },
      help: { type: 'boolean', short: 'h' },
      ...cli.options,
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 1) throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[1])}`);
  const target = typeof values.target === 'string' ? values.target.trim() : '';
  if (!target)
    throw new UsageError(
      `scan needs --target (${kind === 'port' || kind === 'edge' ? 'a host name or IP address' : kind === 'container' ? 'an image archive or OCI layout' : 'a URL'})`,
    );
  const format = (values.format ?? 'table') as OutputFormat;
  if (!OUTPUT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}`);
  const { scanner, options } = cli.prepare(values, target);

  const progress = progressLine(io.stderr as NodeJS.WriteStream);
  const started = Date.now();
  let output;
  try {
    output = await scanner.run({
      target,
      options,
      chunk: null,
      signal: io.signal,
      progress: (p, m) => progress.update(p, m ?? ''),
    });
  } catch (e) {
    progress.clear();
    if (io.signal.aborted) {
      io.stderr.write('Scan interrupted.\n');
      return EXIT.interrupted;
    }
    if (e instanceof ScannerError) {
      io.stderr.write(`Scan failed: ${e.message}\n`);
      return EXIT.failed;
    }
    throw e;
  }
  progress.clear();
  const details = output.details ?? {};
  // An inconclusive or partial result is said on stderr too, so a table or SARIF reader sees it.
  if (output.inconclusive) io.stderr.write(`Inconclusive: ${output.inconclusive}\n`);
  else if (output.partial) io.stderr.write(`Partial result: ${output.partial}\n`);
  const outcome = {
    ...(output.inconclusive ? { inconclusive: output.inconclusive } : {}),
    ...(output.partial ? { partial: output.partial } : {}),
  };
  const result = { target, kind: cli.kind, findings: output.findings, extra: { ...outcome, ...cli.json(details) } };
  // Loaded now, not at start: it builds the findings schema, which would delay the first probe.
  const { toJson, toSarif, toTable } = await import('../output.ts');
  if (format === 'json') io.stdout.write(toJson(result));
  else if (format === 'sarif') io.stdout.write(toSarif(result, scanner.tool));
  else io.stdout.write(toTable(result, cli.table(details, { durationMs: Date.now() - started })));
  return EXIT.ok;
}
