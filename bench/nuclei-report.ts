// A nuclei -jsonl report as the bench generates it: realistic lines (template metadata,
// classification, request/response, distinct matched-at), streamed in ~64 KiB chunks so that a
// report of any size is never held whole. Shared by bench:ingest and bench:ingest-parts.
import { Readable } from 'node:stream';

const SEVERITIES = ['info', 'info', 'info', 'low', 'low', 'medium', 'medium', 'high', 'critical'];
const TAGS = ['misconfig', 'exposure', 'cve', 'tech', 'headers', 'ssl', 'panel', 'xss', 'sqli', 'lfi'];

/** One nuclei -jsonl result; `i` makes matched-at (and so the fingerprint) distinct. */
export function nucleiLine(i: number): string {
  const t = i % 250;
  const severity = SEVERITIES[i % SEVERITIES.length]!;
  const host = `app${i % 20}.bench.example.test`;
  const path = `/api/v${(i % 3) + 1}/items/${i}`;
  const url = `https://${host}${path}`;
  const cve = t % 5 === 0 ? [`CVE-20${10 + (t % 14)}-${1000 + t}`] : undefined;
  return JSON.stringify({
    template: `http/vulnerabilities/bench-template-${t}.yaml`,
    'template-url': `https://cloud.projectdiscovery.io/public/bench-template-${t}`,
    'template-id': `bench-template-${t}`,
    'template-path': `/root/nuclei-templates/http/vulnerabilities/bench-template-${t}.yaml`,
    info: {
      name: `Bench template ${t} - ${TAGS[t % TAGS.length]} check`,
      author: ['pdteam', 'bench'],
      tags: [TAGS[t % TAGS.length], TAGS[(t + 3) % TAGS.length]],
      description: `Detects condition ${t} on exposed endpoints. The impact depends on the data the endpoint serves.\n`,
      reference: [`https://example.test/advisories/${t}`, `https://nvd.nist.gov/vuln/detail/${cve?.[0] ?? 'none'}`],
      severity,
      metadata: { 'max-request': 1, vendor: 'bench', product: `product-${t % 17}` },
      classification: {
        'cve-id': cve ?? null,
        'cwe-id': [`cwe-${200 + (t % 50)}`],
        'cvss-metrics': 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N',
        'cvss-score': 5.3,
      },
      remediation: 'Restrict access to the endpoint and update the component.',
    },
    'matcher-name': t % 4 === 0 ? `matcher-${t % 7}` : undefined,
    type: 'http',
    host: `https://${host}`,
    port: '443',
    scheme: 'https',
    url: `https://${host}`,
    path,
    'matched-at': url,
    'extracted-results': t % 6 === 0 ? [`token-${i}`] : undefined,
    request: `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36\r\nAccept: */*\r\nAccept-Encoding: gzip\r\n\r\n`,
    response: `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nServer: nginx\r\nContent-Length: 64\r\n\r\n{"id":${i},"name":"item ${i}","owner":"bench","visibility":"public"}`,
    ip: `198.51.100.${i % 250}`,
    timestamp: new Date(1_763_000_000_000 + i * 1000).toISOString(),
    'curl-command': `curl -X 'GET' -H 'Host: ${host}' '${url}'`,
    'matcher-status': true,
  });
}

/** The report as a stream of ~64 KiB chunks: generated on the fly, never held whole. */
export function reportStream(n: number): Readable {
  let i = 0;
  return new Readable({
    read() {
      const parts: string[] = [];
      let len = 0;
      while (i < n && len < 65_536) {
        const line = `${nucleiLine(i++)}\n`;
        parts.push(line);
        len += line.length;
      }
      this.push(parts.length ? Buffer.from(parts.join('')) : null);
    },
  });
}
