// Findings of a port scan, shaped like the nmap importer's (src/workers/importers/nmap.ts) so a
// port seen by either scanner has the same identity: `port.open.tcp.<port>` (info) for every
// open port and `service.exposed.<service>` for a service that should rarely face a network.
import type { NormalizedFindingInput } from '../../../findings/index.ts';
import { riskyService } from '../../../findings/risky-services.ts';
import type { PortScanResult, OpenPort } from './engine.ts';

const productOf = (p: OpenPort) => [p.product, p.version].filter(Boolean).join(' ');

function evidence(p: OpenPort, address: string, host: string) {
  const service = p.service ?? 'unknown';
  const product = productOf(p);
  const data: Record<string, unknown> = {
    service,
    identifiedBy: p.identifiedBy,
    ...(address !== host ? { address } : {}),
    ...(p.product ? { product: p.product } : {}),
    ...(p.version ? { version: p.version } : {}),
    ...(p.tls ? { tls: true } : {}),
    ...(p.banner ? { banner: p.banner } : {}),
    ...p.data,
  };
  return {
    summary: `${p.port}/tcp open ${service}${product ? ` ${product}` : ''}`,
    data,
    ...(p.banner ? { snippet: p.banner } : {}),
  };
}

/** The findings for a scan's open ports (valid NormalizedFinding input). */
export function portFindings(result: Pick<PortScanResult, 'host' | 'address' | 'open'>): NormalizedFindingInput[] {
  const out: NormalizedFindingInput[] = [];
  for (const p of result.open) {
    const location = { host: result.host, port: p.port, protocol: 'tcp' };
    const service = p.service ?? 'unknown';
    const product = productOf(p);
    const ev = evidence(p, result.address, result.host);
    out.push({
      ruleId: `port.open.tcp.${p.port}`,
      title: `Open port ${p.port}/tcp (${service})`,
      severity: 'info',
      description: `Port ${p.port}/tcp on ${result.host} accepts connections${p.service ? `; the service looks like ${service}${product ? ` (${product})` : ''}` : ''}${p.identifiedBy === 'port' ? ', judged by the port number only' : ''}.`,
      location,
      evidence: ev,
    });
    const risky = riskyService(p.service, p.product ?? '', p.port);
    if (!risky) continue;
    out.push({
      ruleId: `service.exposed.${risky.key}`,
      title: `${risky.label} exposed on ${p.port}/tcp`,
      severity: risky.severity,
      description: `${risky.label} answers on ${result.host}:${p.port}/tcp${product ? ` (${product})` : ''}${p.identifiedBy === 'port' ? ' (recognised by its port number; the service did not identify itself)' : ''}. ${risky.why}`,
      location,
      remediation: risky.remediation,
      evidence: ev,
    });
  }
  return out;
}
