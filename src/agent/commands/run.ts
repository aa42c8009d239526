// `rampart-worker run`: leases scans of the kinds this worker has scanners for until stopped.
// SIGINT/SIGTERM stop it gracefully: no new leases, running scans get --grace seconds to finish
// and upload, the rest are released back to the queue.
import { parseArgs } from 'node:util';
import { createAgent, type AgentLogger } from '../agent.ts';
import { createWorkerClient } from '../client.ts';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultConfigPath, defaultOsvDbPath, readConfig } from '../config.ts';
import { builtinScanners } from '../scanners/builtin.ts';
import { DEFAULT_FD_BUDGET, PORT_ENGINES, type PortEngine } from '../scanners/port/index.ts';
import { WORKER_VERSION } from '../version.ts';
import { EXIT, UsageError, parseIntFlag, type CliIo } from './common.ts';

export const RUN_HELP = `Usage: rampart-worker run [options]

Leases scans from Rampart and runs them until stopped (SIGINT/SIGTERM stop gracefully).

Options:
  --concurrency N   scans at once (default 1, at most 64)
  --grace S         seconds running scans may take to finish when stopping (default 30)
  --fd-budget N     sockets the port scanner may hold open per scan (default ${DEFAULT_FD_BUDGET})
  --port-engine E   native (default) or nmap (needs nmap installed) for port scans
  --osv-db PATH     advisory database for container scans (default: $RAMPART_OSV_DB, else
                    osv.sqlite next to the config file; without one, container scans are not leased)
  --insecure-registry HOST[:PORT]
                    pull container images from this registry over plain HTTP (repeatable;
                    loopback registries always are)
  --pull-dir DIR    where pulled images are staged while scanned (default: the system temp dir)
  --json-logs       log JSON lines instead of text
  --config PATH     config file (default: ${defaultConfigPath()})
`;

/** The container scanner's settings from the run flags: registries reached over HTTP, staging dir. */
export function containerSettings(
  osvDbPath: string,
  insecure: string[] | undefined,
  pullDir: string | undefined,
): { osvDbPath: string; insecureRegistries?: string[]; pullDir?: string } {
  const registries = (insecure ?? []).map((r) => r.trim().toLowerCase()).filter(Boolean);
  for (const r of registries) {
    if (!/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/.test(r)) {
      throw new UsageError(`--insecure-registry: ${r} is not a registry host (HOST or HOST:PORT)`);
    }
  }
  return {
    osvDbPath,
    ...(registries.length ? { insecureRegistries: registries } : {}),
    ...(pullDir ? { pullDir: resolve(pullDir) } : {}),
  };
}

/** Log lines on stderr: "2025-01-01T00:00:00.000Z INFO message key=value" or JSON. */
export function streamLogger(stream: NodeJS.WritableStream, json: boolean): AgentLogger {
  const write =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      const time = new Date().toISOString();
      if (json) return void stream.write(`${JSON.stringify({ time, level, msg, ...fields })}\n`);
      const kv = Object.entries(fields)
        .filter(([, v]) => v !== undefined && v !== null)
        .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
        .join(' ');
      stream.write(`${time} ${level.toUpperCase().padEnd(5)} ${msg}${kv ? ` ${kv}` : ''}\n`);
    };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

export async function runCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      concurrency: { type: 'string' },
      grace: { type: 'string' },
      'fd-budget': { type: 'string' },
      'osv-db': { type: 'string' },
      'port-engine': { type: 'string' },
      'insecure-registry': { type: 'string', multiple: true },
      'pull-dir': { type: 'string' },
      'json-logs': { type: 'boolean' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(RUN_HELP);
    return EXIT.ok;
  }
  const concurrency = parseIntFlag('concurrency', values.concurrency, 1, 64) ?? 1;
  const grace = parseIntFlag('grace', values.grace, 0, 3_600) ?? 30;
  const fdBudget = parseIntFlag('fd-budget', values['fd-budget'], 1, 65_535) ?? DEFAULT_FD_BUDGET;
  const engine = (values['port-engine'] ?? 'native') as PortEngine;
  if (!PORT_ENGINES.includes(engine)) throw new UsageError(`--port-engine must be one of ${PORT_ENGINES.join(', ')}`);
  const path = values.config ?? defaultConfigPath(io.env);
  const config = await readConfig(path);
  const log = streamLogger(io.stderr, values['json-logs'] === true);
  const client = createWorkerClient({
    serverUrl: config.serverUrl,
    token: config.token,
    // The environment wins, so a rotated secret can be rolled out without editing the file.
    signingSecret: io.env.RAMPART_WORKER_SECRET?.trim() || config.signingSecret,
    userAgent: `rampart-worker/${WORKER_VERSION}`,
  });
  const osvDb = values['osv-db'] ?? defaultOsvDbPath(io.env);
  if (values['osv-db'] && !existsSync(osvDb))
    throw new UsageError(`--osv-db: ${osvDb} does not exist; build it with rampart-worker osv import <path>`);
  if (!existsSync(osvDb))
    log.warn('No advisory database: container scans are not leased (rampart-worker osv import <path> builds one)', {
      path: osvDb,
    });
  const container = existsSync(osvDb)
    ? { container: containerSettings(osvDb, values['insecure-registry'], values['pull-dir']) }
    : {};
  const scanners = builtinScanners({ port: { fdBudget, engine }, ...container });
  const agent = createAgent({
    client,
    scanners,
    concurrency,
    graceMs: grace * 1_000,
    log,
    signal: io.signal,
    version: WORKER_VERSION,
  });
  log.info('Worker started', {
    workerId: config.workerId,
    server: config.serverUrl,
    kinds: agent.kinds.join(','),
    concurrency,
    version: WORKER_VERSION,
  });
  await agent.start();
  log.info('Worker stopped', { ...agent.stats });
  return EXIT.ok;
}
