// What a read report may close (docs/findings-lifecycle.md): the report's coverage, as its
// importer recorded it, turned into the findings closing condition. Every format says what its
// tool looked at in its own way; what a format does not say is not covered, so an import never
// closes another tool's findings, a check class it did not run, or ports it did not probe.
import { closingCoverageOfReport, type ClosingCoverage } from '../findings/index.ts';
import type { ReportMetaJson } from './importers/index.ts';

/** Trivy result classes and scanners → the check classes its findings carry. */
const TRIVY_CLASSES: Record<string, string> = {
  'os-pkgs': 'vuln',
  'lang-pkgs': 'vuln',
  'scanner:vuln': 'vuln',
  config: 'misconfig',
  'scanner:misconfig': 'misconfig',
  secret: 'secret',
  'scanner:secret': 'secret',
  license: 'license',
  'license-file': 'license',
  'scanner:license': 'license',
};

/** nmap findings: the open-port and exposed-service rules, and the vulners script's CVEs when it ran. */
const NMAP_RULES = ['port.open.tcp.*', 'service.exposed.*'];

export function closingCoverageOfImport(meta: ReportMetaJson): ClosingCoverage {
  const c = meta.coverage;
  const named = c.tools.map((t) => t.key).filter((k): k is string => k !== null);
  const shared = c.tools.some((t) => t.key === null);
  const tools: (string | null)[] = [...new Set(named), ...(shared ? [null] : [])];
  switch (meta.format) {
    case 'native':
      return closingCoverageOfReport(meta.scanner, meta.scanCoverage);
    case 'trivy':
      // Vulnerabilities have shared ids (CVEs); misconfigurations, secrets and licenses are Trivy's own.
      return {
        tools: [null, 'trivy'],
        classes: [...new Set(c.classes.map((x) => TRIVY_CLASSES[x]).filter((x): x is string => !!x))],
      };
    case 'grype':
      return { tools: [null], classes: ['vuln'] };
    case 'nmap': {
      const tcp = c.ports.find((p) => p.protocol === 'tcp')?.ranges ?? [];
      const rules = c.classes.includes('script:vulners') ? [...NMAP_RULES, 'CVE-*'] : NMAP_RULES;
      // No scaninfo: which ports were probed is unknown, so no port finding is covered.
      return { tools: [null], rules, ports: tcp };
    }
    case 'sarif':
      // A driver that lists its rules ran those; one that lists none ran its whole namespace.
      return { tools, ...(c.rules.declared ? { rules: c.rules.ids } : {}) };
    case 'nessus': {
      const tcp = c.ports.find((p) => p.protocol === 'tcp')?.ranges;
      return { tools, rules: c.rules.ids, ...(tcp ? { ports: tcp } : {}) };
    }
    default:
      // nuclei, ZAP, OpenVAS, Burp, testssl.sh: the checks their report shows ran (with a result,
      // or passed); a check that reported nothing may not have run at all.
      return { tools, rules: c.rules.ids };
  }
}
