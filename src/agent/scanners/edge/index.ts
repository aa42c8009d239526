// The edge scanner as the agent and the CLI use it: a host's TLS ports (the scan's `ports`, default
// 443) checked for protocols, suites, certificate, HSTS and headers, graded A–F, plus one plain-HTTP
// request for the redirect to HTTPS. Only the target host is contacted, only on those ports and the
// plain-HTTP port (settings.httpPort; else the target URL's own port when it is an http:// URL; else 80).
import { WORKER_VERSION } from '../../version.ts';
import { hostOfTarget } from '../port/index.ts';
import { ScannerError, type Scanner, type ScanOutput, type ScanTask } from '../types.ts';
import { trustAnchors } from './certificate.ts';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_TIMEOUT_MS,
  EdgeScanError,
  scanEdge,
  type EdgePortResult,
  type EdgeResult,
} from './engine.ts';
import { EDGE_RULES, edgeFindings } from './findings.ts';

export {
  scanEdge,
  EdgeScanError,
  PROTOCOLS,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_CONCURRENCY,
  MAX_SUITE_ROUNDS,
  type EdgeResult,
  type EdgePortResult,
  type EdgeScanOptions,
  type ProtocolName,
  type SuiteList,
} from './engine.ts';
export { edgeFindings, EDGE_RULES, type EdgeRuleId } from './findings.ts';
export {
  gradePort,
  GRADES,
  HSTS_MIN_SECONDS,
  KEY_EXCHANGE_LIMITS,
  type Grade,
  type GradeCap,
  type GradeResult,
  type GradeInput,
} from './grade.ts';
export { issuerUrlAllowed, SMALL_CURVES, type KeyExchangeReport } from './extra-checks.ts';
export { analyzeCertificate, parsePemCertificates, trustAnchors, type CertificateReport } from './certificate.ts';
export {
  CIPHER_SUITES,
  TLS13_SUITES,
  cipherWeaknesses,
  type CipherSuite,
  type CipherWeakness,
} from './cipher-suites.ts';
export { clientHello, sslv2ClientHello, sendHello, parseAnswer, type HelloAnswer } from './hello.ts';
export { parseHsts, type HttpsReport, type RedirectReport, type HstsReport } from './http-checks.ts';

export interface EdgeScannerSettings {
  /** Extra trust anchors (PEM, one or many certificates per string): a private CA, or the tests' CA. */
  caCertificates?: string[];
  /** Per connection: connect, handshake or HTTP request (default 5,000 ms). */
  timeoutMs?: number;
  /** Where to test the HTTP→HTTPS redirect (default: an http:// target URL's port, else 80); null skips it. */
  httpPort?: number | null;
  /** Connections in flight at once, at most 8 (default 8). */
  concurrency?: number;
  /**
   * Fetch the intermediates a server leaves out from its certificate's issuer URL (AIA), as
   * browsers do (default true): only on the scanned host, or by host name on ports 80 and 443.
   */
  fetchIssuers?: boolean;
}

export interface EdgeTaskOptions {
  ports: number[];
  sni?: string;
}

const HOSTNAME_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** The scan's options (as stored by the server: `ports` default [443], optional `sni`), checked again here. */
export function edgeTaskOptions(options: Record<string, unknown>): EdgeTaskOptions {
  const ports = options.ports ?? [443];
  if (
    !Array.isArray(ports) ||
    ports.length === 0 ||
    ports.length > 16 ||
    !ports.every((p) => Number.isInteger(p) && p >= 1 && p <= 65_535)
  ) {
    throw new ScannerError('The edge scan option "ports" must be a list of 1 to 16 port numbers', false);
  }
  const sni = options.sni;
  if (sni !== undefined && (typeof sni !== 'string' || !HOSTNAME_RE.test(sni)))
    throw new ScannerError('The edge scan option "sni" must be a host name', false);
  return { ports: [...new Set(ports as number[])], ...(typeof sni === 'string' ? { sni: sni.toLowerCase() } : {}) };
}

/** The plain-HTTP port for a target: an http:// URL's own port, else 80. */
function httpPortOf(target: string): number {
  try {
    const url = new URL(target.trim());
    if (url.protocol === 'http:') return url.port ? Number(url.port) : 80;
  } catch {
    // A bare host name or address: the default port.
  }
  return 80;
}

export function createEdgeScanner(
  settings: EdgeScannerSettings = {},
): Scanner & { scan(task: ScanTask): Promise<EdgeResult> } {
  const anchors = trustAnchors(settings.caCertificates ?? []);
  async function scan(task: ScanTask): Promise<EdgeResult> {
    const { ports, sni } = edgeTaskOptions(task.options);
    const host = hostOfTarget(task.target);
    task.progress(0, `Checking TLS on ${host} port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}`);
    let result: EdgeResult;
    try {
      result = await scanEdge({
        host,
        ports,
        ...(sni ? { sni } : {}),
        anchors,
        timeoutMs: settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        concurrency: settings.concurrency ?? DEFAULT_CONCURRENCY,
        httpPort: settings.httpPort === undefined ? httpPortOf(task.target) : settings.httpPort,
        ...(settings.fetchIssuers === false ? { fetchIssuers: false } : {}),
        signal: task.signal,
        onProgress: (done, total, message) => task.progress((done / total) * 100, message),
        ...(task.egress ? { egress: task.egress } : {}),
      });
    } catch (e) {
      if (e instanceof EdgeScanError) throw new ScannerError(e.message, e.retryable, { cause: e });
      throw e;
    }
    return result;
  }
  return {
    kind: 'edge',
    tool: { name: 'rampart-edge', version: WORKER_VERSION },
    scan,
    async run(task) {
      const result = await scan(task);
      return { findings: edgeFindings(result), ...edgeOutcome(result), details: { ...result } };
    },
  };
}

const unreached = (p: EdgePortResult) => p.state === 'closed' || p.state === 'filtered';

/**
 * What an edge check covered, and whether it may close anything. A port that could not be
 * connected (refused or silent) says nothing about its TLS: when no port could be, the check is
 * inconclusive; when some could not, or the plain-HTTP port gave no answer, it is partial.
 */
export function edgeOutcome(r: EdgeResult): Pick<ScanOutput, 'inconclusive' | 'partial' | 'coverage'> {
  const why = (p: EdgePortResult) => `${p.port} ${p.state === 'closed' ? 'refused the connection' : 'did not answer'}`;
  const down = r.ports.filter(unreached);
  const reached = r.ports.filter((p) => !unreached(p)).map((p) => p.port);
  const redirect = r.httpRedirect;
  if (redirect && redirect.state !== 'no-answer') reached.push(Number(new URL(redirect.url).port || 80));
  const ports = [...new Set(reached)].sort((a, b) => a - b);
  const coverage = {
    hosts: [...new Set([r.host, r.address])],
    ports: ports.map((p) => [p, p] as [number, number]),
    rules: Object.keys(EDGE_RULES),
  };
  const where = r.address !== r.host ? `${r.host} (${r.address})` : r.host;
  if (down.length === r.ports.length)
    return {
      inconclusive: `no TLS port of ${where} could be connected: port ${down.map(why).join('; port ')}`,
      coverage,
    };
  const gaps = [
    ...down.map((p) => `port ${why(p)}`),
    ...(redirect?.state === 'no-answer'
      ? [`plain HTTP (${redirect.url}) gave no answer${redirect.error ? `: ${redirect.error}` : ''}`]
      : []),
  ];
  return { ...(gaps.length ? { partial: gaps.join('; ') } : {}), coverage };
}
