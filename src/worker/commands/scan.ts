// `rampart-worker scan <kind> --target T`: a one-off local scan, no server involved. Only the port
// scanner exists so far; other kinds are refused with the list of available ones (exit 2).
import { parseArgs } from 'node:util';
import { canonicalFindings, OUTPUT_FORMATS, progressLine, toJson, toSarif, toTable, type OutputFormat } from '../output.ts';
import { createPortScanner, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_FD_BUDGET, parsePortSpec, PortSpecError, topPorts, type OpenPort } from '../scanners/port/index.ts';
import { ScannerError } from '../scanners/types.ts';
import { EXIT, UsageError, parseIntFlag, type CliIo } from './common.ts';

/** Kinds `scan` can run locally. */
export const LOCAL_SCAN_KINDS = ['port'] as const;
const ALL_KINDS = ['port', 'template', 'webapp', 'container', 'edge'];

export const SCAN_HELP = `Usage: rampart-worker scan <kind> --target T [options]

Runs one scan on this machine and prints the result; nothing is sent to a server.
Kinds: ${LOCAL_SCAN_KINDS.join(', ')}

Options (port):
  --target T          host name or IP address (a URL's host is used)
  --ports R           ports and ranges, e.g. 1-1024,3306,8000-8100, or top:100 (default: top 1000)
  --format F          table (default), json or sarif
  --timeout MS        connect timeout per port (default ${DEFAULT_CONNECT_TIMEOUT_MS}; one retry on timeout)
  --concurrency N     sockets open at once (default ${DEFAULT_FD_BUDGET})
  --no-identify       skip banner grabbing and service probes
`;

export async function scanCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      target: { type: 'string', short: 't' },
      ports: { type: 'string', short: 'p' },
      format: { type: 'string', short: 'f' },
      timeout: { type: 'string' },
      concurrency: { type: 'string' },
      'no-identify': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(SCAN_HELP);
    return EXIT.ok;
  }
  const kind = positionals[0];
  if (!kind) throw new UsageError(`scan needs a kind: rampart-worker scan <kind> --target T (available: ${LOCAL_SCAN_KINDS.join(', ')})`);
  if (positionals.length > 1) throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[1])}`);
  if (!(LOCAL_SCAN_KINDS as readonly string[]).includes(kind)) {
    const known = ALL_KINDS.includes(kind);
    throw new UsageError(`${known ? `The ${kind} scanner is not available in this worker` : `Unknown scanner kind ${JSON.stringify(kind)}`}; available kinds: ${LOCAL_SCAN_KINDS.join(', ')}`);
  }
  if (!values.target?.trim()) throw new UsageError('scan needs --target (a host name or IP address)');
  const format = (values.format ?? 'table') as OutputFormat;
  if (!OUTPUT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')}`);
  const timeoutMs = parseIntFlag('timeout', values.timeout, 50, 60_000) ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const fdBudget = parseIntFlag('concurrency', values.concurrency, 1, 65_535) ?? DEFAULT_FD_BUDGET;
  let ports: number[];
  try {
    ports = values.ports ? parsePortSpec(values.ports) : topPorts(1_000);
  } catch (e) {
    if (e instanceof PortSpecError) throw new UsageError(`--ports: ${e.message}`);
    throw e;
  }

  const scanner = createPortScanner({ ports, timeoutMs, fdBudget, identify: values['no-identify'] !== true });
  const progress = progressLine(io.stderr as NodeJS.WriteStream);
  const started = Date.now();
  let output;
  try {
    output = await scanner.run({ target: values.target.trim(), options: {}, chunk: null, signal: io.signal, progress: (p, m) => progress.update(p, m ?? '') });
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
  const details = output.details as { host: string; scanned: number; open: OpenPort[] };
  const result = { target: values.target.trim(), kind: 'port' as const, openPorts: details.open, findings: canonicalFindings(output.findings) };
  if (format === 'json') io.stdout.write(toJson(result));
  else if (format === 'sarif') io.stdout.write(toSarif(result, scanner.tool));
  else io.stdout.write(toTable(result, { scanned: details.scanned, durationMs: Date.now() - started }));
  return EXIT.ok;
}
