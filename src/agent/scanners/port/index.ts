// The port scanner as the agent and the CLI use it: ports from the lease (or the CLI's --ports),
// a TCP connect scan, service identification, and findings.
import { WORKER_VERSION } from '../../version.ts';
import { ScannerError, type Scanner, type ScanTask } from '../types.ts';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_FD_BUDGET,
  PortScanError,
  scanPorts,
  type PortScanResult,
} from './engine.ts';
import { portFindings } from './findings.ts';
import { scanPortsWithNmap } from './nmap-engine.ts';
import { PortSpecError, portsForLease, toRanges } from './ports.ts';

export {
  scanPorts,
  DEFAULT_FD_BUDGET,
  DEFAULT_CONNECT_TIMEOUT_MS,
  PortScanError,
  type OpenPort,
  type PortScanOptions,
  type PortScanResult,
} from './engine.ts';
export { portFindings } from './findings.ts';
export { parsePortSpec, portsForLease, topPorts, toRanges, PortSpecError } from './ports.ts';
export { identifyService, type ServiceInfo } from './probe.ts';
export { nmapArgs, nmapVersion, scanPortsWithNmap } from './nmap-engine.ts';

export const PORT_ENGINES = ['native', 'nmap'] as const;
export type PortEngine = (typeof PORT_ENGINES)[number];

export interface PortScannerSettings {
  /** Sockets open at once (default 512). */
  fdBudget?: number;
  /** Per-connect timeout when the scan's options give none (default 1,000 ms). */
  timeoutMs?: number;
  bannerWaitMs?: number;
  probeTimeoutMs?: number;
  /** Explicit ports (the CLI's --ports); a lease's options and chunk are used otherwise. */
  ports?: number[];
  /** Banner grabbing and service probes on open ports (default true). */
  identify?: boolean;
  /** The native TCP connect engine (default) or nmap (-sT, with -sV when identifying). */
  engine?: PortEngine;
  /** The nmap binary when engine is nmap (default `nmap` on PATH). */
  nmapBin?: string;
}

/** The host part of an asset target: a URL's host name, a bracketed IPv6 address unwrapped, or the target itself. */
export function hostOfTarget(target: string): string {
  const t = target.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    try {
      return new URL(t).hostname.replace(/^\[(.*)\]$/, '$1');
    } catch {
      throw new ScannerError(`The target ${JSON.stringify(t.slice(0, 200))} is not a valid URL`, false);
    }
  }
  const bare = t.replace(/^\[(.*)\]$/, '$1');
  if (!bare || /[\s/]/.test(bare) || bare.length > 253)
    throw new ScannerError(`The target ${JSON.stringify(t.slice(0, 200))} is not a host name or IP address`, false);
  return bare;
}

/**
 * Why a finished port scan says nothing, or undefined when it does: a scan in which no probe got
 * any answer (no open port, no refusal) saw neither the host nor its ports. A refused connect (a
 * TCP RST) is an answer: "host up, every port closed" is a conclusive result.
 */
export function portScanInconclusive(r: PortScanResult): string | undefined {
  if (r.scanned === 0 || r.open.length > 0 || r.closed > 0) return undefined;
  const where = r.address && r.address !== r.host ? `${r.host} (${r.address})` : r.host;
  return `no port of ${where} answered: all ${r.scanned} probes timed out or found the host unreachable (the host is down, or a firewall drops everything)`;
}

export function createPortScanner(
  settings: PortScannerSettings = {},
): Scanner & { scan(task: ScanTask): Promise<PortScanResult> } {
  function planOf(task: ScanTask) {
    try {
      return settings.ports ? { ports: settings.ports } : portsForLease(task.options, task.chunk);
    } catch (e) {
      if (e instanceof PortSpecError) throw new ScannerError(e.message, false);
      throw e;
    }
  }
  async function scan(task: ScanTask): Promise<PortScanResult> {
    const plan = planOf(task);
    const host = hostOfTarget(task.target);
    const total = plan.ports.length;
    task.progress(0, `Scanning ${total} TCP port${total === 1 ? '' : 's'} on ${host}`);
    const onProgress = ({ done, open }: { done: number; open: number }) =>
      task.progress((done / total) * 100, `${done}/${total} ports, ${open} open`);
    try {
      if (settings.engine === 'nmap') {
        return await scanPortsWithNmap({
          host,
          ports: plan.ports,
          ...('timeoutMs' in plan && plan.timeoutMs
            ? { timeoutMs: plan.timeoutMs }
            : settings.timeoutMs
              ? { timeoutMs: settings.timeoutMs }
              : {}),
          ...('rate' in plan && plan.rate ? { rate: plan.rate } : {}),
          identify: settings.identify ?? true,
          signal: task.signal,
          onProgress,
          ...(task.egress ? { egress: task.egress } : {}),
          ...(settings.nmapBin ? { bin: settings.nmapBin } : {}),
        });
      }
      return await scanPorts({
        host,
        ports: plan.ports,
        timeoutMs: ('timeoutMs' in plan && plan.timeoutMs) || settings.timeoutMs || DEFAULT_CONNECT_TIMEOUT_MS,
        fdBudget: settings.fdBudget ?? DEFAULT_FD_BUDGET,
        ...('rate' in plan && plan.rate ? { rate: plan.rate } : {}),
        identify: settings.identify ?? true,
        ...(settings.bannerWaitMs ? { bannerWaitMs: settings.bannerWaitMs } : {}),
        ...(settings.probeTimeoutMs ? { probeTimeoutMs: settings.probeTimeoutMs } : {}),
        signal: task.signal,
        onProgress,
        ...(task.egress ? { egress: task.egress } : {}),
      });
    } catch (e) {
      if (e instanceof PortScanError) throw new ScannerError(e.message, e.retryable, { cause: e });
      throw e;
    }
  }
  return {
    kind: 'port',
    tool:
      settings.engine === 'nmap'
        ? { name: 'rampart-port+nmap', version: WORKER_VERSION }
        : { name: 'rampart-port', version: WORKER_VERSION },
    scan,
    async run(task) {
      const result = await scan(task);
      const inconclusive = portScanInconclusive(result);
      const probed = [...new Set(planOf(task).ports)].sort((a, b) => a - b);
      return {
        findings: portFindings(result),
        ...(inconclusive ? { inconclusive } : {}),
        coverage: {
          hosts: [...new Set([result.host, result.address])],
          ports: toRanges(probed),
          rules: ['port.open.tcp.*', 'service.exposed.*'],
        },
        details: {
          host: result.host,
          address: result.address,
          scanned: result.scanned,
          closed: result.closed,
          filtered: result.filtered,
          open: result.open,
        },
      };
    },
  };
}
