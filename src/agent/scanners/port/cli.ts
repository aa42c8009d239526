// `rampart-worker scan port`: flags, help and output of the port scanner.
import { UsageError, parseIntFlag } from '../../commands/common.ts';
import { renderTable, clip } from '../../output-text.ts';
import type { LocalScanCli } from '../types.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_FD_BUDGET, type OpenPort } from './engine.ts';
import { createPortScanner, PORT_ENGINES, type PortEngine } from './index.ts';
import { parsePortSpec, PortSpecError, topPorts } from './ports.ts';

export const portCli: LocalScanCli = {
  kind: 'port',
  help: `  --target T          host name or IP address (a URL's host is used)
  --ports R           ports and ranges, e.g. 1-1024,3306,8000-8100, or top:100 (default: top 1000)
  --timeout MS        connect timeout per port (default ${DEFAULT_CONNECT_TIMEOUT_MS}; one retry on timeout)
  --concurrency N     sockets open at once (default ${DEFAULT_FD_BUDGET})
  --no-identify       skip banner grabbing and service probes
  --engine E          native (default) or nmap (needs nmap installed; runs nmap -sT [-sV])
`,
  options: {
    ports: { type: 'string', short: 'p' },
    timeout: { type: 'string' },
    concurrency: { type: 'string' },
    'no-identify': { type: 'boolean' },
    engine: { type: 'string' },
  },
  prepare(values) {
    const timeoutMs =
      parseIntFlag('timeout', values.timeout as string | undefined, 50, 60_000) ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const fdBudget =
      parseIntFlag('concurrency', values.concurrency as string | undefined, 1, 65_535) ?? DEFAULT_FD_BUDGET;
    const engine = (values.engine ?? 'native') as PortEngine;
    if (!PORT_ENGINES.includes(engine)) throw new UsageError(`--engine must be one of ${PORT_ENGINES.join(', ')}`);
    let ports: number[];
    try {
      ports = values.ports ? parsePortSpec(values.ports as string) : topPorts(1_000);
    } catch (e) {
      if (e instanceof PortSpecError) throw new UsageError(`--ports: ${e.message}`);
      throw e;
    }
    return {
      scanner: createPortScanner({ ports, timeoutMs, fdBudget, engine, identify: values['no-identify'] !== true }),
      options: {},
    };
  },
  table(details, meta) {
    const open = details.open as OpenPort[];
    const scanned = details.scanned as number;
    const lines = [
      `port scan of ${String(details.host)}: ${open.length} open of ${scanned} port${scanned === 1 ? '' : 's'} in ${(meta.durationMs / 1000).toFixed(1)} s`,
    ];
    if (open.length) {
      lines.push('');
      lines.push(
        renderTable(
          ['PORT', 'SERVICE', 'BANNER'],
          open.map((p) => [
            `${p.port}/tcp`,
            `${p.service ?? 'unknown'}${p.identifiedBy === 'port' ? '?' : ''}`,
            clip(p.banner ?? [p.product, p.version].filter(Boolean).join(' '), 80),
          ]),
        ),
      );
    }
    return lines;
  },
  json(details) {
    const open = details.open as OpenPort[];
    return {
      openPorts: open.map((p) => ({
        port: p.port,
        ...(p.service ? { service: p.service } : {}),
        ...(p.banner ? { banner: p.banner } : {}),
      })),
    };
  },
};
